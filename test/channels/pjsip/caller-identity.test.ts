// Caller identity on the wire (src/channels/pjsip/caller-identity.ts), as res_pjsip_caller_id: the
// From, P-Asserted-Identity and Remote-Party-ID of an outbound INVITE, and the caller id of an
// inbound one (trust_id_inbound, the endpoint's callerid, From). Hostile header values are bounded.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inboundCallerId, outboundIdentity, outboundIdentityOptions } from '../../../src/channels/pjsip/caller-identity.ts';
import { buildPjsipConfig, type PjsipEndpoint } from '../../../src/channels/pjsip/config/index.ts';
import { SipRequest } from '../../../src/sip/message.ts';

function endpoint(fields: Record<string, string>): PjsipEndpoint {
  const built = buildPjsipConfig([{ type: 'endpoint', id: 'trunk', fields: { allow: 'ulaw', ...fields } }]);
  assert.deepEqual(built.errors, []);
  return built.value.endpoints.get('trunk')!;
}

function invite(headers: Array<[string, string]>): SipRequest {
  return new SipRequest('INVITE', 'sip:100@127.0.0.1', [['Call-ID', 'c1'], ['CSeq', '1 INVITE'], ['To', '<sip:100@127.0.0.1>'], ...headers]);
}

describe('outbound identity', () => {
  const id = { name: 'Front Desk', number: '1001' };

  test('From carries the caller id on our address; no identity headers unless asked', () => {
    const { from, headers } = outboundIdentity(outboundIdentityOptions(endpoint({}), 'asterisk'), id, '192.0.2.5', 't1');
    assert.equal(from, '"Front Desk" <sip:1001@192.0.2.5>;tag=t1');
    assert.deepEqual(headers, []);
  });

  test('from_domain, send_pai, send_rpid', () => {
    const options = outboundIdentityOptions(endpoint({ from_domain: 'pbx.example', send_pai: 'yes', send_rpid: 'yes' }), 'asterisk');
    const { from, headers } = outboundIdentity(options, id, '192.0.2.5', 't1');
    assert.equal(from, '"Front Desk" <sip:1001@pbx.example>;tag=t1');
    assert.deepEqual(headers, [
      ['P-Asserted-Identity', '"Front Desk" <sip:1001@pbx.example>'],
      ['Remote-Party-ID', '"Front Desk" <sip:1001@pbx.example>;party=calling;privacy=off;screen=no'],
    ]);
  });

  test('from_user fixes the From user (no display name); the identity headers still carry the caller', () => {
    const options = outboundIdentityOptions(endpoint({ from_user: 'trunkuser', send_pai: 'yes' }), 'asterisk');
    const { from, headers } = outboundIdentity(options, id, '192.0.2.5', 't1');
    assert.equal(from, '<sip:trunkuser@192.0.2.5>;tag=t1');
    assert.deepEqual(headers, [['P-Asserted-Identity', '"Front Desk" <sip:1001@192.0.2.5>']]);
  });

  test('no number: the global default_from_user, no identity headers; odd characters are escaped or dropped', () => {
    const options = outboundIdentityOptions(endpoint({ send_pai: 'yes' }), 'asterisk');
    assert.deepEqual(outboundIdentity(options, { name: '', number: '' }, '192.0.2.5', 't1'), { from: '<sip:asterisk@192.0.2.5>;tag=t1', headers: [] });
    const odd = outboundIdentity(options, { name: 'Eve "the" \r\nSpy', number: '+1 555<>' }, '192.0.2.5', 't1');
    assert.doesNotMatch(odd.from, /[\r\n]/);
    assert.match(odd.from, /^"Eve \\"the\\" Spy" <sip:\+1%20555%3C%3E@192\.0\.2\.5>;tag=t1$/);
  });
});

describe('inbound caller id', () => {
  const pai: [string, string] = ['P-Asserted-Identity', '"Asserted" <sip:+15550001@provider.example>, <tel:+15550001>'];
  const from: [string, string] = ['From', '"From Name" <sip:0299887766@provider.example>;tag=f1'];

  test('From by default, whatever P-Asserted-Identity says', () => {
    assert.deepEqual(inboundCallerId(invite([from, pai]), endpoint({})), { name: 'From Name', number: '0299887766' });
  });

  test('trust_id_inbound: P-Asserted-Identity, else Remote-Party-ID (a tel: URI too), else From', () => {
    const trusting = endpoint({ trust_id_inbound: 'yes' });
    assert.deepEqual(inboundCallerId(invite([from, pai]), trusting), { name: 'Asserted', number: '+15550001' });
    assert.deepEqual(inboundCallerId(invite([from, ['Remote-Party-ID', '<tel:+15550002;phone-context=x>;party=calling']]), trusting), { name: '', number: '+15550002' });
    assert.deepEqual(inboundCallerId(invite([from, ['P-Asserted-Identity', 'garbage <<<']]), trusting), { name: 'From Name', number: '0299887766' });
  });

  test("the endpoint's callerid wins over From; a callerid without number keeps From's number", () => {
    assert.deepEqual(inboundCallerId(invite([from]), endpoint({ callerid: '"Desk" <1001>' })), { name: 'Desk', number: '1001' });
    assert.deepEqual(inboundCallerId(invite([from]), endpoint({ callerid: '"Desk" <>' })), { name: 'Desk', number: '0299887766' });
  });

  test('hostile values are bounded and stripped of control characters', () => {
    const long = 'x'.repeat(5000);
    const id = inboundCallerId(invite([['From', `"${long}" <sip:${long}@h>;tag=f`]]), endpoint({}));
    assert.ok(id.name.length <= 80 && id.number.length <= 80, JSON.stringify(id).slice(0, 100));
  });
});
