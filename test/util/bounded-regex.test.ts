// Regular expressions from dialplans run in bounded time: on V8's linear-time engine, or, where
// it is missing, with the shapes that backtrack exponentially refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cpuMs } from '../helpers/cpu-time.ts';
import { BoundedRegexError, boundedSubject, compileBoundedRegex, LINEAR, MAX_REGEX_SUBJECT_LENGTH } from '../../src/util/bounded-regex.ts';

const EVIL_SUBJECT = `${'a'.repeat(30_000)}!`;

test('the linear-time engine is on, and matches catastrophic patterns in linear time', () => {
  assert.equal(LINEAR, true);
  for (const pattern of ['^(a+)+$', '^(a|aa)+$', '^(a*)*b$', '(x+x+)+y']) {
    const regex = compileBoundedRegex(pattern);
    const ms = cpuMs(() => assert.equal(regex.test(EVIL_SUBJECT), false, pattern));
    assert.ok(ms < 500, `${pattern} took ${ms} ms of CPU`);
  }
});

test('POSIX classes, and what the linear engine cannot run, refused', () => {
  assert.equal(compileBoundedRegex('^[[:digit:]]{3}-[[:alpha:]]+$').test('123-abc'), true);
  assert.equal(compileBoundedRegex('[[:space:]]').test('a b'), true);
  assert.throws(() => compileBoundedRegex('(a)\\1'), BoundedRegexError);
  assert.throws(() => compileBoundedRegex('(?<=a)b'), BoundedRegexError);
  assert.throws(() => compileBoundedRegex('(['), BoundedRegexError);
  assert.throws(() => compileBoundedRegex('a'.repeat(513)), /longer than 512/);
});

test('without the linear engine, nested repetition and back-references are refused', () => {
  for (const pattern of ['^(a+)+$', '(a|aa)*', '(a*){2,}', '(x+x+)+y', '(a)\\1']) {
    assert.throws(() => compileBoundedRegex(pattern, '', false), BoundedRegexError, pattern);
  }
  for (const pattern of ['^[0-9]+$', '^(abc)+$', '^(ab|cd)$', 'a+b*c?']) {
    assert.doesNotThrow(() => compileBoundedRegex(pattern, '', false), pattern);
  }
});

test('subjects are cut to the limit', () => {
  assert.equal(boundedSubject('x'.repeat(MAX_REGEX_SUBJECT_LENGTH + 10)).length, MAX_REGEX_SUBJECT_LENGTH);
  assert.equal(boundedSubject('short'), 'short');
});
