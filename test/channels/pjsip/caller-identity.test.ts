// Caller identity on the wire (src/channels/pjsip/caller-identity.ts), as res_pjsip_caller_id: the
// From, P-Asserted-Identity and Remote-Party-ID of an outbound INVITE, and the caller id of an
// inbound one (trust_id_inbound, the endpoint's callerid, From), with the presentation of each
// (Privacy, RPID privacy/screen, callerid_privacy, trust_id_outbound). Hostile header values are bounded.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inboundCaller, outboundIdentity, outboundIdentityOptions } from '../../../src/channels/pjsip/caller-identity.ts';
import { buildPjsipConfig, type PjsipEndpoint } from '../../../src/channels/pjsip/config/index.ts';
import { SipRequest } from '../../../src/sip/message.ts';
import { bothPresentation, PRES_PROHIB_NOT_SCREENED, PRES_UNAVAILABLE, withNamePresentation } from '../../../src/core/channels/presentation.ts';

const inboundCallerId = (request: SipRequest, of: PjsipEndpoint) => inboundCaller(request, of).id;
const inboundPresentation = (request: SipRequest, of: PjsipEndpoint) => inboundCaller(request, of).presentation;

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

describe('outbound identity of a restricted party', () => {
  const id = { name: 'Front Desk', number: '1001' };
  const prohibited = bothPresentation(PRES_PROHIB_NOT_SCREENED);

  test('From is Anonymous; without trust_id_outbound no identity header carries the id', () => {
    const options = outboundIdentityOptions(endpoint({ send_pai: 'yes', send_rpid: 'yes' }), 'asterisk');
    const { from, headers } = outboundIdentity(options, id, '192.0.2.5', 't1', undefined, prohibited);
    assert.equal(from, '"Anonymous" <sip:anonymous@anonymous.invalid>;tag=t1');
    assert.deepEqual(headers, []);
  });

  test('trust_id_outbound: P-Asserted-Identity with Privacy: id, Remote-Party-ID with privacy=full; From stays Anonymous', () => {
    const options = outboundIdentityOptions(endpoint({ send_pai: 'yes', send_rpid: 'yes', trust_id_outbound: 'yes' }), 'asterisk');
    const { from, headers } = outboundIdentity(options, id, '192.0.2.5', 't1', undefined, prohibited);
    assert.equal(from, '"Anonymous" <sip:anonymous@anonymous.invalid>;tag=t1');
    assert.deepEqual(headers, [
      ['P-Asserted-Identity', '"Front Desk" <sip:1001@192.0.2.5>'],
      ['Privacy', 'id'],
      ['Remote-Party-ID', '"Front Desk" <sip:1001@192.0.2.5>;party=calling;privacy=full;screen=no'],
    ]);
  });

  test('from_user and from_domain win over the anonymous user and host, the name is Anonymous', () => {
    const options = outboundIdentityOptions(endpoint({ from_user: 'trunkuser', from_domain: 'pbx.example' }), 'asterisk');
    assert.equal(outboundIdentity(options, id, '192.0.2.5', 't1', undefined, prohibited).from, '"Anonymous" <sip:trunkuser@pbx.example>;tag=t1');
    const userOnly = outboundIdentityOptions(endpoint({ from_user: 'trunkuser' }), 'asterisk');
    assert.equal(outboundIdentity(userOnly, id, '192.0.2.5', 't1', undefined, prohibited).from, '"Anonymous" <sip:trunkuser@anonymous.invalid>;tag=t1');
  });

  test('unavailable is restricted too; a restricted name alone restricts the party; screen=yes for a screened id', () => {
    const options = outboundIdentityOptions(endpoint({ send_rpid: 'yes', trust_id_outbound: 'yes' }), 'asterisk');
    assert.match(outboundIdentity(options, id, 'h', 't', undefined, bothPresentation(PRES_UNAVAILABLE)).from, /^"Anonymous"/);
    assert.match(outboundIdentity(options, id, 'h', 't', undefined, withNamePresentation(0, PRES_PROHIB_NOT_SCREENED)).from, /^"Anonymous"/);
    assert.deepEqual(outboundIdentity(options, id, 'h', 't', undefined, bothPresentation(0x01)).headers, [['Remote-Party-ID', '"Front Desk" <sip:1001@h>;party=calling;privacy=off;screen=yes']]);
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

  test('trust_id_inbound: Privacy other than none restricts a P-Asserted-Identity; RPID privacy=full and screen=yes', () => {
    const trusting = endpoint({ trust_id_inbound: 'yes' });
    assert.equal(inboundPresentation(invite([from, pai, ['Privacy', 'id']]), trusting), bothPresentation(0x20));
    assert.equal(inboundPresentation(invite([from, pai, ['Privacy', 'none']]), trusting), 0);
    assert.equal(inboundPresentation(invite([from, pai]), trusting), 0);
    const rpid = (params: string) => invite([from, ['Remote-Party-ID', `"R" <sip:555@p>;party=calling${params}`]]);
    assert.equal(inboundPresentation(rpid(';privacy=full;screen=yes'), trusting), bothPresentation(0x21));
    assert.equal(inboundPresentation(rpid(';privacy=off;screen=no'), trusting), 0);
    assert.equal(inboundPresentation(rpid(';privacy=full'), trusting), bothPresentation(0x20));
    // Untrusted: the headers say nothing, the endpoint's callerid_privacy does.
    assert.equal(inboundPresentation(invite([from, pai, ['Privacy', 'id']]), endpoint({})), 0);
  });

  test('callerid_privacy applies to the endpoint id and to From; an anonymous From is read as it is written', () => {
    const private_ = endpoint({ callerid_privacy: 'prohib' });
    assert.equal(inboundPresentation(invite([from]), private_), bothPresentation(0x23));
    assert.equal(inboundPresentation(invite([from]), endpoint({ callerid_privacy: '32', callerid: '<1001>' })), bothPresentation(0x20));
    const anonymous = invite([['From', '"Anonymous" <sip:anonymous@anonymous.invalid>;tag=a']]);
    assert.deepEqual(inboundCaller(anonymous, endpoint({})), { id: { name: 'Anonymous', number: 'anonymous' }, presentation: 0 });
    const built = buildPjsipConfig([{ type: 'endpoint', id: 'bad', fields: { allow: 'ulaw', callerid_privacy: 'secret' } }]);
    assert.ok(built.errors.some((error) => /callerid_privacy|presentation/.test(JSON.stringify(error))), JSON.stringify(built.errors));
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
