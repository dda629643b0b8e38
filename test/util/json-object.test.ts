// A peer's JSON is read with its nesting bounded first (jansson's 2048 levels, as Asterisk's ARI):
// brackets inside strings do not count, escaped quotes do not end a string, and the text past the
// bound is refused as not JSON without V8's parser ever seeing it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_JSON_DEPTH, jsonNestingExceeds, parseBoundedJson, parseJsonObjectText } from '../../src/util/json-object.ts';

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

test('nesting up to the bound parses; one level more is refused', () => {
  assert.equal(MAX_JSON_DEPTH, 2048);
  assert.equal(jsonNestingExceeds(nested(MAX_JSON_DEPTH)), false);
  assert.ok(parseBoundedJson(nested(MAX_JSON_DEPTH)));
  assert.equal(jsonNestingExceeds(nested(MAX_JSON_DEPTH + 1)), true);
  assert.equal(parseBoundedJson(nested(MAX_JSON_DEPTH + 1)), undefined);
  assert.equal(parseJsonObjectText(`{"a":${nested(MAX_JSON_DEPTH)}}`), 'not JSON');
  assert.deepEqual(parseJsonObjectText(`{"a":${nested(10)}}`), { a: [[[[[[[[[[]]]]]]]]]] });
});

test('brackets in strings and escaped quotes do not count; siblings do not add up', () => {
  const inString = JSON.stringify({ s: '['.repeat(5000) + '\\"' + '{'.repeat(5000) });
  assert.equal(jsonNestingExceeds(inString), false);
  assert.deepEqual(parseBoundedJson(inString)?.value, JSON.parse(inString));
  const siblings = JSON.stringify(Array.from({ length: 5000 }, () => [[1]]));
  assert.equal(jsonNestingExceeds(siblings), false);
  assert.equal(jsonNestingExceeds('{"a":"\\\\"}' + nested(3), 2), true, 'an escaped backslash ends no string early');
});

test('text that is no JSON is undefined, never a throw', () => {
  for (const text of ['', '{', 'nope', ']]]]', '"unterminated']) assert.equal(parseBoundedJson(text), undefined, text);
});
