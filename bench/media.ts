// Per-frame cost of the media hot paths. The headline figure is one 20 ms
// bridge tick for three μ-law parties: decode every party, mix, and encode
// each party's "everyone but me" mix. Run: npx tsx bench/media.ts
// ns/frame is wall clock: on a shared machine a run preempted by other processes reads slower.
// "CPU" beside it is the process's user+sys time over the same loop (process.cpuUsage, which
// counts the collector's threads too), so it moves far less with the machine's load.
import { ulawDecode, ulawEncode } from '../src/media/g711.ts';
import { accumulate, clearSum, mixMinus } from '../src/media/mix.ts';
import { SAMPLES_PER_FRAME_16K, SAMPLES_PER_FRAME_8K } from '../src/media/frame.ts';
import { Downsampler16kTo8k, Upsampler8kTo16k } from '../src/media/resample.ts';
import { DtmfDetector } from '../src/media/dtmf.ts';
import { ToneGenerator } from '../src/media/tone-generator.ts';
import { parseToneList } from '../src/media/tones.ts';

const PARTIES = 3;
const MEASURED_ITERATIONS = 200_000;

const incoming = Array.from({ length: PARTIES }, (_, party) => {
  const frame = new Uint8Array(SAMPLES_PER_FRAME_8K);
  for (let i = 0; i < frame.length; i++) frame[i] = (i * 37 + party * 91) & 0xff;
  return frame;
});
const decoded = Array.from({ length: PARTIES }, () => new Int16Array(SAMPLES_PER_FRAME_8K));
const outgoing = Array.from({ length: PARTIES }, () => new Uint8Array(SAMPLES_PER_FRAME_8K));
const sum = new Int32Array(SAMPLES_PER_FRAME_8K);
const heard = new Int16Array(SAMPLES_PER_FRAME_8K);

function bridgeTick(): void {
  clearSum(sum);
  for (let party = 0; party < PARTIES; party++) {
    ulawDecode(incoming[party], decoded[party]);
    accumulate(sum, decoded[party]);
  }
  for (let party = 0; party < PARTIES; party++) {
    mixMinus(sum, decoded[party], heard);
    ulawEncode(heard, outgoing[party]);
  }
}

interface PerCall {
  readonly wallNs: number;
  readonly cpuNs: number;
}

function nsPerCall(work: () => void, iterations: number): PerCall {
  for (let i = 0; i < iterations / 10; i++) work();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) work();
  const wallNs = Number(process.hrtime.bigint() - started) / iterations;
  const cpu = process.cpuUsage(cpuBefore);
  return { wallNs, cpuNs: ((cpu.user + cpu.system) * 1000) / iterations };
}

function report(label: string, { wallNs, cpuNs }: PerCall): void {
  console.log(`${label.padEnd(48)} ${wallNs.toFixed(0).padStart(7)} ns/frame  (${((wallNs / 20e6) * 100).toFixed(4)}% of a 20 ms tick)  CPU ${cpuNs.toFixed(0).padStart(7)} ns/frame`);
}

report(`decode+mix+encode, ${PARTIES} μ-law parties`, nsPerCall(bridgeTick, MEASURED_ITERATIONS));

const narrow = new Int16Array(SAMPLES_PER_FRAME_8K).map((_, i) => Math.round(8000 * Math.sin(i / 3)));
const wide = new Int16Array(SAMPLES_PER_FRAME_16K);
const upsampler = new Upsampler8kTo16k();
const downsampler = new Downsampler16kTo8k();
report('resample 8 kHz → 16 kHz', nsPerCall(() => upsampler.process(narrow, wide), 50_000));
report('resample 16 kHz → 8 kHz', nsPerCall(() => downsampler.process(wide, narrow), 50_000));

const toneGenerator = new ToneGenerator(parseToneList('440+480/2000,0/4000')!, { rate: 8000 });
const toneFrame = new Int16Array(SAMPLES_PER_FRAME_8K);
report('tone generator, two frequencies, 8 kHz', nsPerCall(() => toneGenerator.fill(toneFrame), 50_000));

const dtmfDetector = new DtmfDetector({ rate: 8000 });
report('DTMF detector, 8 kHz', nsPerCall(() => dtmfDetector.process(narrow), 50_000));

// Keeps the work observable so it cannot be optimised away.
const checksum = outgoing.reduce((total, frame) => total + frame[7], 0) + wide[9] + narrow[3] + toneFrame[5];
console.log(`checksum ${checksum}`);
