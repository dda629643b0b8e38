import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FeatureDigits } from '../../src/core/channels/feature-digits.ts';

/** A reader of `codes` whose passed digits and run features are listed in `seen`, with a timeout the test fires itself. */
function reader(codes: readonly string[], timeoutMs = 60_000): { digits: FeatureDigits; seen: string[] } {
  const seen: string[] = [];
  const digits = new FeatureDigits(
    codes.map((code) => ({ digits: code, run: () => seen.push(`run ${code}`) })),
    timeoutMs,
    (digit, durationMs) => seen.push(`pass ${digit}/${durationMs}`),
  );
  return { digits, seen };
}

test('a digit no code starts with crosses at once with its own duration', () => {
  const { digits, seen } = reader(['#', '*0']);
  assert.equal(digits.digit('5', 160), false);
  assert.deepEqual(seen, []);
});

test('a one-digit code runs at once and does not cross', () => {
  const { digits, seen } = reader(['#', '*0']);
  assert.equal(digits.digit('#', 100), true);
  assert.deepEqual(seen, ['run #']);
});

test('a code prefix is held back, then the code runs; nothing of it crosses', () => {
  const { digits, seen } = reader(['#', '*0']);
  assert.equal(digits.digit('*', 100), true);
  assert.deepEqual(seen, []);
  assert.equal(digits.digit('0', 100), true);
  assert.deepEqual(seen, ['run *0']);
});

test('a held prefix that goes nowhere crosses first, then the digit that broke it, in the order pressed', () => {
  const { digits, seen } = reader(['*0']);
  assert.equal(digits.digit('*', 100), true);
  assert.equal(digits.digit('5', 120), true);
  assert.deepEqual(seen, ['pass */100', 'pass 5/120']);
  // The next digit starts afresh.
  assert.equal(digits.digit('7', 100), false);
});

test('a held prefix crosses when the feature digit timeout passes', async () => {
  const { digits, seen } = reader(['*0'], 20);
  digits.digit('*', 100);
  const deadline = Date.now() + 10_000;
  while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(seen, ['pass */100']);
});

test('stopped: nothing is held or run any more, what was held is dropped', () => {
  const { digits, seen } = reader(['*0']);
  digits.digit('*', 100);
  digits.stop();
  assert.equal(digits.digit('*', 100), false);
  assert.equal(digits.digit('0', 100), false);
  assert.deepEqual(seen, []);
});
