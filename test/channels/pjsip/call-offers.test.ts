// Our offers in a confirmed dialog refused (call-offers.ts), the cases SIPp's tests do not reach in
// a few seconds: a re-INVITE never answered or lost by the transport ends the call (cause 18); a
// refresh answered 502 ends it (27), one answered 503 goes again 10 s later, one due while another
// offer is open waits 1 s, and so does a hold re-INVITE; a second 422 in a row is not followed; a 488 restores our SDP and tells
// the hold. A fake transaction layer keeps what is sent and answers it by hand.
import assert from 'node:assert/strict';
import { afterEach, test, mock } from 'node:test';
import pino from 'pino';
import { CallDialogRequests, type InDialogSender } from '../../../src/channels/pjsip/call-dialog-requests.ts';
import { CallMedia } from '../../../src/channels/pjsip/call-media.ts';
import { CallOffers, OFFER_WAIT_MS, REFRESH_RETRY_AFTER_503_MS } from '../../../src/channels/pjsip/call-offers.ts';
import { CallSession } from '../../../src/channels/pjsip/call-session.ts';
import { Dialog } from '../../../src/sip/dialog.ts';
import { SipResponse, type SipRequest } from '../../../src/sip/message.ts';
import type { ClientHandlers, ClientTransaction } from '../../../src/sip/transaction/index.ts';
import { parseUri } from '../../../src/sip/uri.ts';

const log = pino({ level: 'silent' });

afterEach(() => mock.timers.reset());

/** A call's offers over a fake layer: what went out, and the call's end (cause, why) once it came. */
function harness(options: { timers?: boolean } = {}) {
  const sent: Array<{ request: SipRequest; handlers: ClientHandlers }> = [];
  const layer: InDialogSender = {
    sendRequest: (request, _hop, handlers = {}) => {
      sent.push({ request, handlers });
      return {} as ClientTransaction;
    },
    sendAck: async () => undefined,
  };
  const remoteTarget = parseUri('sip:bob@192.0.2.10:5060');
  assert.ok(remoteTarget);
  const dialog = new Dialog({
    callId: 'call-1', localTag: 'ours', remoteTag: 'theirs', localParty: '<sip:pb@192.0.2.1>', remoteParty: '<sip:bob@192.0.2.10>',
    localSeq: 10, remoteTarget, routeSet: [], secure: false, state: 'confirmed',
  });
  const call = { dialog, ended: false, stream: {} };
  const services = { layer, log, userAgent: 'test' };
  const sdp = new CallMedia(['ulaw'], { dtmfMode: 'rfc4733', rtcpMux: false }, () => '192.0.2.1', () => undefined);
  sdp.offer(false);
  const session = new CallSession(
    options.timers ? { reliableProvisionals: 'yes', sessionTimers: { mode: 'yes', minSe: 90, sessionExpires: 1800 } } : {},
    { refresh: () => undefined, expire: () => undefined },
  );
  const route = { dialog, ended: false, signallingTransport: 'UDP' as const, signallingListener: undefined, signallingConnection: undefined, relayedFlow: undefined };
  const ends: Array<{ cause: number; why: string }> = [];
  const terms = { ownsCallId: true, dialogHeaders: (): Array<[string, string]> => [['Contact', '<sip:pb@192.0.2.1>']], ended: (cause: number, why: string) => void ends.push({ cause, why }) };
  const offers = new CallOffers(services, call, terms, sdp, session, new CallDialogRequests(services, route));
  const answer = (index: number, status: number, headers: Array<[string, string]> = []): void => {
    const request = sent[index]?.request;
    assert.ok(request, `request ${index} was sent`);
    sent[index]?.handlers.onResponse?.(new SipResponse(status, 'Answer', [['CSeq', request.get('cseq') ?? ''], ...headers]), { request } as unknown as ClientTransaction);
  };
  return { sent, sdp, offers, ends, answer };
}

