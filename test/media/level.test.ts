import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Goertzel, goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { averageMagnitude, dbfs, meanSquare, rms } from '../../src/media/energy.ts';
import { sine } from './signals.ts';

describe('Goertzel', () => {
  it('measures the level of the target frequency only', () => {
    const tone = sine(1000, 8000, 160, 8000);
    const detector = new Goertzel(1000, 8000);
    assert.ok(Math.abs(powerToAmplitude(detector.power(tone)) - 8000) < 40);
    assert.ok(powerToAmplitude(goertzelPower(tone, 2000, 8000)) < 100);
    assert.ok(Math.abs(goertzelPower(tone, 1000, 8000) - meanSquare(tone)) / meanSquare(tone) < 0.01);
    assert.equal(detector.power(tone, 5, 5), 0);
  });
});

describe('energy', () => {
  it('computes RMS, dBFS and average magnitude', () => {
    const square = Int16Array.from([16384, -16384, 16384, -16384]);
    assert.equal(rms(square), 16384);
    assert.ok(Math.abs(dbfs(square) + 6.0206) < 1e-3);
    assert.equal(dbfs(new Int16Array(4)), -Infinity);
    assert.equal(averageMagnitude(Int16Array.from([100, -300, 0, 200])), 150);
    assert.equal(averageMagnitude(new Int16Array(0)), 0);
    assert.equal(meanSquare(square, 1, 3), 16384 * 16384);
  });
});
