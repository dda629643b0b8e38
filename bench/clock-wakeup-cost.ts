// What one on-time wake-up of the media clock costs its own code: the timer callback with one tick
// due, the tick (one listener that does nothing) and the next timer set, called back to back from a
// loop (the clock's private timer callback, so no waiting and nothing of the event loop is timed).
// Prints CPU time and bytes allocated per wake-up (V8's sampling heap profiler, garbage included).
// To compare two versions of the clock in one sitting, point --module at another copy of clock.ts
// (e.g. `git show main:src/media/clock.ts`, its `./frame.ts` import made absolute), alternating runs.
// Usage: npx tsx bench/clock-wakeup-cost.ts [--module path/to/clock.ts] [--wakeups 200000 --rounds 5] [--lateness]
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { MediaClock } from '../src/media/clock.ts';

const { values } = parseArgs({
  options: {
    module: { type: 'string', default: '' },
    wakeups: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '5' },
    // The server listens to each wake-up's lateness (its metrics): measure with a listener too.
    lateness: { type: 'boolean', default: false },
  },
});
const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const WAKEUPS = clamp(values.wakeups, 1000, 10_000_000);
const ROUNDS = clamp(values.rounds, 1, 50);
const modulePath = values.module ? resolve(values.module) : new URL('../src/media/clock.ts', import.meta.url).pathname;
const { MediaClock: Clock } = (await import(pathToFileURL(modulePath).href)) as { MediaClock: typeof MediaClock };

/** The clock's private state and timer callback, reached for the measurement only. */
interface ClockInternals {
  nextDueNs: bigint;
  onTimer(): void;
}

const clock = new Clock();
let ticks = 0;
clock.add(() => {
  ticks++;
});
let latenessSum = 0;
if (values.lateness) {
  clock.onLateness = (seconds) => {
    latenessSum += seconds;
  };
}
clock.start();
const internals = clock as unknown as ClockInternals;

/** `count` wake-ups, each with exactly one tick due (the deadline just passed: an on-time timer). */
function wakeUps(count: number): void {
  for (let i = 0; i < count; i++) {
    internals.nextDueNs = process.hrtime.bigint();
    internals.onTimer();
  }
}

wakeUps(WAKEUPS); // warm-up: optimised code for both builds
const cpuNs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const before = process.cpuUsage();
  wakeUps(WAKEUPS);
  const used = process.cpuUsage(before);
  cpuNs.push(((used.user + used.system) * 1000) / WAKEUPS);
}

const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
wakeUps(WAKEUPS);
const { profile } = await session.post('HeapProfiler.stopSampling');
session.disconnect();
let sampledBytes = 0;
const pending = [profile.head];
for (let node = pending.pop(); node; node = pending.pop()) {
  sampledBytes += node.selfSize;
  pending.push(...node.children);
}
clock.stop();

const sorted = [...cpuNs].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    module: modulePath,
    wakeups: WAKEUPS,
    lateness: values.lateness && latenessSum >= 0,
    rounds: ROUNDS,
    ticksRun: ticks,
    cpuNsPerWakeup: { median: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0), min: Math.round(sorted[0] ?? 0), max: Math.round(sorted.at(-1) ?? 0) },
    bytesPerWakeup: Math.round(sampledBytes / WAKEUPS),
    load: (await import('node:os')).loadavg().map((value) => Number(value.toFixed(1))),
  }),
);
