// On-CPU profile of one bench target over the measured pings only (issue 25's ping gap): starts
// bench/request-cpu-target.ts (floor, hosted or server) under --perf-basic-prof, warms it up, then
// attaches `perf record -e cpu-clock` (a software clock: counts CPU time, not the wall time a
// --cpu-prof sampler counts, so other processes' load does not land in the figures) for the
// measured pings, and prints its self time per symbol in µs per ping.
// Usage: npx tsx bench/ping-perf.ts --kind server|floor|hosted [--pings 100000 --warmup 5000] [--server dist] [--top 60]
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values } = parseArgs({ options: { kind: { type: 'string', default: 'server' }, pings: { type: 'string', default: '100000' }, warmup: { type: 'string', default: '5000' }, server: { type: 'string' }, top: { type: 'string', default: '60' } } });
const kind = ['server', 'floor', 'hosted'].includes(values.kind) ? values.kind : 'server';
const pings = Math.min(Math.max(Number(values.pings) || 1000, 1000), 2_000_000);
const top = Math.min(Math.max(Number(values.top) || 60, 1), 500);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const env: NodeJS.ProcessEnv = { ...process.env };
if (values.server) env.PATCHBAY_BENCH_ROOT = resolve(values.server);
const script = new URL('./request-cpu-target.ts', import.meta.url).pathname;
const child = spawn(process.execPath, ['--perf-basic-prof', '--expose-gc', '--import', 'tsx', script, kind], { stdio: ['pipe', 'pipe', 'inherit'], env });
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const next = async (): Promise<string> => String((await lines.next()).value);
const url = `${await next()}/ari/asterisk/ping`;
const command = async (name: string): Promise<{ cpuUs: number }> => {
  child.stdin!.write(`${name}\n`);
  return JSON.parse(await next()) as { cpuUs: number };
};
// request-cpu.ts's order: a collection, idle, the warm-up, then the measured pings.
await command('gc');
await new Promise((done) => setTimeout(done, 3000));
await autocannon({ url, connections: 20, amount: Math.max(Number(values.warmup) || 0, 0), headers: { authorization: AUTH } });
const dir = mkdtempSync(join(os.tmpdir(), 'ping-perf-'));
const data = join(dir, 'perf.data');
const perf = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '10000', '-p', String(child.pid), '-o', data], { stdio: 'inherit' });
await new Promise((done) => setTimeout(done, 500));
const before = await command('stats');
const result = await autocannon({ url, connections: 20, amount: pings, headers: { authorization: AUTH }, sampleInt: 10 });
const after = await command('stats');
perf.kill('SIGINT');
await once(perf, 'exit');
const total = result.requests.total;
console.log(`${kind}: ${((after.cpuUs - before.cpuUs) / total).toFixed(2)} µs CPU per ping (process.cpuUsage), ${total} pings, load ${os.loadavg()[0]!.toFixed(2)}`);
const report = execFileSync('perf', ['report', '-i', data, '--stdio', '--no-children', '--sort', 'sym', '-F', 'overhead,sample,sym', '--percent-limit', '0'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
// Samples at 10 kHz: 100 µs each; the pings' window holds the stats commands too (negligible).
const rows: { samples: number; symbol: string }[] = [];
for (const line of report.split('\n')) {
  const match = /^\s+([\d.]+)%\s+(\d+)\s+(.*)$/.exec(line);
  if (match) rows.push({ samples: Number(match[2]), symbol: match[3]!.replace(/\[\.\] |\[k\] /, '').trim() });
}
rows.sort((a, b) => b.samples - a.samples);
// By thread: the main thread is the request path; the others are V8's helpers (GC, compilation) and,
// in a server, its media workers and the password thread.
const byThread = new Map<string, number>();
let mainKernel = 0;
for (const line of execFileSync('perf', ['script', '-i', data, '-F', 'tid,ip,dso'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }).split('\n')) {
  const [id, , dso = ''] = line.trim().split(/\s+/);
  if (!id) continue;
  byThread.set(id, (byThread.get(id) ?? 0) + 1);
  // The kernel's part (socket reads and writes, scheduling): it moves with the machine's load.
  if (id === String(child.pid) && dso.includes('kernel')) mainKernel++;
}
const mainSamples = byThread.get(String(child.pid)) ?? 0;
const otherSamples = [...byThread.values()].reduce((sum, count) => sum + count, 0) - mainSamples;
const perPing = (samples: number): string => ((samples * 100) / total).toFixed(2);
console.log(`main thread ${perPing(mainSamples)} µs per ping (user space ${perPing(mainSamples - mainKernel)}, kernel ${perPing(mainKernel)}), other threads ${perPing(otherSamples)} (${byThread.size - 1} threads)`);
const sampled = rows.reduce((sum, row) => sum + row.samples, 0);
console.log(`perf: ${((sampled * 100) / total).toFixed(2)} µs sampled per ping; by symbol (self):`);
for (const { samples, symbol } of rows.slice(0, top)) console.log(`${((samples * 100) / total).toFixed(3).padStart(7)} µs  ${symbol.slice(0, 150)}`);
if (process.env.PING_PERF_KEEP) console.log(`perf data kept: ${data}`);
child.stdin!.end();
await once(child, 'exit');
if (!process.env.PING_PERF_KEEP) rmSync(dir, { recursive: true, force: true });
