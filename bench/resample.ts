// Per-frame cost of rate conversion between every pair of engine rates: one 20 ms frame in,
// through a resampler that keeps its state across frames as a stream's does. The best of a few
// rounds is printed, so other load on the machine inflates the figures less.
// Run: npm run bench:resample
import { SAMPLE_RATES, samplesPerFrame } from '../src/media/frame.ts';
import { createResampler } from '../src/media/resample.ts';

const MEASURED_FRAMES = 5_000;
const ROUNDS = 5;

function nsPerFrame(work: () => void): number {
  for (let i = 0; i < MEASURED_FRAMES / 10; i++) work();
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < MEASURED_FRAMES; i++) work();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / MEASURED_FRAMES);
  }
  return best;
}

for (const from of SAMPLE_RATES) {
  for (const to of SAMPLE_RATES) {
    if (from === to) continue;
    const resampler = createResampler(from, to);
    const input = new Int16Array(samplesPerFrame(from)).map((_, i) => Math.round(8000 * Math.sin(i / 3)));
    const output = new Int16Array(samplesPerFrame(to));
    const ns = nsPerFrame(() => resampler.process(input, output));
    const label = `${from / 1000} kHz → ${to / 1000} kHz (${resampler.constructor.name})`;
    console.log(`${label.padEnd(48)} ${ns.toFixed(0).padStart(7)} ns/frame  (${((ns / 20e6) * 100).toFixed(3)}% of a 20 ms tick)`);
  }
}
