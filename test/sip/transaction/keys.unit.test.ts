// How the transaction layer matches messages to transactions (RFC 3261 §17.1.3, §17.2.3) and the
// requests it builds itself (ACK for a 3xx–6xx, §17.1.1.3; CANCEL, §9.1), without sockets or timers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createResponse, SipRequest, type SipMessage } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { ackKey, buildAckForNon2xx, buildCancel, clientKey, serverKey } from '../../../src/sip/transaction/keys.ts';
import { INVITE } from '../samples.ts';

function parsed(text: string): SipMessage {
  const result = parseMessage(text);
  assert.ok(result.ok, result.ok ? '' : result.reason);
  return result.message;
}

function request(text: string): SipRequest {
  const message = parsed(text);
  assert.ok(message instanceof SipRequest);
  return message;
}

/** The sample INVITE with its top Via, method and CSeq replaced. */
function variant(options: { via?: string; method?: string; cseq?: string; route?: string } = {}): SipRequest {
  let text = INVITE;
  if (options.via) text = text.replace(/^Via: .*$/m, `Via: ${options.via}`);
  if (options.method) text = text.replace(/^INVITE /, `${options.method} `);
  if (options.cseq) text = text.replace(/^CSeq: .*$/m, `CSeq: ${options.cseq}`);
  if (options.route) text = text.replace(/^Max-Forwards: 70$/m, `Max-Forwards: 70\r\nRoute: ${options.route}`);
  return request(text);
}

describe('transaction keys', () => {
  test('client transactions: the branch and the method, an ACK matching its INVITE', () => {
    assert.equal(clientKey('z9hG4bK1', 'INVITE'), clientKey('z9hG4bK1', 'ACK'));
    assert.notEqual(clientKey('z9hG4bK1', 'INVITE'), clientKey('z9hG4bK1', 'CANCEL'));
    assert.notEqual(clientKey('z9hG4bK1', 'BYE'), clientKey('z9hG4bK2', 'BYE'));
  });

  test('server transactions (RFC 3261 branch): branch, sent-by and method; ACK and CANCEL told apart from the INVITE where they must be', () => {
    const invite = variant();
    assert.equal(serverKey(invite), serverKey(variant({ method: 'ACK', cseq: '314159 ACK' })));
    assert.notEqual(serverKey(invite), serverKey(variant({ method: 'CANCEL', cseq: '314159 CANCEL' })));
    // The same branch from another sent-by is another transaction (§17.2.3).
    assert.notEqual(serverKey(invite), serverKey(variant({ via: 'SIP/2.0/UDP 192.0.2.99:5060;branch=z9hG4bK776asdhds;rport' })));
    // A CANCEL is matched to the INVITE it cancels by asking for the INVITE's key.
    assert.equal(serverKey(variant({ method: 'CANCEL', cseq: '314159 CANCEL' }), 'INVITE'), serverKey(invite));
  });

  test('server transactions (RFC 2543, no magic cookie): Request-URI, From tag, Call-ID, CSeq number and top Via', () => {
    const old = variant({ via: 'SIP/2.0/UDP 192.0.2.10:5060;branch=oldstyle1' });
    assert.equal(serverKey(old), serverKey(variant({ via: 'SIP/2.0/UDP 192.0.2.10:5060;branch=oldstyle1' })));
    assert.notEqual(serverKey(old), serverKey(variant({ via: 'SIP/2.0/UDP 192.0.2.10:5060;branch=oldstyle1', cseq: '314160 INVITE' })));
    assert.match(serverKey(old), /^2543\|/);
  });

  test('an ACK for a 2xx is matched to it by Call-ID, From tag and CSeq number', () => {
    const invite = variant();
    const ack = variant({ method: 'ACK', cseq: '314159 ACK', via: 'SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bKnewbranch' });
    assert.equal(ackKey(ack), ackKey(invite));
    assert.notEqual(ackKey(variant({ method: 'ACK', cseq: '314160 ACK' })), ackKey(invite));
  });
});

describe('requests the layer builds', () => {
  test("ACK for a 3xx–6xx: the INVITE's top Via, From, Call-ID and Route, the response's To (with its tag), CSeq ACK", () => {
    const invite = variant({ route: '<sip:proxy.example.org;lr>' });
    const busy = createResponse(invite, 486, undefined, { toTag: 'callee-tag' });
    const ack = buildAckForNon2xx(invite, busy);
    assert.equal(ack.method, 'ACK');
    assert.equal(ack.uriText, invite.uriText);
    assert.equal(ack.get('via'), 'SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport');
    assert.equal(ack.get('from'), invite.get('from'));
    assert.equal(ack.get('call-id'), invite.get('call-id'));
    assert.match(ack.get('to') ?? '', /;tag=callee-tag$/);
    assert.equal(ack.get('cseq'), '314159 ACK');
    assert.deepEqual(ack.getAll('route'), ['<sip:proxy.example.org;lr>']);
    assert.equal(ack.get('max-forwards'), '70');
    // The same transaction as the INVITE on the server side.
    assert.equal(serverKey(request(ack.serialize().toString())), serverKey(invite));
  });

  test("CANCEL: the request's top Via (same branch), From, To, Call-ID and Route, CSeq CANCEL, no body", () => {
    const invite = variant({ route: '<sip:proxy.example.org;lr>' });
    const cancel = buildCancel(invite);
    assert.equal(cancel.method, 'CANCEL');
    assert.equal(cancel.uriText, invite.uriText);
    assert.equal(cancel.topVia()?.branch, invite.topVia()?.branch);
    assert.equal(cancel.get('to'), invite.get('to'));
    assert.equal(cancel.get('cseq'), '314159 CANCEL');
    assert.deepEqual(cancel.getAll('route'), ['<sip:proxy.example.org;lr>']);
    assert.equal(cancel.body.length, 0);
  });
});
