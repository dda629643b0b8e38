// res_pjsip_acl's rules without a server: pjsip.conf's type=acl read (order of permit/deny kept,
// through the dynamic configuration's records too), hostile values refused at start-up, the
// allocation-free address reader on IPv4, IPv6 and mapped forms, several sections all applying,
// named ACLs (missing ones refuse everything, as Asterisk), Contact hosts, and Asterisk's log lines.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { buildPjsipConfig, loadPjsipConf, type PjsipConfig } from '../../../src/channels/pjsip/config/index.ts';
import { readPjsipConfObjects } from '../../../src/channels/pjsip/objects.ts';
import { buildSipAcl, SipAcl } from '../../../src/channels/pjsip/sip-acl.ts';
import { readAclConfBeside } from '../../../src/channels/pjsip/acl-conf.ts';
import { aclRequest, capture, configOf, from } from './acl-fixtures.ts';
import { parseAddress, readAddressInto } from '../../../src/util/acl.ts';

const request = (contact?: string) => aclRequest('REGISTER', contact);

function gate(text: string, named = new Map(), log = capture().log, now: () => number = Date.now): SipAcl {
  const problems: string[] = [];
  const acl = SipAcl.compile(configOf(text).acls.values(), named, log, problems, now);
  assert.ok(acl);
  return acl;
}

describe('the address reader (no allocation on the request path)', () => {
  test('reads what parseAddress reads, IPv6 forms and mapped IPv4 included', () => {
    const out = new Uint8Array(16);
    for (const text of ['10.1.2.3', '0.0.0.0', '255.255.255.255', '::1', '::', '2001:db8::1', '2001:db8:0:0:0:0:0:1', 'fe80::1%eth0', '[2001:db8::7]', '::ffff:127.0.0.5',
      '1:2:3:4:5:6:7:8', '1::8', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '64:ff9b::192.0.2.33', 'ABCD:ef01::', '::ffff:0:1.2.3.4']) {
      const expected = parseAddress(text);
      assert.ok(expected, text);
      const length = readAddressInto(text, out);
      assert.equal(length, expected.length, text);
      assert.deepEqual([...out.subarray(0, length)], [...expected], text);
    }
    assert.equal(readAddressInto('::ffff:127.0.0.5', out), 4);
    assert.deepEqual([...out.subarray(0, 4)], [127, 0, 0, 5]);
  });

  test('refuses what is not an address, as parseAddress does', () => {
    const out = new Uint8Array(16);
    for (const text of ['', '1.2.3', '1.2.3.4.5', '256.0.0.1', '010.0.0.1', ' 1.2.3.4', 'localhost', '1::2::3', ':::', '12345::', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7',
      '1.2.3.4::', '::1.2.3', 'g::1', '[::1', ':1::', '1:', '1:2:3:4:5:6:7:8::', 'x'.repeat(10_000), '::ffff:1.2.3.04', '1::2:3:4:5:6:7:8']) {
      assert.equal(parseAddress(text), undefined, `parseAddress ${text.slice(0, 20)}`);
      assert.equal(readAddressInto(text, out), 0, text.slice(0, 20));
    }
  });
});

