import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accumulate, applyGain, clearSum, dbToGain, mixMinus, saturateSum, silence } from '../../src/media/mix.ts';

describe('bridge mixing', () => {
  it('gives each party everyone but itself', () => {
    const parties = [Int16Array.from([100, -200, 300]), Int16Array.from([10, 20, 30]), Int16Array.from([1, 2, 3])];
    const sum = new Int32Array(3);
    clearSum(sum);
    for (const party of parties) accumulate(sum, party);
    const heard = new Int16Array(3);
    mixMinus(sum, parties[0], heard);
    assert.deepEqual(Array.from(heard), [11, 22, 33]);
    mixMinus(sum, parties[1], heard);
    assert.deepEqual(Array.from(heard), [101, -198, 303]);
    mixMinus(sum, undefined, heard);
    assert.deepEqual(Array.from(heard), [111, -178, 333]);
  });

  it('saturates instead of wrapping', () => {
    const loud = Int16Array.from([30000, -30000]);
    const sum = new Int32Array(2);
    accumulate(sum, loud);
    accumulate(sum, loud);
    accumulate(sum, loud);
    const heard = new Int16Array(2);
    mixMinus(sum, loud, heard);
    assert.deepEqual(Array.from(heard), [32767, -32768]);
    saturateSum(sum, heard);
    assert.deepEqual(Array.from(heard), [32767, -32768]);
  });

  it('applies gain with saturation, in place or into another buffer', () => {
    const samples = Int16Array.from([1000, -1000, 20000]);
    const doubled = new Int16Array(3);
    applyGain(samples, 2, doubled);
    assert.deepEqual(Array.from(doubled), [2000, -2000, 32767]);
    applyGain(samples, dbToGain(-6.0206));
    assert.deepEqual(Array.from(samples), [500, -500, 10000]);
    applyGain(samples, 0);
    assert.deepEqual(Array.from(samples), [0, 0, 0]);
    const copy = new Int16Array(3);
    applyGain(doubled, 1, copy);
    assert.deepEqual(copy, doubled);
  });

  it('mutes a frame', () => {
    const samples = Int16Array.from([5, 6, 7]);
    silence(samples);
    assert.deepEqual(Array.from(samples), [0, 0, 0]);
    assert.ok(Math.abs(dbToGain(6.0206) - 2) < 1e-4);
  });
});
