// Instructions per ping (issue 25's ping gap), counted by valgrind's callgrind over the measured pings
// only: unlike CPU time, an instruction count does not move with the machine's load, so changes of a
// few tens of nanoseconds on the request path show on a busy machine. Starts
// bench/request-cpu-target.ts (floor, hosted or server) under `valgrind --tool=callgrind
// --instr-atstart=no`, warms it up, switches instrumentation on for the measured pings
// (callgrind_control -i on/off) and prints instructions (Ir) per ping, all threads of the process,
// user space only (the kernel's socket work is not counted). Valgrind runs every thread in turn and
// the JIT's code under its own translation, so the target is ~50× slower: use a few thousand pings.
// Caveat (docs/performance.md, fifth pass on ping): a mark-compact or recompilation landing in the
// window still moves one build's count by up to 10 % between runs; compare several runs.
// Usage: npx tsx bench/ping-instructions.ts --kind server|floor|hosted [--server dist] [--pings 5000 --warmup 5000]
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values } = parseArgs({ options: { kind: { type: 'string', default: 'server' }, pings: { type: 'string', default: '5000' }, warmup: { type: 'string', default: '5000' }, server: { type: 'string' } } });
const kind = ['server', 'floor', 'hosted'].includes(values.kind) ? values.kind : 'server';
const pings = Math.min(Math.max(Number(values.pings) || 1000, 500), 200_000);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const env: NodeJS.ProcessEnv = { ...process.env };
if (values.server) env.PATCHBAY_BENCH_ROOT = resolve(values.server);
const dir = mkdtempSync(join(os.tmpdir(), 'ping-instructions-'));
const script = new URL('./request-cpu-target.ts', import.meta.url).pathname;
const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, '--dump-line=no', process.execPath, '--expose-gc', '--import', 'tsx', script, kind], { stdio: ['pipe', 'pipe', 'ignore'], env });
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const next = async (): Promise<string> => String((await lines.next()).value);
const url = `${await next()}/ari/asterisk/ping`;
const command = async (name: string): Promise<void> => {
  child.stdin!.write(`${name}\n`);
  await next();
};
await command('gc');
await new Promise((done) => setTimeout(done, 3000));
await autocannon({ url, connections: 20, amount: Math.max(Number(values.warmup) || 0, 0), headers: { authorization: AUTH } });
execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' });
const result = await autocannon({ url, connections: 20, amount: pings, headers: { authorization: AUTH }, sampleInt: 10 });
execFileSync('callgrind_control', ['-i', 'off', String(child.pid)], { stdio: 'ignore' });
child.stdin!.end();
await once(child, 'exit');
// One file per thread may be written (callgrind.out, callgrind.out-02 …): every thread's counts are added.
// V8's optimising compiler and its garbage collector are counted apart: when they run inside the
// window is a matter of timing (valgrind slows the threads unevenly), not of the request path.
const BACKGROUND = /v8::internal::(compiler|maglev|baseline|Compiler|Parser|Scanner|Bytecode|interpreter::|.*Marking|.*Sweep|Scavenge|.*Evacuat|Heap::|MemoryAllocator|.*GC|Zone|.*Compile|OptimizingCompile|ConcurrentMarking|MarkCompact|.*Remembered|PagedSpace|SemiSpace)|GraphReducer|ProcessStrongHeapObject|ZoneList/;
let instructions = 0;
let background = 0;
const top: [string, number][] = [];
for (const name of readdirSync(dir)) {
  const file = join(dir, name);
  const totals = /^totals: (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (totals) instructions += Number(totals[1]);
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  for (const line of annotated.split('\n')) {
    const match = /^\s*([\d,]+) \([^)]*\)\s+(.*)$/.exec(line);
    if (!match || match[2]!.includes('PROGRAM TOTALS')) continue;
    const count = Number(match[1]!.replaceAll(',', ''));
    if (BACKGROUND.test(match[2]!)) background += count;
    else top.push([match[2]!, count]);
  }
}
const total = result.requests.total;
console.log(`${kind}: ${(instructions / total).toFixed(0)} instructions per ping, ${((instructions - background) / total).toFixed(0)} without V8's compiler and GC (${total} pings, ${result.non2xx} non-2xx, ${result.errors} errors; load ${os.loadavg()[0]!.toFixed(2)})`);
if (process.env.PING_INSTRUCTIONS_TOP) for (const [name, count] of top.sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PING_INSTRUCTIONS_TOP))) console.log(`${(count / total).toFixed(0).padStart(7)}  ${name.slice(0, 140)}`);
if (process.env.PING_INSTRUCTIONS_KEEP) console.log(`kept ${dir}`);
else rmSync(dir, { recursive: true, force: true });
