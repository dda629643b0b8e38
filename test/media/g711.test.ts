import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alawDecode, alawEncode, alawToLinear, linearToAlaw, linearToUlaw, ulawDecode, ulawEncode, ulawToLinear } from '../../src/media/g711.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { meanSquare } from '../../src/media/energy.ts';
import { sine, toDb } from './signals.ts';

describe('μ-law', () => {
  it('matches the reference code points', () => {
    assert.equal(ulawToLinear(0xff), 0);
    assert.equal(ulawToLinear(0x7f), 0);
    assert.equal(ulawToLinear(0x80), 32124);
    assert.equal(ulawToLinear(0x00), -32124);
    assert.equal(ulawToLinear(0xf0), 120);
    assert.equal(linearToUlaw(0), 0xff);
    assert.equal(linearToUlaw(-1), 0x7f);
    assert.equal(linearToUlaw(32124), 0x80);
    assert.equal(linearToUlaw(32767), 0x80);
    assert.equal(linearToUlaw(-32768), 0x00);
  });

  it('round-trips every code except negative zero', () => {
    for (let code = 0; code < 256; code++) {
      if (code === 0x7f) continue;
      assert.equal(linearToUlaw(ulawToLinear(code)), code, `code 0x${code.toString(16)}`);
    }
  });

  it('converts buffers into the caller buffer', () => {
    const codes = Uint8Array.from([0xff, 0x80, 0x00, 0x7f]);
    const linear = new Int16Array(6).fill(99);
    assert.equal(ulawDecode(codes, linear), 4);
    assert.deepEqual(Array.from(linear), [0, 32124, -32124, 0, 99, 99]);
    const back = new Uint8Array(4);
    assert.equal(ulawEncode(linear.subarray(0, 4), back), 4);
    assert.deepEqual(Array.from(back), [0xff, 0x80, 0x00, 0xff]);
    assert.throws(() => ulawDecode(codes, new Int16Array(3)), RangeError);
  });

  it('carries a 1 kHz tone at the right level with G.711-grade noise', () => {
    const tone = sine(1000, 8000, 800, 10000);
    const coded = new Uint8Array(tone.length);
    const decoded = new Int16Array(tone.length);
    ulawEncode(tone, coded);
    ulawDecode(coded, decoded);
    const amplitude = powerToAmplitude(goertzelPower(decoded, 1000, 8000));
    assert.ok(Math.abs(amplitude - 10000) < 100, `amplitude ${amplitude}`);
    const error = decoded.map((sample, i) => sample - tone[i]);
    const signalToNoise = toDb(meanSquare(tone) / meanSquare(error));
    assert.ok(signalToNoise > 33, `SNR ${signalToNoise} dB`);
  });
});

describe('A-law', () => {
  it('matches the reference code points', () => {
    assert.equal(alawToLinear(0xd5), 8);
    assert.equal(alawToLinear(0x55), -8);
    assert.equal(alawToLinear(0xaa), 32256);
    assert.equal(alawToLinear(0x2a), -32256);
    assert.equal(linearToAlaw(0), 0xd5);
    assert.equal(linearToAlaw(8), 0xd5);
    assert.equal(linearToAlaw(-1), 0x55);
    assert.equal(linearToAlaw(-8), 0x55);
    assert.equal(linearToAlaw(32767), 0xaa);
    assert.equal(linearToAlaw(-32768), 0x2a);
  });

  it('round-trips every code', () => {
    for (let code = 0; code < 256; code++) {
      assert.equal(linearToAlaw(alawToLinear(code)), code, `code 0x${code.toString(16)}`);
    }
  });

  it('converts buffers and keeps a tone intact', () => {
    const tone = sine(1000, 8000, 800, 10000);
    const coded = new Uint8Array(tone.length);
    const decoded = new Int16Array(tone.length);
    assert.equal(alawEncode(tone, coded), 800);
    assert.equal(alawDecode(coded, decoded), 800);
    const error = decoded.map((sample, i) => sample - tone[i]);
    assert.ok(toDb(meanSquare(tone) / meanSquare(error)) > 33);
    assert.throws(() => alawEncode(tone, new Uint8Array(10)), RangeError);
  });

  it('quantises within half a step everywhere', () => {
    // Steps double per segment and decoders return the step's midpoint, so
    // the error stays within about 1/32 (A-law) or 1/28 (μ-law) of the value.
    for (let sample = -32768; sample < 32768; sample++) {
      const aError = Math.abs(alawToLinear(linearToAlaw(sample)) - sample);
      const uError = Math.abs(ulawToLinear(linearToUlaw(sample)) - sample);
      const magnitude = Math.abs(sample);
      assert.ok(aError <= Math.max(16, magnitude / 31), `A-law ${sample} off by ${aError}`);
      assert.ok(uError <= Math.max(16, magnitude / 27) || magnitude > 32124, `μ-law ${sample} off by ${uError}`);
    }
  });
});
