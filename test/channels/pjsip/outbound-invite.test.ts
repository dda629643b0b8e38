// The outbound INVITE's own state (outbound-invite.ts): the request as written, the early dialogs
// its 1xx responses open (bounded: a far end forking without end cannot grow the set), and a
// challenge it has no credentials for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SipResponse, type SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import type { ClientTransaction, TransactionLayer } from '../../../src/sip/transaction/index.ts';
import { parseUri } from '../../../src/sip/uri.ts';
import { inviteRequest, OutboundInvite } from '../../../src/channels/pjsip/outbound-invite.ts';

const target = parseUri('sip:bob@192.0.2.10:5060');
assert.ok(target);

function invite(): SipRequest {
  return inviteRequest({
    target: target!, route: undefined, from: '<sip:alice@192.0.2.1>;tag=ours', callId: 'call-1', contact: '<sip:alice@192.0.2.1:5060>',
    allow: 'INVITE, ACK, BYE', userAgent: 'test', headers: [['X-Extra', 'one']], offer: 'v=0\r\n',
  });
}

function provisional(tag: string): SipResponse {
  return new SipResponse(180, 'Ringing', [['From', '<sip:alice@192.0.2.1>;tag=ours'], ['To', `<sip:bob@192.0.2.10>;tag=${tag}`], ['Call-ID', 'call-1'], ['CSeq', '1 INVITE']]);
}

function inDialogRequest(theirTag: string): SipRequest {
  const text = [
    'BYE sip:alice@192.0.2.1:5060 SIP/2.0', 'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK1', 'Max-Forwards: 70',
    `From: <sip:bob@192.0.2.10>;tag=${theirTag}`, 'To: <sip:alice@192.0.2.1>;tag=ours', 'Call-ID: call-1', 'CSeq: 2 BYE', 'Content-Length: 0', '', '',
  ].join('\r\n');
  const parsed = parseMessage(text);
  assert.ok(parsed.ok && 'method' in parsed.message);
  return parsed.message as SipRequest;
}

function sender(): { layer: Pick<TransactionLayer, 'sendRequest'>; sent: SipRequest[] } {
  const sent: SipRequest[] = [];
  return { sent, layer: { sendRequest: (request: SipRequest) => (sent.push(request), {} as ClientTransaction) } };
}

test('the INVITE carries its fixed headers, then the given ones, and the offer', () => {
  const request = invite();
  assert.equal(request.method, 'INVITE');
  assert.equal(request.get('cseq'), '1 INVITE');
  assert.equal(request.get('x-extra'), 'one');
  assert.equal(request.get('content-type'), 'application/sdp');
  assert.equal(request.body.toString(), 'v=0\r\n');
});

test('requests in an early dialog are the call\'s; the remembered forks are bounded', () => {
  const { layer, sent } = sender();
  const outbound = new OutboundInvite(layer, { transport: 'UDP', host: '192.0.2.10', port: 5060 }, []);
  outbound.send(invite(), {});
  assert.equal(sent.length, 1);
  assert.equal(outbound.inEarlyDialog(inDialogRequest('fork0'), 'call-1'), false);
  for (let i = 0; i < 40; i++) outbound.provisional(provisional(`fork${i}`));
  assert.equal(outbound.inEarlyDialog(inDialogRequest('fork0'), 'call-1'), true);
  assert.equal(outbound.inEarlyDialog(inDialogRequest('fork15'), 'call-1'), true);
  assert.equal(outbound.inEarlyDialog(inDialogRequest('fork16'), 'call-1'), false, 'past the bound a fork is not remembered');
  assert.equal(outbound.inEarlyDialog(inDialogRequest('fork0'), 'another-call'), false);
});

test('a challenge without credentials for it is not answered', () => {
  const { layer, sent } = sender();
  const outbound = new OutboundInvite(layer, { transport: 'UDP', host: '192.0.2.10', port: 5060 }, []);
  assert.equal(outbound.answerChallenge(provisional('x'), {}), undefined, 'nothing sent yet: nothing to answer');
  outbound.send(invite(), {});
  const challenge = new SipResponse(401, 'Unauthorized', [['WWW-Authenticate', 'Digest realm="example", nonce="abc"'], ['Call-ID', 'call-1'], ['CSeq', '1 INVITE']]);
  const outcome = outbound.answerChallenge(challenge, {});
  assert.equal(outcome?.ok, false);
  assert.equal(sent.length, 1);
});
