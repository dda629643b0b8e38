// An endpoint's own ACL without a server: permit/deny in the order written (pjsip.conf, its records
// and ARI's dynamic configuration), named ACLs (a missing one refuses everything), Contact hosts,
// hostile values refused, Asterisk's log lines ("Not match Endpoint ACL"), and no check at all for an
// endpoint without one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { buildPjsipConfig, loadPjsipConf, type PjsipConfig } from '../../../src/channels/pjsip/config/index.ts';
import { readPjsipConfObjects } from '../../../src/channels/pjsip/objects.ts';
import { buildSipAcls, EndpointAcls } from '../../../src/channels/pjsip/endpoint-acl.ts';
import { aclRequest, capture, configOf, from } from './acl-fixtures.ts';

const request = (contact?: string) => aclRequest('INVITE', contact);

const ENDPOINTS = '[bob]\ntype=endpoint\nallow=ulaw\ndeny=0.0.0.0/0\npermit=127.0.0.0/8\ndeny=127.0.0.5,!127.0.0.0/30\n[open]\ntype=endpoint\nallow=ulaw\n';

describe('endpoint ACL options', () => {
  test('permit and deny are one chain in the order written, in pjsip.conf and through its records', () => {
    const endpoint = configOf(ENDPOINTS).endpoints.get('bob')!;
    assert.deepEqual(endpoint.acls.rules.map((rule) => [rule.text, rule.allow]), [['0.0.0.0/0', false], ['127.0.0.0/8', true], ['127.0.0.5', false], ['!127.0.0.0/30', true]]);
    const dir = mkdtempSync(join(tmpdir(), 'eacl39-'));
    try {
      writeFileSync(join(dir, 'pjsip.conf'), ENDPOINTS);
      const read = readPjsipConfObjects(join(dir, 'pjsip.conf'));
      const fields = read.tree.res_pjsip!.endpoint!.bob!;
      const built = buildPjsipConfig([{ type: 'endpoint', id: 'bob', fields }]).value.endpoints.get('bob')!;
      const acls = EndpointAcls.compile([built], new Map(), capture().log)!;
      const verdicts = ['127.0.0.1', '127.0.0.5', '127.0.0.9', '10.0.0.1'].map((address) => acls.refuses(built, request(), from(address)));
      assert.deepEqual(verdicts, [false, true, false, true]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("ARI's dynamic configuration takes them too (fields applied in order)", () => {
    const built = buildPjsipConfig([{ type: 'endpoint', id: 'eve', fields: { allow: 'ulaw', deny: '0.0.0.0/0', permit: '192.0.2.0/24', contact_deny: '198.51.100.0/24' } }]);
    const endpoint = built.value.endpoints.get('eve')!;
    const acls = EndpointAcls.compile([endpoint], new Map(), capture().log)!;
    assert.equal(acls.refuses(endpoint, request(), from('192.0.2.1')), false);
    assert.equal(acls.refuses(endpoint, request(), from('203.0.113.1')), true);
    assert.equal(acls.refuses(endpoint, request('<sip:eve@198.51.100.3>'), from('192.0.2.1')), true);
  });

  test('hostile values are errors naming file:line', () => {
    for (const [line, expected] of [['deny=10.0.0.0/33', /too long/], ['permit=example.com', /not an IPv4 or IPv6 address/], ['acl=lab,LAB', /occurs multiple times/], ['contact_acl=bad name!', /not an ACL name/]] as const) {
      const loaded = loadPjsipConf(`[bob]\ntype=endpoint\nallow=ulaw\n${line}\n`, 'pjsip.conf');
      assert.ok(loaded.errors.some((error) => /^pjsip\.conf:\d+: \[bob\] /.test(error) && expected.test(error)), `${line}: ${loaded.errors.join(' | ')}`);
    }
  });
});

describe('the check', () => {
  test('an endpoint without an ACL is not checked; none at all compiles to nothing', () => {
    const config = configOf(ENDPOINTS);
    const acls = EndpointAcls.compile(config.endpoints.values(), new Map(), capture().log)!;
    assert.equal(acls.refuses(config.endpoints.get('open')!, request(), from('203.0.113.1')), false);
    assert.equal(EndpointAcls.compile(configOf('[open]\ntype=endpoint\nallow=ulaw\n').endpoints.values(), new Map(), capture().log), undefined);
    const none = buildSipAcls(configOf('[open]\ntype=endpoint\nallow=ulaw\n'), [], undefined, new Map(), capture().log);
    assert.deepEqual(none, { sections: undefined, endpoints: undefined });
  });

  test('named ACLs from acl.conf beside pjsip.conf; a missing one refuses everything, named at build', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eacl39-'));
    try {
      writeFileSync(join(dir, 'acl.conf'), '[lab]\npermit=0.0.0.0/0\ndeny=127.0.0.6\n');
      const { log, lines } = capture();
      const config = configOf('[dave]\ntype=endpoint\nallow=ulaw\nacl=lab\n[erin]\ntype=endpoint\nallow=ulaw\ncontact_acl=nowhere\n');
      const { sections, endpoints } = buildSipAcls(config, [], join(dir, 'pjsip.conf'), new Map(), log);
      assert.equal(sections, undefined, 'no type=acl section: nothing screens every request');
      const dave = config.endpoints.get('dave')!;
      assert.equal(endpoints!.refuses(dave, request(), from('127.0.0.7')), false);
      assert.equal(endpoints!.refuses(dave, request(), from('127.0.0.6')), true);
      const erin = config.endpoints.get('erin')!;
      assert.equal(endpoints!.refuses(erin, request(), from('127.0.0.7')), false, 'no Contact: a contact ACL has nothing to refuse');
      assert.equal(endpoints!.refuses(erin, request('<sip:erin@127.0.0.7>'), from('127.0.0.7')), true);
      assert.ok(lines.some((line) => line.level === 50 && /\[endpoint erin\] acl nowhere: no such ACL/.test(line.msg)), lines.map((line) => line.msg).join(' | '));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("logs as Asterisk's distributor: the ACL NOTICE, then the request's 'Not match Endpoint ACL'; at most one pair a second", () => {
    const { log, lines } = capture();
    let clock = 1_000_000;
    const config = configOf('[bob]\ntype=endpoint\nallow=ulaw\ndeny=127.0.0.5\ncontact_deny=192.0.2.0/24\n');
    const bob = config.endpoints.get('bob')!;
    const acls = EndpointAcls.compile(config.endpoints.values(), new Map(), log, () => clock)!;
    for (let i = 0; i < 20; i++) acls.refuses(bob, request(), from('127.0.0.5', 5070));
    acls.refuses(bob, request('<sip:bob@192.0.2.4>'), from('127.0.0.1', 5062));
    clock += 1000;
    acls.refuses(bob, request(), from('127.0.0.5', 5070));
    assert.deepEqual(lines.map((line) => [line.level, line.msg, line.suppressed]), [
      [30, "SIP ACL: Rejecting '127.0.0.5' due to a failure to pass ACL '(BASELINE)'", undefined],
      [30, "Request 'INVITE' from '<sip:bob@example.org>' failed for '127.0.0.5:5070' (callid: c1) - Not match Endpoint ACL", undefined],
      [30, "SIP Contact ACL: Rejecting '192.0.2.4' due to a failure to pass ACL '(BASELINE)'", undefined],
      [30, "Request 'INVITE' from '<sip:bob@example.org>' failed for '127.0.0.1:5062' (callid: c1) - Not match Endpoint Contact ACL", undefined],
      [30, "SIP ACL: Rejecting '127.0.0.5' due to a failure to pass ACL '(BASELINE)'", 19],
      [30, "Request 'INVITE' from '<sip:bob@example.org>' failed for '127.0.0.5:5070' (callid: c1) - Not match Endpoint ACL", 19],
    ]);
  });
});
