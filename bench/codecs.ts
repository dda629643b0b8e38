// CPU per call of each codec and of each transcoded pair. A two-party call costs, every 20 ms and
// in each direction, one decode and one encode: leg A's payload is decoded into the core's linear
// audio, brought to leg B's rate and encoded for B (and the same back). The figures are µs per
// 20 ms tick for the whole call (both directions) and the calls one core could carry at that cost.
// The Opus library candidates are measured too when installed next to the project (only
// @evan/opus is a dependency): `npm install --no-save opusscript @discordjs/opus` to compare.
// Run: npm run bench:codecs
import { createRequire } from 'node:module';
import { samplesPerFrame, type SampleRate } from '../src/media/frame.ts';
import { createResampler, type Resampler } from '../src/media/resample.ts';
import { createCoder, maxFrameBytes, type StreamCoder } from '../src/media/stream-coder.ts';

const CODECS = ['ulaw', 'alaw', 'slin', 'g722', 'opus'] as const;
const TICK_US = 20_000;

/** Speech-like test audio: two tones and some noise, at `rate`. */
function speech(rate: number, frames: number): Int16Array {
  const samples = new Int16Array(samplesPerFrame(rate) * frames);
  let seed = 1;
  for (let i = 0; i < samples.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * 310 * i) / rate) + 3000 * Math.sin((2 * Math.PI * 2300 * i) / rate) + ((seed >> 16) % 1500));
  }
  return samples;
}

/** One direction of a call: decode what leg `from` sent, bring it to leg `to`'s rate, encode it for `to`. */
class Direction {
  readonly #from: StreamCoder;
  readonly #to: StreamCoder;
  readonly #packets: Uint8Array[] = [];
  readonly #lengths: number[] = [];
  readonly #decoded: Int16Array;
  readonly #resampler: Resampler;
  readonly #resampled: Int16Array;
  readonly #out: Uint8Array;
  #next = 0;

  constructor(from: string, to: string) {
    // The far end's encoder made these packets; only our decode and encode are measured.
    const source = createCoder(from)!;
    this.#from = createCoder(from)!;
    this.#to = createCoder(to)!;
    const frame = samplesPerFrame(source.rate);
    const audio = speech(source.rate, 50);
    for (let start = 0; start < audio.length; start += frame) {
      const packet = new Uint8Array(maxFrameBytes(source));
      this.#lengths.push(source.encoder.encode(audio.subarray(start, start + frame), frame, packet, 0));
      this.#packets.push(packet);
    }
    this.#decoded = new Int16Array(this.#from.decoder.maxSamples(1275));
    this.#resampler = createResampler(this.#from.rate, this.#to.rate);
    this.#resampled = new Int16Array(samplesPerFrame(this.#to.rate));
    this.#out = new Uint8Array(maxFrameBytes(this.#to));
  }

  tick(): void {
    const index = this.#next;
    this.#next = (index + 1) % this.#packets.length;
    const count = this.#from.decoder.decode(this.#packets[index], 0, this.#lengths[index], this.#decoded);
    const samples = this.#from.rate === this.#to.rate ? this.#decoded : this.#resampled;
    if (samples === this.#resampled) this.#resampler.process(this.#decoded.subarray(0, count), this.#resampled);
    this.#to.encoder.encode(samples, samplesPerFrame(this.#to.rate), this.#out, 0);
  }
}

/**
 * CPU time (user + system, µs) per call of `work`: CPU rather than wall time, so a machine busy
 * with other work slows the run without inflating the figures much.
 */
function microsecondsPerTick(work: () => void, iterations: number): number {
  for (let i = 0; i < Math.ceil(iterations / 10); i++) work();
  const started = process.cpuUsage();
  for (let i = 0; i < iterations; i++) work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / iterations;
}

function report(label: string, us: number): void {
  console.log(`${label.padEnd(34)} ${us.toFixed(1).padStart(8)} µs/frame   ${Math.floor(TICK_US / us).toString().padStart(7)} calls per core`);
}

function iterationsFor(codecs: readonly string[]): number {
  return codecs.includes('opus') ? 3000 : 30000;
}

console.log('Each codec, one call (encode + decode per 20 ms, both directions of the call coded with it):');
for (const name of CODECS) {
  const there = new Direction(name, name);
  const back = new Direction(name, name);
  report(`  ${name}`, microsecondsPerTick(() => (there.tick(), back.tick()), iterationsFor([name])));
}

console.log('\nTranscoded pairs through linear audio (decode → resample → encode, both directions):');
for (let a = 0; a < CODECS.length; a++) {
  for (let b = a + 1; b < CODECS.length; b++) {
    const there = new Direction(CODECS[a], CODECS[b]);
    const back = new Direction(CODECS[b], CODECS[a]);
    report(`  ${CODECS[a]} <-> ${CODECS[b]}`, microsecondsPerTick(() => (there.tick(), back.tick()), iterationsFor([CODECS[a], CODECS[b]])));
  }
}

// The Opus libraries considered, each encoding and decoding 20 ms of mono 48 kHz audio with the
// `audio` application, the one @discordjs/opus's constructor gives (calls use `voip`, which costs
// about three times as much in libopus whichever binding runs it).
console.log('\nOpus library candidates (encode + decode of one 20 ms mono frame at 48 kHz, application audio):');
const require = createRequire(import.meta.url);
const pcm48 = speech(48000, 1);
const pcmBuffer = Buffer.from(pcm48.buffer, pcm48.byteOffset, pcm48.byteLength);
const candidates: Array<{ name: string; make: () => () => void }> = [
  {
    name: '@evan/opus (N-API, dependency)',
    make: () => {
      const { Encoder, Decoder } = require('@evan/opus') as typeof import('@evan/opus');
      const encoder = new Encoder({ channels: 1, sample_rate: 48000, application: 'audio' });
      const decoder = new Decoder({ channels: 1, sample_rate: 48000 });
      return () => void decoder.decode(encoder.encode(pcm48));
    },
  },
  {
    name: 'opusscript (WebAssembly)',
    make: () => {
      const OpusScript = require('opusscript') as new (rate: number, channels: number, application: number) => { encode(b: Buffer, n: number): Buffer; decode(b: Buffer): Buffer };
      const coder = new OpusScript(48000, 1, 2049);
      return () => void coder.decode(coder.encode(pcmBuffer, 960));
    },
  },
  {
    name: '@discordjs/opus (native per ABI)',
    make: () => {
      const { OpusEncoder } = require('@discordjs/opus') as { OpusEncoder: new (rate: number, channels: number) => { encode(b: Buffer): Buffer; decode(b: Buffer): Buffer } };
      const coder = new OpusEncoder(48000, 1);
      return () => void coder.decode(coder.encode(pcmBuffer));
    },
  },
];
for (const candidate of candidates) {
  let work: () => void;
  try {
    work = candidate.make();
  } catch (error) {
    console.log(`  ${candidate.name.padEnd(32)} not available here (${(error as Error).message.split('\n')[0]})`);
    continue;
  }
  report(`  ${candidate.name}`, microsecondsPerTick(work, 3000));
}
