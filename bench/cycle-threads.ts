// Where a target's CPU per originate cycle goes, by thread: the request-cpu target (server or floor)
// runs N cycles at 50 in flight while /proc/<pid>/task/*/stat is read before and after, and the CPU
// is summed by thread name (main, V8's platform workers — the collector's and compiler's helpers —,
// libuv's pool, worker threads). process.cpuUsage() counts them all; the floor has almost none.
// Usage: [PATCHBAY_BENCH_ROOT=$PWD/dist] [PATCHBAY_BENCH_SERVER_NODE_ARGS=--single-threaded-gc] npx tsx bench/cycle-threads.ts [--kind server|floor] [--cycles 4000] [--warmup 500]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { cycleClient } from './ari-cycle-client.ts';

const { values } = parseArgs({ options: { kind: { type: 'string', default: 'server' }, cycles: { type: 'string', default: '4000' }, warmup: { type: 'string', default: '500' } } });
const warmup = Math.min(Math.max(Number(values.warmup) || 500, 0), 200_000);
const cycles = Math.min(Math.max(Number(values.cycles) || 4000, 100), 100_000);
const kind = values.kind === 'floor' ? 'floor' : 'server';
const script = new URL('./request-cpu-target.ts', import.meta.url).pathname;
// PATCHBAY_BENCH_SERVER_NODE_ARGS: Node.js flags for the target (`--single-threaded-gc`), as request-cpu.ts takes them.
const nodeArgs = (process.env.PATCHBAY_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, kind], { stdio: ['pipe', 'pipe', 'inherit'] });
const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
const url = String(chunk).trim().split('\n')[0]!;

/** CPU µs by thread id, with the thread's name (USER_HZ 100: 10 ms steps). */
function threads(pid: number): Map<number, { name: string; us: number }> {
  const found = new Map<number, { name: string; us: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      found.set(Number(tid), { name: Number(tid) === pid ? 'main' : name, us: (Number(fields[11]) + Number(fields[12])) * 10_000 });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return found;
}

const client = await cycleClient(url, 50);
await client.run(warmup, 50);
const before = threads(child.pid!);
const { durations, seconds } = await client.run(cycles, 50);
const after = threads(child.pid!);
client.close();
const byName = new Map<string, number>();
for (const [tid, { name, us }] of after) byName.set(name, (byName.get(name) ?? 0) + us - (before.get(tid)?.us ?? 0));
let total = 0;
for (const us of byName.values()) total += us;
console.log(`${kind}: ${durations.length} cycles at ${(durations.length / seconds).toFixed(0)}/s, load ${os.loadavg()[0]!.toFixed(2)}; CPU per cycle ${(total / durations.length).toFixed(0)} µs, by thread:`);
for (const [name, us] of [...byName].sort((a, b) => b[1] - a[1])) if (us > 0) console.log(`  ${name.padEnd(16)} ${(us / durations.length).toFixed(1).padStart(7)} µs`);
// Node.js 20 names V8's platform workers and worker threads alike ('node'): each thread apart, busiest first.
const each = [...after].map(([tid, { name, us }]) => ({ tid, name, us: us - (before.get(tid)?.us ?? 0) })).filter((t) => t.us > 0).sort((a, b) => b.us - a.us);
console.log(`  threads with CPU: ${each.map((t) => `${t.name}:${(t.us / durations.length).toFixed(1)}`).join(', ')} (of ${after.size})`);
child.stdin!.end();
await once(child, 'exit');
