// How close to schedule the media clock runs on this machine, with its real timer: ticks over a
// few seconds, each tick's lateness against its absolute deadline (p50, p99, max) and the last
// tick's (drift would make it grow with the run). A measurement, so not a test: the tests check
// the schedule with simulated time (test/media/clock.test.ts), which load cannot change.
//   tsx bench/media-clock.ts [seconds=5]
import { MediaClock } from '../src/media/clock.ts';

const seconds = Math.max(1, Number(process.argv[2] ?? 5));
const clock = new MediaClock();
const lateness: number[] = [];
const started = process.hrtime.bigint();
clock.add((tick) => lateness.push(Number(process.hrtime.bigint() - started) / 1e6 - (tick + 1) * clock.periodMs));
clock.start();
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
clock.stop();
const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
const sorted = [...lateness].sort((a, b) => a - b);
const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
console.log(
  JSON.stringify({
    seconds: Number((elapsedMs / 1000).toFixed(3)),
    ticks: lateness.length,
    expectedTicks: Math.floor(elapsedMs / clock.periodMs),
    skippedTicks: clock.skippedTicks,
    latenessMs: { p50: Number(at(0.5).toFixed(2)), p99: Number(at(0.99).toFixed(2)), max: Number(at(1).toFixed(2)), last: Number((lateness.at(-1) ?? 0).toFixed(2)) },
  }),
);
