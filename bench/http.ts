// HTTP benchmark: requests per second and latency of GET /ari/asterisk/ping and /info on Patchbay,
// beside a bare node:http server answering the same JSON, in the same run. Bounded in time.
// Usage: npm run bench [-- --seconds 5 --connections 20]
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '20' } } });
const duration = Math.min(Number(values.seconds), 30);
const connections = Math.min(Number(values.connections), 200);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;

async function startTarget(kind: 'patchbay' | 'bare'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./http-target.ts', import.meta.url).pathname, kind], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: String(chunk).trim(), child };
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string): Promise<Figures> {
  const result = await autocannon({ url, connections, duration, headers: { authorization: AUTH } });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

const rows: string[] = [];
for (const path of ['/ari/asterisk/ping', '/ari/asterisk/info']) {
  const figures: Record<string, Figures> = {};
  for (const kind of ['bare', 'patchbay'] as const) {
    const target = await startTarget(kind);
    await load(target.url + path); // warm-up run, discarded
    figures[kind] = await load(target.url + path);
    target.child.kill();
  }
  const ratio = figures.patchbay.rps / figures.bare.rps;
  for (const kind of ['bare', 'patchbay'] as const) {
    const f = figures[kind];
    rows.push(`${path.padEnd(20)} ${kind.padEnd(9)} ${f.rps.toFixed(0).padStart(8)} req/s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(3)} ms  errors ${f.errors}`);
  }
  rows.push(`${path.padEnd(20)} ratio     ${(ratio * 100).toFixed(1)}% of the bare server (target >= 80%)`);
}
process.stdout.write(`${connections} connections, ${duration} s per run\n${rows.join('\n')}\n`);
