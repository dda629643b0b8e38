import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatGroupNames, formatGroupNumbers, groupsMeet, NO_GROUPS, parseGroupNames, parseGroupNumbers, MAX_NAMED_GROUPS } from '../../src/core/channels/call-groups.ts';

test('group numbers read as ast_get_group: numbers and ranges, others skipped, printed as ast_print_group', () => {
  const problems: string[] = [];
  assert.equal(formatGroupNumbers(parseGroupNumbers('1,3-5', problems)), '1, 3, 4, 5');
  assert.deepEqual(problems, []);
  assert.equal(formatGroupNumbers(parseGroupNumbers('0, 63 ,x,64,60-70', problems)), '0, 60, 61, 62, 63');
  assert.equal(problems.length, 3);
  assert.equal(parseGroupNumbers(''), 0n);
  assert.equal(formatGroupNumbers(0n), '');
  // A huge range is clamped, not walked.
  assert.equal(parseGroupNumbers('0-999999999999'), (1n << 64n) - 1n);
});

test('group names read as ast_get_namedgroups: trimmed, each once, bounded', () => {
  assert.deepEqual(parseGroupNames(' sales , support,,sales'), ['support', 'sales']);
  assert.equal(formatGroupNames(['a', 'b']), 'a, b');
  const problems: string[] = [];
  const many = Array.from({ length: MAX_NAMED_GROUPS + 5 }, (_, i) => `g${i}`).join(',');
  assert.equal(parseGroupNames(many, problems).length, MAX_NAMED_GROUPS);
  assert.equal(parseGroupNames('x'.repeat(500), problems).length, 0);
  assert.equal(problems.length, 2);
});

test('a pickup group meets a call group by number or by name', () => {
  const picker = { ...NO_GROUPS, pickupGroup: parseGroupNumbers('1'), namedPickupGroups: ['sales'] };
  assert.equal(groupsMeet(picker, { ...NO_GROUPS, callGroup: parseGroupNumbers('1-2') }), true);
  assert.equal(groupsMeet(picker, { ...NO_GROUPS, callGroup: parseGroupNumbers('2') }), false);
  assert.equal(groupsMeet(picker, { ...NO_GROUPS, namedCallGroups: ['support', 'sales'] }), true);
  assert.equal(groupsMeet(NO_GROUPS, NO_GROUPS), false);
});
