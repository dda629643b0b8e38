import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { G722Decoder, G722Encoder } from '../../src/media/g722.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { createCoder } from '../../src/media/stream-coder.ts';
import { sine, toDb } from './signals.ts';

const RATE = 16000;
const FRAME = 320;

/** Codes `input` 20 ms at a time through a fresh encoder and decoder, as a call would. */
function roundTrip(input: Int16Array): { bytes: Uint8Array; output: Int16Array } {
  const encoder = new G722Encoder();
  const decoder = new G722Decoder();
  const bytes = new Uint8Array(input.length / 2);
  const output = new Int16Array(input.length);
  for (let start = 0; start < input.length; start += FRAME) {
    const written = encoder.encode(input.subarray(start, start + FRAME), FRAME, bytes, start / 2);
    assert.equal(written, FRAME / 2, 'one byte per two samples');
    const decoded = decoder.decode(bytes, start / 2, start / 2 + written, output.subarray(start));
    assert.equal(decoded, FRAME);
  }
  return { bytes, output };
}

/** The best signal-to-noise ratio of `output` against `input` over the codec's delays, in dB. */
function snrDb(input: Int16Array, output: Int16Array): number {
  let best = -Infinity;
  for (let delay = 0; delay < 48; delay++) {
    let signal = 0;
    let noise = 0;
    for (let i = 2000; i < input.length - 100; i++) {
      signal += input[i] * input[i];
      noise += (input[i] - output[i + delay]) ** 2;
    }
    best = Math.max(best, toDb(signal / noise));
  }
  return best;
}

/**
 * A test signal made of integers only (noise from a linear congruential generator, a square wave, a
 * triangle), so any implementation can produce the very same samples.
 */
function integerSignal(count: number): Int16Array {
  const samples = new Int16Array(count);
  let state = 12345;
  for (let i = 0; i < count; i++) {
    state = Number((BigInt(state) * 1103515245n + 12345n) % 2147483648n);
    const noise = ((state >> 16) % 8192) - 4096;
    const square = Math.floor(i / 9) % 2 ? 6000 : -6000;
    const triangle = ((i * 37) % 16384) - 8192;
    samples[i] = noise + square + triangle;
  }
  return samples;
}

const sha256 = (data: Uint8Array | Int16Array) => createHash('sha256').update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest('hex');

test('G.722 round trip keeps a 6 kHz tone: the upper sub-band carries it, 20 dB above the coding noise', () => {
  const input = sine(6000, RATE, RATE, 10000);
  const { output } = roundTrip(input);
  const tone = goertzelPower(output, 6000, RATE, 4000, 16000);
  const total = meanSquare(output, 4000, 16000);
  assert.ok(tone / total > 0.95, `6 kHz is ${((100 * tone) / total).toFixed(1)} % of what comes out`);
  assert.ok(Math.abs(toDb(tone / meanSquare(input, 4000, 16000))) < 1, 'the level is kept within 1 dB');
  assert.ok(snrDb(input, output) > 20, `SNR ${snrDb(input, output).toFixed(1)} dB`);
});

test('G.722 round trip of a 1 kHz tone: lower sub-band SNR above 40 dB', () => {
  const input = sine(1000, RATE, RATE, 10000);
  const { output } = roundTrip(input);
  const snr = snrDb(input, output);
  assert.ok(snr > 40, `SNR ${snr.toFixed(1)} dB`);
});

test('G.722 is bit-exact with the ITU-conformant 16-bit implementations (spandsp, which baresip uses) on a known signal', () => {
  // Published facts checked against libspandsp 0.0.6's g722_encode/g722_decode at 64 kbit/s on the
  // same integer signal: the SHA-256 of the whole bit stream, its first bytes, and of the decoded audio.
  const input = integerSignal(RATE);
  const { bytes } = roundTrip(input);
  assert.equal(Buffer.from(bytes.subarray(0, 16)).toString('hex'), '2e8420842084048789889cbf9ab88c08');
  assert.equal(sha256(bytes), '6916cfdb9245044ab57784106c716fa663887db335765b894b207def66ba7d9c');
  const decoder = new G722Decoder();
  const decoded = new Int16Array(RATE);
  decoder.decode(bytes, 0, bytes.length, decoded);
  assert.equal(sha256(decoded), '80ef93085486f9c8ee75e9d20ca3674134728f0d40efca5037b26e93e7870292');
});

test('G.722 decoder takes any byte and saturates instead of wrapping', () => {
  const decoder = new G722Decoder();
  const hostile = new Uint8Array(4000);
  for (let i = 0; i < hostile.length; i++) hostile[i] = (i * 97 + (i >> 3)) & 0xff;
  const output = new Int16Array(8000);
  assert.equal(decoder.decode(hostile, 0, hostile.length, output), 8000);
  const loud = new Uint8Array(2000).fill(0x20); // the largest positive lower-band step, over and over
  assert.equal(decoder.decode(loud, 0, loud.length, output), 4000);
  for (const sample of output.subarray(0, 4000)) assert.ok(sample >= -32768 && sample <= 32767);
});

test('each stream has its own state: two coders fed the same audio agree, a reset starts again', () => {
  const input = sine(1500, RATE, FRAME * 10, 8000);
  const a = createCoder('g722')!;
  const b = createCoder('g722')!;
  const outA = new Uint8Array(160);
  const outB = new Uint8Array(160);
  for (let start = 0; start < input.length; start += FRAME) {
    a.encoder.encode(input.subarray(start, start + FRAME), FRAME, outA, 0);
    b.encoder.encode(input.subarray(start, start + FRAME), FRAME, outB, 0);
    assert.deepEqual(outA, outB);
  }
  a.encoder.reset();
  const fresh = createCoder('g722')!;
  a.encoder.encode(input.subarray(0, FRAME), FRAME, outA, 0);
  fresh.encoder.encode(input.subarray(0, FRAME), FRAME, outB, 0);
  assert.deepEqual(outA, outB);
  assert.equal(a.rate, 16000);
  assert.equal(a.info.clockRate, 8000, 'RFC 3551: the RTP clock of G.722 is 8000');
});