test('a re-INVITE never answered (Timer B) or lost by the transport ends the call with cause 18', () => {
  for (const fail of ['onTimeout', 'onTransportError'] as const) {
    const { sent, offers, ends, sdp } = harness();
    assert.equal(offers.reinvite('sendonly'), true);
    if (fail === 'onTimeout') sent[0]?.handlers.onTimeout?.({} as ClientTransaction);
    else sent[0]?.handlers.onTransportError?.(new Error('connection reset'), {} as ClientTransaction);
    assert.deepEqual(ends.map((end) => end.cause), [18], fail);
    assert.equal(sdp.exchange.open, 'none', 'the exchange is closed');
  }
});

test('a re-INVITE refused 488 restores the SDP in force and tells the hold; the next offer\'s o= version is above the refused one\'s', () => {
  const { sdp, offers, ends, answer, sent } = harness();
  const before = sdp.localSdp;
  let refused = 0;
  offers.reinvite('sendonly', () => refused++);
  assert.equal(sdp.exchange.open, 'ours');
  answer(0, 488);
  assert.equal(refused, 1);
  assert.equal(ends.length, 0, 'the call goes on');
  assert.equal(sdp.localSdp, before, 'our SDP is the one in force before the refused offer');
  assert.equal(sdp.exchange.open, 'none');
  offers.reinvite('sendonly');
  const version = (index: number): number => Number(/^o=\S+ \S+ (\d+)/m.exec(sent[index]?.request.body.toString() ?? '')?.[1]);
  assert.ok(version(1) > version(0));
});

test('a refresh answered 502 ends the call (27); one answered 503 goes again 10 s later; one refused 500 is not repeated', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  const ended = harness();
  ended.offers.refresh();
  ended.answer(0, 502);
  assert.deepEqual(ended.ends.map((end) => end.cause), [27]);

  const retried = harness();
  retried.offers.refresh();
  retried.answer(0, 503);
  assert.equal(retried.sent.length, 1, 'not at once');
  mock.timers.tick(REFRESH_RETRY_AFTER_503_MS);
  assert.equal(retried.sent.length, 2, 'again 10 s later');
  assert.equal(retried.sent[1]?.request.method, 'INVITE');
  assert.equal(retried.ends.length, 0);

  const refused = harness();
  refused.offers.refresh();
  refused.answer(0, 500);
  mock.timers.tick(60_000);
  assert.equal(refused.sent.length, 1);
  assert.equal(refused.ends.length, 0, 'the session expires by its own timer, not here');
});

test('a refresh due while our re-INVITE is unanswered waits, and goes once the exchange closed', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  const { sent, offers, answer } = harness();
  offers.reinvite('sendonly');
  offers.refresh();
  assert.equal(sent.length, 1, 'no second INVITE transaction while the first is open');
  answer(0, 500);
  mock.timers.tick(OFFER_WAIT_MS);
  assert.equal(sent.length, 2);
  assert.equal(sent[1]?.request.method, 'INVITE');
});

test('a refresh refused 422 goes again with the Min-SE asked; a second 422 in a row is not followed', () => {
  const { sent, offers, answer, ends } = harness({ timers: true });
  offers.refresh();
  assert.match(sent[0]?.request.get('session-expires') ?? '', /^1800;refresher=uac$/);
  answer(0, 422, [['Min-SE', '3600']]);
  assert.equal(sent.length, 2);
  assert.match(sent[1]?.request.get('session-expires') ?? '', /^3600;refresher=uac$/);
  assert.equal(sent[1]?.request.get('min-se'), '3600');
  answer(1, 422, [['Min-SE', '7200']]);
  assert.equal(sent.length, 2, 'no loop of 422s');
  assert.equal(ends.length, 0);
});

test('a hold re-INVITE while our refresh is unanswered waits for it (no two INVITE transactions), then goes', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  const { sent, offers, answer } = harness();
  offers.refresh();
  assert.equal(offers.reinvite('sendonly'), true, 'it will go');
  assert.equal(sent.length, 1);
  mock.timers.tick(OFFER_WAIT_MS);
  assert.equal(sent.length, 1, 'still waiting: the refresh is unanswered');
  answer(0, 200);
  mock.timers.tick(OFFER_WAIT_MS);
  assert.equal(sent.length, 2);
  assert.match(sent[1]?.request.body.toString() ?? '', /^a=sendonly/m);
});
