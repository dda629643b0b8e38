// Slow-consumer benchmark: what one event WebSocket that never reads costs the server.
// A real Patchbay runs in a child process; a client connects `/ari/events?app=sleeper`, stops
// reading, and user events of 500 KB each are raised for the app (up to 1,000). Prints how many
// were accepted before the server cut the socket, and the server's RSS growth (VmRSS from /proc).
// Usage: npm run bench:slow-consumer [-- --events 1000 --size 500000 --budget 16777216]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { runTarget } from './target.ts';

const { values } = parseArgs({
  options: {
    target: { type: 'boolean', default: false },
    events: { type: 'string', default: '1000' },
    size: { type: 'string', default: '500000' },
    budget: { type: 'string' },
  },
});

if (values.target) await runSleeperTarget();
else await runBench();

async function runSleeperTarget(): Promise<void> {
  await runTarget({
    http: { body_limit_bytes: 4 * 1024 * 1024 },
    ari: values.budget ? { websocket: { max_queued_bytes: Number(values.budget) } } : {},
  });
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

async function runBench(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--target', ...(values.budget ? ['--budget', values.budget] : [])], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [first] = (await once(child.stdout!, 'data')) as [Buffer];
  const url = first.toString().trim();
  const auth = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
  const socket = new WebSocket(`${url.replace('http', 'ws')}/ari/events?app=sleeper`, { headers: { authorization: auth } });
  await once(socket, 'open');
  (socket as unknown as { _socket: { pause(): void } })._socket.pause();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const before = rssOf(child.pid!);
  let peak = before;
  const body = JSON.stringify({ variables: { big: 'x'.repeat(Number(values.size)) } });
  const total = Math.min(Number(values.events), 5000);
  let accepted = 0;
  const started = Date.now();
  for (let i = 0; i < total && Date.now() - started < 120_000; i++) {
    const response = await fetch(`${url}/ari/events/user/flood?application=sleeper`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body,
    });
    if (response.status !== 204) break;
    accepted++;
    peak = Math.max(peak, rssOf(child.pid!));
  }
  const after = rssOf(child.pid!);
  const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
  console.log(`events of ${values.size} bytes accepted before the cut: ${accepted} of ${total}`);
  console.log(`server RSS: before ${mb(before)} MB, peak ${mb(peak)} MB (+${mb(peak - before)} MB), after ${mb(after)} MB`);
  socket.terminate();
  child.stdin!.end();
  await once(child, 'exit');
}
