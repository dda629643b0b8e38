// Widening Local loop probe (issue 21 item 1): a real Patchbay (src/main.ts in a child process)
// with `exten => loop2,1,Dial(Local/loop2@default&Local/loop2@default)`, one originate into it,
// then for --seconds: GET /health every 200 ms (latency, or "no answer" after 2 s) and the live
// channel count from the server's log-free /ari/channels; then SIGTERM and the time to exit.
// Bounded: every request times out, the child is SIGKILLed 30 s after SIGTERM at the latest.
// Usage: npx tsx bench/local-loop.ts [--seconds 15] [--max-channels N] [--descendants N]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    'max-channels': { type: 'string' },
    descendants: { type: 'string' },
  },
});
const seconds = Math.min(Math.max(Number(values.seconds) || 15, 1), 120);
const dir = mkdtempSync(join(os.tmpdir(), 'patchbay-loop-'));
writeFileSync(join(dir, 'extensions.conf'), '[default]\nexten => loop2,1,Dial(Local/loop2@default&Local/loop2@default)\nexten => wait,1,Wait(600)\n');
const extra = [
  values['max-channels'] !== undefined ? `max_channels: ${Number(values['max-channels'])}` : '',
  values.descendants !== undefined ? `local_max_descendants: ${Number(values.descendants)}` : '',
].join('\n');
writeFileSync(
  join(dir, 'patchbay.yaml'),
  `http: { port: 0, bind: 127.0.0.1 }\nsip: { port: 0 }\ndirs: { data: ${JSON.stringify(dir)} }\ndialplan: { file: ${JSON.stringify(join(dir, 'extensions.conf'))} }\nlogging: { console: true, level: info, format: json }\n${extra}\n`,
);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--config', join(dir, 'patchbay.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
const url = await new Promise<string>((resolve, reject) => {
  let buffered = '';
  const timer = setTimeout(() => reject(new Error('the server did not start')), 30_000);
  const look = (chunk: Buffer): void => {
    buffered += chunk;
    const m = /"url":"(http:\/\/[^"]+)\/ari"/.exec(buffered);
    if (m) {
      clearTimeout(timer);
      resolve(m[1]);
    }
    if (buffered.length > 1e6) buffered = buffered.slice(-1e5);
  };
  child.stdout.on('data', look);
  child.stderr.on('data', look);
});

async function timed(path: string, init: RequestInit = {}): Promise<{ ms: number; status: number | 'no answer'; body?: string }> {
  const began = performance.now();
  try {
    const response = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(2000) });
    const body = await response.text();
    return { ms: performance.now() - began, status: response.status, body };
  } catch {
    return { ms: performance.now() - began, status: 'no answer' };
  }
}

const origination = await timed('/ari/channels?endpoint=Local/loop2@default&extension=wait&context=default', { method: 'POST', headers: { authorization: AUTH } });
console.log(`originate: ${origination.status} in ${origination.ms.toFixed(0)} ms`);
const latencies: number[] = [];
let unanswered = 0;
let peakChannels = 0;
const end = Date.now() + seconds * 1000;
while (Date.now() < end) {
  const health = await timed('/health');
  if (health.status === 200) latencies.push(health.ms);
  else unanswered++;
  const list = await timed('/ari/channels', { headers: { authorization: AUTH } });
  if (list.status === 200 && list.body) peakChannels = Math.max(peakChannels, (JSON.parse(list.body) as unknown[]).length);
  await new Promise((resolve) => setTimeout(resolve, 200));
}
latencies.sort((a, b) => a - b);
const pct = (q: number): string => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(1) : '-');
console.log(`/health over ${seconds} s: ${latencies.length} answered (p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${pct(1)} ms), ${unanswered} unanswered (2 s timeout)`);
console.log(`peak live channels seen: ${peakChannels}`);
const after = await timed('/ari/channels', { headers: { authorization: AUTH } });
console.log(`live channels at the end: ${after.body ? (JSON.parse(after.body) as unknown[]).length : after.status}`);
const termAt = performance.now();
child.kill('SIGTERM');
const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
clearTimeout(killer);
console.log(`SIGTERM → exit in ${(performance.now() - termAt).toFixed(0)} ms (code ${code}, signal ${signal})`);
rmSync(dir, { recursive: true, force: true });
