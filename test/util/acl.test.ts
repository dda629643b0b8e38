// The ACL parser and Asterisk's evaluation rules: last match wins, families kept apart (IPv4 rules
// also cover IPv4-mapped clients), every list must allow, and no input can make the parser throw.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { aclAllows, parseAclRule, parseAddress, rulesAllow, type AclRule } from '../../src/util/acl.ts';

const rule = (entry: string, allow: boolean): AclRule => {
  const parsed = parseAclRule(entry, allow);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
};
const permit = (entry: string): AclRule => rule(entry, true);
const deny = (entry: string): AclRule => rule(entry, false);
const allows = (rules: AclRule[], address: string): boolean => aclAllows([rules], address);

describe('addresses', () => {
  test('canonical IPv4 and IPv6 forms parse; IPv4-mapped IPv6 becomes IPv4', () => {
    assert.deepEqual([...parseAddress('10.1.2.3')!], [10, 1, 2, 3]);
    assert.deepEqual([...parseAddress('::ffff:127.0.0.1')!], [127, 0, 0, 1]);
    assert.equal(parseAddress('::1')!.length, 16);
    assert.equal(parseAddress('[2001:db8::1]')!.length, 16);
    assert.equal(parseAddress('fe80::1%eth0')!.length, 16);
    assert.deepEqual([...parseAddress('::')!], new Array(16).fill(0));
    assert.deepEqual([...parseAddress('2001:db8::a.b.c.d'.replace('a.b.c.d', '192.0.2.1'))!].slice(12), [192, 0, 2, 1]);
  });

  test('anything else is refused, never thrown', () => {
    for (const text of ['', '1.2.3', '1.2.3.4.5', '256.0.0.1', '010.0.0.1', '1.2.3.-4', ' 1.2.3.4', 'localhost', '1::2::3', ':::', '12345::',
      '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', '1.2.3.4::', '::1.2.3', 'g::1', '[::1', '0x7f.0.0.1', '1e2.0.0.1', 'x'.repeat(10_000), '::ffff:1.2.3.04']) {
      assert.equal(parseAddress(text), undefined, text);
    }
    // Random bytes: a problem string or a rule, never an exception.
    for (let i = 0; i < 2000; i++) {
      const text = String.fromCharCode(...Array.from({ length: 1 + (i % 40) }, () => 32 + Math.floor(Math.random() * 95)));
      const result = parseAclRule(text, i % 2 === 0);
      assert.ok(typeof result === 'string' || typeof result.allow === 'boolean');
    }
  });

  test('masks: prefix lengths and netmasks of the same family; the network is masked', () => {
    assert.deepEqual([...permit('10.1.2.3/8').network], [10, 0, 0, 0]);
    assert.deepEqual([...permit('10.1.2.3/255.255.0.0').network], [10, 1, 0, 0]);
    assert.deepEqual([...permit('10.1.2.3').mask], [255, 255, 255, 255]);
    assert.deepEqual([...permit('0.0.0.0/0').mask], [0, 0, 0, 0]);
    assert.deepEqual([...permit('::ffff:10.0.0.0/8').network], [10, 0, 0, 0]);
    assert.match(parseAclRule('10.0.0.0/33', true) as string, /too long/);
    assert.match(parseAclRule('::ffff:10.0.0.0/104', true) as string, /too long/, 'a mapped entry takes an IPv4 length, as in Asterisk');
    assert.match(parseAclRule('::/129', true) as string, /too long/);
    assert.match(parseAclRule('10.0.0.0/ffff::', true) as string, /same address family/);
    assert.match(parseAclRule('10.0.0.0/abc', true) as string, /prefix length or a netmask/);
    assert.match(parseAclRule('10.0.0.0/-1', true) as string, /prefix length or a netmask/);
    assert.match(parseAclRule('', true) as string, /empty/);
  });
});

describe('evaluation', () => {
  test('no rules allow; the last matching rule decides', () => {
    assert.equal(allows([], '192.0.2.1'), true);
    const rules = [deny('0.0.0.0/0'), permit('10.0.0.0/8')];
    assert.equal(allows(rules, '10.9.9.9'), true);
    assert.equal(allows(rules, '127.0.0.1'), false);
    const carveOut = [permit('10.0.0.0/8'), deny('10.1.0.0/16')];
    assert.equal(allows(carveOut, '10.1.2.3'), false);
    assert.equal(allows(carveOut, '10.2.0.1'), true);
    assert.equal(allows(carveOut, '192.0.2.1'), true, 'nothing matched: the optimistic start stands');
  });

  test('! inverts an entry', () => {
    assert.equal(allows([deny('0.0.0.0/0'), deny('!127.0.0.1')], '127.0.0.1'), true);
    assert.equal(allows([permit('!127.0.0.0/8')], '127.0.0.1'), false);
  });

  test('IPv4 rules cover IPv4-mapped clients but not IPv6; IPv6 rules only IPv6', () => {
    const v4only = [deny('0.0.0.0/0'), permit('127.0.0.1/32')];
    assert.equal(allows(v4only, '::ffff:127.0.0.1'), true);
    assert.equal(allows(v4only, '::ffff:10.0.0.1'), false);
    assert.equal(allows(v4only, '::1'), true, 'an IPv4 deny-all does not touch IPv6 clients');
    assert.equal(allows([deny('::/0')], '127.0.0.1'), true);
    assert.equal(allows([deny('::/0'), permit('2001:db8::/32')], '2001:db8:1::5'), true);
    assert.equal(allows([deny('::/0'), permit('2001:db8::/32')], '2001:db9::5'), false);
  });

  test('every list must allow; an unreadable client address is refused once any rule exists', () => {
    const office = [deny('0.0.0.0/0'), permit('192.0.2.0/24')];
    const own = [permit('0.0.0.0/0')];
    assert.equal(aclAllows([own, office], '192.0.2.7'), true);
    assert.equal(aclAllows([own, office], '198.51.100.7'), false);
    assert.equal(aclAllows([own], undefined), false);
    assert.equal(aclAllows([own], 'not an address'), false);
    assert.equal(aclAllows([[]], undefined), true);
    assert.equal(rulesAllow([deny('10.0.0.0/8')], parseAddress('10.0.0.1')!), false);
  });
});
