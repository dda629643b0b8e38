// HTTP benchmark: requests per second and latency of GET /ari/asterisk/ping and /info on Patchbay,
// beside a bare node:http server answering the same JSON, in the same run. Bounded in time.
// req/s is wall clock and swings with the machine's load; "CPU/req" (the target process's user+sys
// CPU from /proc over the measured run, divided by the requests answered) does not, so on a shared
// machine its ratio is the fairer one. It counts all the process does meanwhile: with runs much
// shorter than the default 5 s, the server's start (its media workers load for 1-5 s) is still in it.
// Usage: npm run bench [-- --seconds 5 --connections 20]
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cpuSeconds } from './process-meter.ts';

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
  /** The target process's CPU per answered request, µs. */
  cpuUsPerRequest: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, pid: number): Promise<Figures> {
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({ url, connections, duration, headers: { authorization: AUTH } });
  const cpu = cpuSeconds(pid) - cpuBefore;
  return {
    rps: result.requests.average,
    cpuUsPerRequest: result.requests.total > 0 ? (cpu * 1e6) / result.requests.total : Number.NaN,
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
    await load(target.url + path, target.child.pid!); // warm-up run, discarded
    figures[kind] = await load(target.url + path, target.child.pid!);
    target.child.kill();
  }
  const ratio = figures.patchbay.rps / figures.bare.rps;
  const cpuRatio = figures.bare.cpuUsPerRequest / figures.patchbay.cpuUsPerRequest;
  for (const kind of ['bare', 'patchbay'] as const) {
    const f = figures[kind];
    rows.push(`${path.padEnd(20)} ${kind.padEnd(9)} ${f.rps.toFixed(0).padStart(8)} req/s  CPU/req ${f.cpuUsPerRequest.toFixed(1).padStart(5)} µs  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(3)} ms  errors ${f.errors}`);
  }
  rows.push(`${path.padEnd(20)} ratio     ${(ratio * 100).toFixed(1)}% of the bare server (target >= 80%); by CPU per request ${(cpuRatio * 100).toFixed(1)}%`);
}
process.stdout.write(`${connections} connections, ${duration} s per run\n${rows.join('\n')}\n`);
