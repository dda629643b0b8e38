// StasisBroadcast's app_filter: POSIX extended regular expressions, unanchored, on application
// names; Asterisk's safety limits refuse the same patterns; the engine never backtracks, so the
// classic catastrophic patterns finish on long names.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileAppFilter, type AppFilter } from '../../src/util/app-filter.ts';

const compile = (pattern: string): AppFilter => {
  const filter = compileAppFilter(pattern);
  if (typeof filter === 'string') throw new Error(`refused ${pattern}: ${filter}`);
  return filter;
};
const matching = (pattern: string, names: readonly string[]): string[] => names.filter((name) => compile(pattern).matches(name));

const NAMES = ['sales', 'sales-eu', 'support', 'presales', 'billing-1', 'billing-22', 'Sales', 'a.b', 'axb', 'x{2}'];

describe('POSIX ERE semantics', () => {
  test('unanchored search, anchors, alternation, groups', () => {
    assert.deepEqual(matching('sales', NAMES), ['sales', 'sales-eu', 'presales']);
    assert.deepEqual(matching('^sales', NAMES), ['sales', 'sales-eu']);
    assert.deepEqual(matching('^sales$', NAMES), ['sales']);
    assert.deepEqual(matching('^(sales|support)$', NAMES), ['sales', 'support']);
    assert.deepEqual(matching('^s(ales|upport)', NAMES), ['sales', 'sales-eu', 'support']);
    assert.deepEqual(matching('eu$|^b', NAMES), ['sales-eu', 'billing-1', 'billing-22']);
    assert.deepEqual(matching('', NAMES), NAMES, 'the empty pattern matches everything');
  });

  test('quantifiers and intervals', () => {
    assert.deepEqual(matching('^billing-[0-9]+$', NAMES), ['billing-1', 'billing-22']);
    assert.deepEqual(matching('^billing-[0-9]{2}$', NAMES), ['billing-22']);
    assert.deepEqual(matching('^billing-[0-9]{1,}$', NAMES), ['billing-1', 'billing-22']);
    assert.deepEqual(matching('^billing-[0-9]{0,1}$', NAMES), ['billing-1']);
    assert.deepEqual(matching('^pre?sales$', NAMES), ['presales']);
    assert.deepEqual(matching('^x*sales$', NAMES), ['sales']);
    assert.deepEqual(matching('^x{2}$', NAMES), []);
    assert.deepEqual(matching('^x[{]2}$', NAMES), ['x{2}']);
    assert.deepEqual(matching('^x{$', ['x{']), ['x{'], 'a { that starts no interval is a literal');
  });

  test('bracket expressions, classes, dot and escapes; case-sensitive', () => {
    assert.deepEqual(matching('^[Ss]ales$', NAMES), ['sales', 'Sales']);
    assert.deepEqual(matching('^[^s]', NAMES), ['presales', 'billing-1', 'billing-22', 'Sales', 'a.b', 'axb', 'x{2}']);
    assert.deepEqual(matching('^[[:upper:]]', NAMES), ['Sales']);
    assert.deepEqual(matching('[[:digit:]][[:digit:]]', NAMES), ['billing-22']);
    assert.deepEqual(matching('^a.b$', NAMES), ['a.b', 'axb']);
    assert.deepEqual(matching('^a\\.b$', NAMES), ['a.b']);
    assert.deepEqual(matching('^a[.]b$', NAMES), ['a.b']);
    assert.deepEqual(matching('[]x]', ['a]', 'x', 'y']), ['a]', 'x'], 'a leading ] is literal');
    assert.deepEqual(matching('^[a-]$', ['a', '-', 'b']), ['a', '-']);
    assert.deepEqual(matching('^\\w+$', ['ab_1', 'a-b']), ['ab_1']);
  });

  test('what the engine does not implement, or POSIX forbids, is refused with a reason', () => {
    for (const pattern of ['(a', 'a)', '[abc', '*a', 'a|+', '\\1', 'a\\b', '[[.a.]]', '[[=a=]]', '[[:nope:]]', '[z-a]', 'a{3,2}', 'x\\']) {
      assert.equal(typeof compileAppFilter(pattern), 'string', pattern);
    }
  });
});

describe("Asterisk's safety limits", () => {
  test('length, nesting, quantified groups, interval bounds, deep alternations', () => {
    assert.match(compileAppFilter('a'.repeat(257)) as string, /256/);
    assert.equal(typeof compileAppFilter('a'.repeat(256)), 'object');
    assert.match(compileAppFilter(`${'('.repeat(11)}a${')'.repeat(11)}`) as string, /nested deeper than 10/);
    assert.equal(typeof compileAppFilter(`${'('.repeat(10)}a${')'.repeat(10)}`), 'object');
    assert.match(compileAppFilter('(a)+(b)*(c)?(d){2}') as string, /quantified groups/);
    assert.equal(typeof compileAppFilter('(a)+(b)*(c)?d{2}'), 'object');
    assert.match(compileAppFilter('a{101}') as string, /above 100/);
    assert.match(compileAppFilter('a{1,101}') as string, /above 100/);
    assert.match(compileAppFilter('a{99999999999999999999}') as string, /above 100/);
    assert.match(compileAppFilter('a{101') as string, /above 100/, 'refused before the closing brace, as in Asterisk');
    assert.equal(typeof compileAppFilter('a{1,100}'), 'object');
    const alternatives = (n: number): string => `(((${Array.from({ length: n }, (_, i) => `x${i}`).join('|')})))`;
    assert.match(compileAppFilter(alternatives(22)) as string, /alternatives/);
    assert.equal(typeof compileAppFilter(alternatives(21)), 'object');
  });

  test('an interval explosion is refused instead of compiled', () => {
    assert.match(compileAppFilter('((a{100}){100}){100}') as string, /instructions/);
  });

  test('catastrophic-backtracking patterns finish on long names (the NFA never backtracks)', () => {
    const name = `${'a'.repeat(1000)}!`;
    for (const pattern of ['^(a|a)*$', '^(a+)+$', '^(a|aa)+$', '(a*)*b', '^(.*a){20}$']) {
      const filter = compileAppFilter(pattern);
      if (typeof filter === 'string') continue;
      assert.equal(filter.matches(name), false, pattern);
    }
    assert.equal(compile('^(a|a)*!$').matches(name), true);
    assert.equal(compile('a').matches('a'.repeat(2000)), false, 'names beyond 1024 characters never match');
  });
});
