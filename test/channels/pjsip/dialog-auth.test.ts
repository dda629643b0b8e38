// The challenge answers of a call's requests in its dialog (dialog-auth.ts), against a fake
// transaction layer playing a hostile far end: each retry takes the dialog's next CSeq, the caller
// sees only the last try's final response, and a far end that challenges without end (stale nonces,
// request after request) is answered a bounded number of times per call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DialogAuth } from '../../../src/channels/pjsip/dialog-auth.ts';
import { inviteRequest } from '../../../src/channels/pjsip/outbound-invite.ts';
import { MAX_CHALLENGES } from '../../../src/sip/auth/request-challenges.ts';
import { Dialog } from '../../../src/sip/dialog.ts';
import { SipResponse, type SipRequest } from '../../../src/sip/message.ts';
import type { ClientHandlers, ClientTransaction } from '../../../src/sip/transaction/index.ts';
import { parseUri } from '../../../src/sip/uri.ts';

const destination = { transport: 'UDP' as const, host: '192.0.2.10', port: 5060 };
const credentials = [{ username: 'trunkuser', password: 'trunkpass' }];
const quietLog = { log: { debug: () => undefined, info: () => undefined } } as never;

function confirmedDialog(): Dialog {
  const target = parseUri('sip:bob@192.0.2.10:5060');
  assert.ok(target);
  const invite = inviteRequest({
    target, route: undefined, from: '<sip:alice@192.0.2.1>;tag=ours', callId: 'call-1', contact: '<sip:alice@192.0.2.1:5060>',
    allow: 'INVITE, ACK, BYE', userAgent: 'test', headers: [], offer: 'v=0\r\n',
  });
  const ok = new SipResponse(200, 'OK', [['From', '<sip:alice@192.0.2.1>;tag=ours'], ['To', '<sip:bob@192.0.2.10>;tag=theirs'], ['Call-ID', 'call-1'], ['CSeq', '1 INVITE'], ['Contact', '<sip:bob@192.0.2.10:5060>']]);
  const dialog = Dialog.asUac(invite, ok);
  assert.ok(dialog);
  return dialog;
}

/** A fake layer: what was sent, with the handlers and the transaction it was sent in. */
function layer(): { sendRequest: (request: SipRequest, to: unknown, handlers?: ClientHandlers) => ClientTransaction; sent: Array<{ request: SipRequest; handlers: ClientHandlers; tx: ClientTransaction }> } {
  const sent: Array<{ request: SipRequest; handlers: ClientHandlers; tx: ClientTransaction }> = [];
  return {
    sent,
    sendRequest: (request, _to, handlers = {}) => {
      const tx = { request } as unknown as ClientTransaction;
      sent.push({ request, handlers, tx });
      return tx;
    },
  };
}

function challenge(to: SipRequest, status: 401 | 407, nonce: string, stale = false): SipResponse {
  const name = status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate';
  return new SipResponse(status, 'Challenge', [['Call-ID', 'call-1'], ['CSeq', to.get('cseq') ?? ''], [name, `Digest realm="provider.example", nonce="${nonce}", qop="auth"${stale ? ', stale=true' : ''}`]]);
}

function answer(entry: { request: SipRequest; handlers: ClientHandlers; tx: ClientTransaction }, response: SipResponse): void {
  entry.handlers.onResponse?.(response, entry.tx);
}

test('a challenged request goes again with the dialog\'s next CSeq, above a request sent meanwhile; the caller sees the last final response', () => {
  const dialog = confirmedDialog();
  const fake = layer();
  const auth = new DialogAuth(quietLog, credentials, () => 0);
  const finals: number[] = [];
  const terminated: SipRequest[] = [];
  const info = dialog.createRequest('INFO', { body: 'Signal=5\r\n', contentType: 'application/dtmf-relay' });
  auth.send(fake, dialog, info, destination, { onResponse: (response) => finals.push(response.status), onTerminated: (tx) => terminated.push(tx.request) });
  const notify = dialog.createRequest('NOTIFY');
  answer(fake.sent[0]!, challenge(info, 401, 'n1'));
  assert.deepEqual(finals, [], 'the challenge is not the caller\'s');
  const retry = fake.sent[1]!.request;
  assert.equal(retry.method, 'INFO');
  assert.equal(retry.cseq()?.seq, (notify.cseq()?.seq ?? 0) + 1, 'the dialog\'s next CSeq');
  assert.equal(dialog.localSeq, retry.cseq()?.seq, 'the dialog counted it');
  assert.equal(retry.callId(), info.callId());
  assert.equal(retry.fromTag(), 'ours');
  assert.match(retry.get('authorization') ?? '', /nonce="n1".*nc=00000001/);
  assert.equal(retry.body.toString(), 'Signal=5\r\n');
  fake.sent[0]!.handlers.onTerminated?.(fake.sent[0]!.tx);
  assert.deepEqual(terminated, [], 'the challenged transaction ends unseen');
  answer(fake.sent[1]!, new SipResponse(200, 'OK', [['CSeq', retry.get('cseq') ?? '']]));
  fake.sent[1]!.handlers.onTerminated?.(fake.sent[1]!.tx);
  assert.deepEqual(finals, [200]);
  assert.deepEqual(terminated, [retry]);
});

test('a realm challenging again without stale refused our credentials: its second challenge is the answer', () => {
  const dialog = confirmedDialog();
  const fake = layer();
  const auth = new DialogAuth(quietLog, credentials, () => 0);
  const finals: number[] = [];
  const bye = dialog.createRequest('BYE');
  auth.send(fake, dialog, bye, destination, { onResponse: (response) => finals.push(response.status) });
  answer(fake.sent[0]!, challenge(bye, 407, 'p1'));
  answer(fake.sent[1]!, challenge(fake.sent[1]!.request, 407, 'p2'));
  assert.equal(fake.sent.length, 2, 'no third BYE');
  assert.deepEqual(finals, [407]);
});

test('without credentials a challenge is the answer at once', () => {
  const dialog = confirmedDialog();
  const fake = layer();
  const auth = new DialogAuth(quietLog, [], () => 0);
  const finals: number[] = [];
  const reinvite = dialog.createRequest('INVITE', { body: 'v=0\r\n', contentType: 'application/sdp' });
  auth.send(fake, dialog, reinvite, destination, { onResponse: (response) => finals.push(response.status) });
  answer(fake.sent[0]!, challenge(reinvite, 401, 'x'));
  assert.equal(fake.sent.length, 1);
  assert.deepEqual(finals, [401]);
});

test('a far end challenging without end (stale nonces, request after request) is answered a bounded number of times per call, the INVITE\'s included', () => {
  const dialog = confirmedDialog();
  const fake = layer();
  const inviteChallenges = 2;
  const auth = new DialogAuth(quietLog, credentials, () => inviteChallenges);
  const finals: number[] = [];
  for (let round = 0; round < 3; round++) {
    const info = dialog.createRequest('INFO');
    const first = fake.sent.length;
    auth.send(fake, dialog, info, destination, { onResponse: (response) => finals.push(response.status) });
    for (let i = first; i < fake.sent.length && i < first + 50; i++) answer(fake.sent[i]!, challenge(fake.sent[i]!.request, 401, `stale${i}`, i > first));
  }
  // Asterisk answers while ++count < MAX_RX_CHALLENGES: MAX_CHALLENGES - 1 challenges per session.
  const retries = fake.sent.length - 3;
  assert.equal(retries, MAX_CHALLENGES - 1 - inviteChallenges, `retries in all: ${retries}`);
  assert.deepEqual(finals, [401, 401, 401], 'each request ends with a challenge its caller sees');
});
