// The protocol-level pieces of NAT handling and of the refusals a user agent owes (no server):
// Contact rewriting to the source (rewrite_contact), undoing a forced rport (force_rport=no),
// dialog membership by Call-ID and both tags, and the 501/405/415/489 decisions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { belongsToDialog } from '../../src/sip/dialog.ts';
import { createResponse, type SipRequest } from '../../src/sip/message.ts';
import { rewriteContactToSource, uriAtSource } from '../../src/sip/nat.ts';
import { parseMessage } from '../../src/sip/parser.ts';
import { refuseMethod, refuseNonSdpBody, refuseSubscription, refuseUnserved } from '../../src/sip/request-checks.ts';
import { responseDestination, stampVia, unforceRport, type Source } from '../../src/sip/transport.ts';
import { parseUri, type SipUri } from '../../src/sip/uri.ts';

function request(lines: string[], body = ''): SipRequest {
  const text = [...lines, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
  const parsed = parseMessage(text);
  assert.ok(parsed.ok, 'parses');
  return parsed.message as SipRequest;
}

const base = (method: string, extra: string[] = []): string[] => [
  `${method} sip:100@192.0.2.1 SIP/2.0`,
  'Via: SIP/2.0/UDP 10.0.0.9:5999;branch=z9hG4bKabc',
  'From: <sip:alice@192.0.2.1>;tag=far',
  'To: <sip:100@192.0.2.1>;tag=near',
  'Call-ID: call-1',
  `CSeq: 2 ${method}`,
  ...extra,
];

const udp: Source = { transport: 'UDP', address: '203.0.113.7', port: 40123 };

describe('NAT: Contact rewriting and rport', () => {
  it('rewrites the first Contact to the source in place, keeping display name and parameters; returns what was written', () => {
    const message = request(base('REGISTER', ['Contact: "Alice" <sip:alice@10.0.0.9:5999;transport=udp;ob>;expires=60, <sip:alice@10.0.0.9:6000>', 'X-After: 1']));
    const original = rewriteContactToSource(message, udp);
    assert.equal(original, 'sip:alice@10.0.0.9:5999;transport=udp;ob');
    const contacts = message.contacts();
    assert.ok(contacts !== 'wildcard');
    assert.equal(contacts.length, 2);
    assert.equal(contacts[0].displayName, 'Alice');
    assert.equal(contacts[0].expires, 60);
    const uri = contacts[0].uri as SipUri;
    assert.deepEqual([uri.user, uri.host, uri.port, uri.params.has('transport'), uri.params.has('ob')], ['alice', '203.0.113.7', 40123, false, true]);
    assert.equal((contacts[1].uri as SipUri).host, '10.0.0.9', 'only the first Contact');
    assert.deepEqual(message.headers.map((header) => header.key).slice(-3), ['contact', 'x-after', 'content-length'], 'the header keeps its place');
  });

  it('over TCP the rewritten URI says ;transport=tcp; maddr is dropped; * and tel: are left alone', () => {
    const uri = parseUri('sip:bob@10.0.0.9;maddr=10.0.0.1') as SipUri;
    const rewritten = uriAtSource(uri, { transport: 'TCP', address: '198.51.100.2', port: 50000 });
    assert.equal(rewritten.params.get('transport'), 'tcp');
    assert.equal(rewritten.params.has('maddr'), false);
    assert.equal(rewriteContactToSource(request(base('REGISTER', ['Contact: *'])), udp), undefined);
    assert.equal(rewriteContactToSource(request(base('REGISTER', ['Contact: <tel:+15551234>'])), udp), undefined);
  });

  it('a forced rport is undone for force_rport=no (the response goes to the Via port at the source address); an asked-for one stays', () => {
    const forced = request(base('REGISTER'));
    stampVia(forced, udp, true, false);
    assert.equal(forced.topVia()?.rport, 40123);
    unforceRport(forced);
    assert.equal(forced.topVia()?.rport, undefined);
    assert.deepEqual(responseDestination(createResponse(forced, 200).topVia()!, udp), { transport: 'UDP', host: '203.0.113.7', port: 5999 });
    const asked = request(base('REGISTER').map((line) => (line.startsWith('Via:') ? `${line};rport` : line)));
    stampVia(asked, udp, true, false);
    unforceRport(asked);
    assert.equal(asked.topVia()?.rport, 40123);
  });
});

describe('dialog membership (RFC 3261 §12.2.2)', () => {
  it('needs the Call-ID, our tag in To and theirs in From', () => {
    const bye = request(base('BYE'));
    assert.equal(belongsToDialog(bye, 'call-1', 'near', 'far'), true);
    assert.equal(belongsToDialog(bye, 'call-1', 'near', 'other'), false);
    assert.equal(belongsToDialog(bye, 'call-1', 'other', 'far'), false);
    assert.equal(belongsToDialog(bye, 'call-2', 'near', 'far'), false);
  });
});

describe('refusals', () => {
  it('an unknown method is 501, a known one not allowed 405, both with Allow', () => {
    assert.equal(refuseMethod('FROB', 'INVITE, BYE').status, 501);
    assert.equal(refuseMethod('PUBLISH', 'INVITE, BYE').status, 405);
    assert.deepEqual(refuseMethod('FROB', 'INVITE, BYE').headers, [['Allow', 'INVITE, BYE']]);
  });

  it('a body that is not plain SDP is 415 naming what is accepted; SDP or no body passes', () => {
    assert.equal(refuseNonSdpBody(request(base('INVITE'))), undefined);
    assert.equal(refuseNonSdpBody(request(base('INVITE', ['Content-Type: application/SDP; charset=utf-8']), 'v=0\r\n')), undefined);
    assert.deepEqual(refuseNonSdpBody(request(base('INVITE', ['Content-Type: text/plain']), 'hello')), { status: 415, headers: [['Accept', 'application/sdp']] });
    assert.deepEqual(refuseNonSdpBody(request(base('INVITE'), 'v=0\r\n'))?.headers, [['Accept', 'application/sdp']], 'no Content-Type');
    assert.deepEqual(refuseNonSdpBody(request(base('INVITE', ['Content-Type: application/sdp', 'Content-Encoding: gzip']), 'xx'))?.headers, [['Accept-Encoding', 'identity']]);
  });

  it('SUBSCRIBE for a package not served is 489 Bad Event; a served one passes', () => {
    const subscribe = request(base('SUBSCRIBE', ['Event: presence;id=1']));
    assert.equal(refuseSubscription(subscribe)?.status, 489);
    assert.equal(refuseSubscription(subscribe, ['presence']), undefined);
    assert.deepEqual(refuseSubscription(request(base('SUBSCRIBE')), ['dialog'])?.headers, [['Allow-Events', 'dialog']]);
    assert.equal(refuseUnserved(subscribe, 'INVITE').status, 489);
    assert.equal(refuseUnserved(request(base('FROB')), 'INVITE').status, 501);
  });
});
