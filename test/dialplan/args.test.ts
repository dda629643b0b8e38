import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { splitArgs } from '../../src/dialplan/args.ts';

describe('splitArgs', () => {
  const cases: [string, string[]][] = [
    ['a,b', ['a', 'b']],
    ['"a,b",c', ['a,b', 'c']],
    ['f(a,b),c', ['f(a,b)', 'c']],
    ['[a,b],c', ['[a,b]', 'c']],
    ['a\\,b', ['a,b']],
    ['', ['']],
    ['a,', ['a', '']],
    [',', ['', '']],
    ['a,,b', ['a', '', 'b']],
    ['say "hi, there" now,x', ['say hi, there now', 'x']],
    ['a\\\\,b', ['a\\', 'b']],
    ['\\"quoted\\",x', ['"quoted"', 'x']],
    ['f(g(a,b),c),d', ['f(g(a,b),c)', 'd']],
    ['a),b', ['a)', 'b']],
    ['trailing\\', ['trailing']],
  ];
  for (const [input, expected] of cases) {
    test(JSON.stringify(input), () => assert.deepEqual(splitArgs(input), expected));
  }

  test('splits on another delimiter', () => {
    assert.deepEqual(splitArgs('a|b,c|"d|e"', '|'), ['a', 'b,c', 'd|e']);
  });

  test('keeps the remainder raw once the limit is reached', () => {
    assert.deepEqual(splitArgs('a,"b",c,d', ',', 2), ['a', '"b",c,d']);
    assert.deepEqual(splitArgs('a,b', ',', 1), ['a,b']);
    assert.deepEqual(splitArgs('a,b', ',', 5), ['a', 'b']);
  });

  test('rejects a delimiter longer than one character', () => {
    assert.throws(() => splitArgs('a', ', '), RangeError);
  });
});