describe('type=acl in pjsip.conf', () => {
  test('permit and deny are one chain in the order written, IPv4 and IPv6, CIDR and netmask', () => {
    const acl = configOf('[a]\ntype=acl\ndeny=0.0.0.0/0.0.0.0\npermit=10.0.0.0/255.0.0.0\ndeny=10.1.0.0/16,!10.1.2.0/24\ndeny=2001:db8::/32\n').acls.get('a')!;
    assert.deepEqual(acl.rules.map((rule) => [rule.text, rule.allow]), [['0.0.0.0/0.0.0.0', false], ['10.0.0.0/255.0.0.0', true], ['10.1.0.0/16', false], ['!10.1.2.0/24', true], ['2001:db8::/32', false]]);
  });

  test('the order survives the dynamic configuration (records): deny lines are written into permit inverted', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acl39-'));
    try {
      const file = join(dir, 'pjsip.conf');
      writeFileSync(file, '[a]\ntype=acl\ndeny=0.0.0.0/0\npermit=10.0.0.0/8\ndeny=10.9.0.0/16,!10.9.9.9\ncontact_deny=192.0.2.0/24\ncontact_permit=192.0.2.128/25\n');
      const read = readPjsipConfObjects(file);
      assert.deepEqual(read.fatal, []);
      const fields = read.tree.res_pjsip!.acl!.a!;
      const built = buildPjsipConfig([{ type: 'acl', id: 'a', fields }]).value.acls.get('a')!;
      const sip = SipAcl.compile([built], new Map(), capture().log, [])!;
      const verdicts = ['10.1.1.1', '10.9.1.1', '10.9.9.9', '11.0.0.1'].map((address) => sip.refuses(request(), from(address)));
      assert.deepEqual(verdicts, [false, true, false, true]);
      assert.equal(sip.refuses(request('<sip:a@192.0.2.7>'), from('10.1.1.1')), true);
      assert.equal(sip.refuses(request('<sip:a@192.0.2.200>'), from('10.1.1.1')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('hostile values are errors naming file:line, and an acl that cannot be read stops start-up (fatal)', () => {
    const cases: [string, RegExp][] = [
      ['deny=10.0.0.0/33', /prefix length \/33 is too long/],
      ['deny=10.0.0.0/255.0.0.300', /netmask|not a prefix length/],
      ['permit=10.0.0.0/ffff::', /same address family/],
      ['permit=example.com', /not an IPv4 or IPv6 address/],
      ['deny=::1/129', /too long/],
      ['contact_deny=300.1.1.1', /not an IPv4 or IPv6 address/],
      ['acl=lab\nacl=LAB', /occurs multiple times/],
      ['acl=bad name!', /not an ACL name/],
      [`permit=${Array.from({ length: 300 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(',')}`, /longer than 4096|more than 256/],
      [Array.from({ length: 300 }, (_, i) => `deny=10.1.${i >> 8}.${i & 255}`).join('\n'), /more than 256 permit\/deny entries/],
    ];
    for (const [lines, expected] of cases) {
      const loaded = loadPjsipConf(`[a]\ntype=acl\n${lines}\n`, 'pjsip.conf');
      assert.ok(loaded.errors.some((line) => /^pjsip\.conf:\d+: \[a\] /.test(line) && expected.test(line)), `${lines.slice(0, 60)}: ${loaded.errors.join(' | ')}`);
      assert.equal(loaded.config.acls.size, 0);
      const dir = mkdtempSync(join(tmpdir(), 'acl39-'));
      try {
        writeFileSync(join(dir, 'pjsip.conf'), `[a]\ntype=acl\n${lines}\n`);
        assert.ok(readPjsipConfObjects(join(dir, 'pjsip.conf')).fatal.length > 0, lines.slice(0, 60));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

describe('the check', () => {
  test('several sections all apply; IPv4 rules leave IPv6 sources alone and cover mapped ones; the last match wins', () => {
    const sip = gate('[one]\ntype=acl\ndeny=0.0.0.0/0\npermit=127.0.0.0/8\n[two]\ntype=acl\ndeny=127.0.0.9\n[six]\ntype=acl\ndeny=2001:db8::/32\n');
    const refused = (address: string) => sip.refuses(request(), from(address));
    assert.equal(refused('127.0.0.1'), false);
    assert.equal(refused('::ffff:127.0.0.1'), false);
    assert.equal(refused('192.0.2.1'), true);
    assert.equal(refused('::ffff:192.0.2.1'), true);
    assert.equal(refused('127.0.0.9'), true, 'the second section refuses what the first lets through');
    assert.equal(refused('2001:db9::1'), false, 'no IPv6 rule matches: allowed, as in Asterisk');
    assert.equal(refused('2001:db8::5'), true);
  });

  test('named ACLs: acl.conf beside pjsip.conf (templates inherited), ari.acls for others, a missing one refuses everything', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acl39-'));
    try {
      writeFileSync(join(dir, 'acl.conf'), '[base](!)\ndeny=0.0.0.0/0\n\n[office](base)\npermit=192.0.2.0/24\n\n[broken]\npermit=nonsense\n');
      const read = readAclConfBeside(join(dir, 'pjsip.conf'));
      assert.deepEqual([...read.acls.keys()], ['office', 'broken']);
      assert.ok(read.errors.some((line) => /acl\.conf:\d+: \[broken\] bad permit entry/.test(line)));
      const { log, lines } = capture();
      const problems: string[] = [];
      const settings = new Map([['ops', { permit: [{ sense: 'permit' as const, entry: '198.51.100.0/24', order: 0 }], deny: [{ sense: 'deny' as const, entry: '0.0.0.0/0', order: -1 }] }]]);
      const office = buildSipAcl(configOf('[a]\ntype=acl\nacl=Office\n'), [], join(dir, 'pjsip.conf'), new Map(), log)!;
      assert.equal(office.refuses(request(), from('192.0.2.10')), false);
      assert.equal(office.refuses(request(), from('203.0.113.1')), true);
      const ops = buildSipAcl(configOf('[a]\ntype=acl\nacl=ops\n'), [], join(dir, 'pjsip.conf'), settings, log)!;
      assert.equal(ops.refuses(request(), from('198.51.100.1')), false);
      assert.equal(ops.refuses(request(), from('192.0.2.10')), true);
      const broken = buildSipAcl(configOf('[a]\ntype=acl\nacl=broken\n'), [], join(dir, 'pjsip.conf'), new Map(), log)!;
      assert.equal(broken.refuses(request(), from('192.0.2.10')), true);
      const missing = SipAcl.compile(configOf('[a]\ntype=acl\nacl=nowhere\n').acls.values(), new Map(), log, problems)!;
      assert.equal(missing.refuses(request(), from('192.0.2.10')), true);
      assert.ok(problems.some((line) => /\[a\] acl nowhere: no such ACL/.test(line)));
      assert.ok(lines.some((line) => line.msg === "SIP ACL: Rejecting '192.0.2.10' due to use of an invalid ACL 'broken'."));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("Contact hosts: every Contact's IP literal is checked; `*`, host names and other schemes pass", () => {
    const sip = gate('[c]\ntype=acl\ncontact_deny=192.0.2.0/24\ncontact_deny=2001:db8::/32\n');
    const refused = (contact?: string) => sip.refuses(request(contact), from('10.0.0.1'));
    assert.equal(refused(), false);
    assert.equal(refused('*'), false);
    assert.equal(refused('<sip:a@198.51.100.1:5060>'), false);
    assert.equal(refused('<sip:a@198.51.100.1:5060>, <sip:a@192.0.2.4;transport=tcp>'), true);
    assert.equal(refused('<sips:a@[2001:db8::9]:5061>'), true);
    assert.equal(refused('<sip:a@phone.example.com>'), false);
    assert.equal(refused('<tel:+15551234>'), false);
  });

  test("logs as Asterisk: a NOTICE naming the ACL, a WARNING naming the source; at most one pair a second, with the count of the rest", () => {
    const { log, lines } = capture();
    let clock = 1_000_000;
    const sip = gate('[a]\ntype=acl\ndeny=127.0.0.5\n[c]\ntype=acl\ncontact_deny=192.0.2.0/24\n', new Map(), log, () => clock);
    for (let i = 0; i < 50; i++) sip.refuses(request(), from('127.0.0.5', 5070));
    sip.refuses(request('<sip:a@192.0.2.4>'), from('127.0.0.1'));
    clock += 1000;
    sip.refuses(request(), from('127.0.0.5', 5070));
    assert.deepEqual(lines.slice(4).map((line) => [line.msg, line.suppressed]), [
      ["SIP ACL: Rejecting '127.0.0.5' due to a failure to pass ACL '(BASELINE)'", 49],
      ['Incoming SIP message from 127.0.0.5:5070 did not pass ACL test', 49],
    ]);
    assert.deepEqual(lines.slice(0, 4).map((line) => [line.level, line.msg]), [
      [30, "SIP ACL: Rejecting '127.0.0.5' due to a failure to pass ACL '(BASELINE)'"],
      [40, 'Incoming SIP message from 127.0.0.5:5070 did not pass ACL test'],
      [30, "SIP Contact ACL: Rejecting '192.0.2.4' due to a failure to pass ACL '(BASELINE)'"],
      [40, 'Incoming SIP message from 192.0.2.4:0 did not pass ACL test'],
    ]);
  });
});

describe('type=system', () => {
  test('timer_t1 and timer_b as Asterisk bounds them; thread pool sizes noted; compact headers and the early answers read', () => {
    const loaded = loadPjsipConf('[system]\ntype=system\ntimer_t1=50\ntimer_b=1000\nthreadpool_max_size=10\ncompact_headers=yes\nfollow_early_media_fork=no\naccept_multiple_sdp_answers=yes\n', 'pjsip.conf');
    assert.deepEqual(loaded.errors, []);
    assert.deepEqual([loaded.config.system.timerT1, loaded.config.system.timerB], [100, 6400]);
    for (const pattern of [/Timer T1 setting is too low\. Setting to 100/, /Timer B setting is too low\. Setting to 6400/, /threadpool_max_size has no meaning for Patchbay/]) {
      assert.ok(loaded.warnings.some((line) => pattern.test(line)), `${pattern}: ${loaded.warnings.join(' | ')}`);
    }
    assert.ok(!loaded.warnings.some((line) => /compact_headers|follow_early_media_fork|accept_multiple_sdp_answers/.test(line)), loaded.warnings.join(' | '));
    const { compactHeaders, followEarlyMediaFork, acceptMultipleSdpAnswers } = loaded.config.system;
    assert.deepEqual({ compactHeaders, followEarlyMediaFork, acceptMultipleSdpAnswers }, { compactHeaders: true, followEarlyMediaFork: false, acceptMultipleSdpAnswers: true });
    assert.deepEqual([configOf('').system.timerT1, configOf('').system.timerB], [500, 32000]);
    assert.ok(loadPjsipConf('[system]\ntype=system\ntimer_t1=soon\n', 'pjsip.conf').errors.some((line) => /\[system\] timer_t1/.test(line)));
  });
});
