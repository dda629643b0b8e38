// The offer/answer exchange still open (src/sip/sdp/offer-exchange.ts) and how another offer is
// refused meanwhile (RFC 3311 §5.2, as Asterisk's stack refuses it): 491 while ours waits for its
// answer, 500 with a Retry-After of 0–10 s while the far end's is unanswered, nothing once closed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SipResponse } from '../../src/sip/message.ts';
import { failedOffer, glareRetryDelayMs, OfferExchange } from '../../src/sip/sdp/offer-exchange.ts';

test('no exchange open: another offer may be answered', () => {
  assert.equal(new OfferExchange().refusal(), undefined);
});

test('the far end\'s offer unanswered: 500 with Retry-After, bounded to 0–10 s whatever the draw', () => {
  const exchange = new OfferExchange();
  exchange.theirsReceived();
  assert.deepEqual(exchange.refusal(() => 0), { status: 500, reason: 'Server Internal Error', headers: [['Retry-After', '0']] });
  assert.deepEqual(exchange.refusal(() => 0.9999999)?.headers, [['Retry-After', '10']]);
  assert.deepEqual(exchange.refusal(() => 1)?.headers, [['Retry-After', '10']]);
  exchange.closed();
  assert.equal(exchange.refusal(), undefined, 'answered: open no more');
});

test('our offer awaiting its answer: 491 Request Pending, until the answer comes', () => {
  const exchange = new OfferExchange();
  exchange.oursSent();
  assert.equal(exchange.open, 'ours');
  assert.deepEqual(exchange.refusal(), { status: 491, reason: 'Request Pending', headers: [] });
  exchange.closed();
  assert.equal(exchange.open, 'none');
});

test('the wait before sending again an offer refused 491 (RFC 3261 §14.1): 2.1–4 s in 10 ms steps when we own the Call-ID, else 0–2 s', () => {
  assert.equal(glareRetryDelayMs(true, () => 0), 2100);
  assert.equal(glareRetryDelayMs(true, () => 0.9999999), 4000);
  assert.equal(glareRetryDelayMs(true, () => 1), 4000, 'bounded whatever the draw');
  assert.equal(glareRetryDelayMs(false, () => 0), 0);
  assert.equal(glareRetryDelayMs(false, () => 0.9999999), 2000);
  assert.equal(glareRetryDelayMs(false, () => 0.5) % 10, 0, 'in steps of 10 ms');
});

test('a 491 to our offer closes the exchange and resends it after the wait; a newer offer, or the end, cancels the retry', async () => {
  const exchange = new OfferExchange();
  exchange.oursSent();
  let resent = 0;
  exchange.retryAfterGlare(false, () => resent++, () => 0);
  assert.equal(exchange.open, 'none', 'refused: our offer is no longer open');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(resent, 1, 'sent again after the (here 0 ms) wait');
  exchange.retryAfterGlare(false, () => resent++, () => 0.5);
  exchange.cancelRetry();
  await new Promise((resolve) => setTimeout(resolve, 1100));
  assert.equal(resent, 1, 'a cancelled retry is not sent');
});

test('a refusal of our offer (RFC 3261 §14.1, §12.2.1.2, RFC 5057, RFC 4028 §6): glare, the dialog gone, a longer interval asked, or the session as before', () => {
  assert.deepEqual(failedOffer(new SipResponse(491, 'Request Pending')), { kind: 'glare' });
  assert.deepEqual(failedOffer(new SipResponse(408, 'Request Timeout')), { kind: 'dialog-gone', status: 408 });
  assert.deepEqual(failedOffer(new SipResponse(481, 'Call/Transaction Does Not Exist')), { kind: 'dialog-gone', status: 481 });
  assert.deepEqual(failedOffer(undefined), { kind: 'dialog-gone', status: 408 }, 'no response at all is a 408');
  for (const status of [488, 500, 403, 503, 606]) assert.deepEqual(failedOffer(new SipResponse(status, 'No')), { kind: 'refused', status });
  const tooSmall = new SipResponse(422, 'Session Interval Too Small', [['Min-SE', '120']]);
  assert.deepEqual(failedOffer(tooSmall, 90), { kind: 'interval-too-small', minSe: 120 });
  assert.deepEqual(failedOffer(tooSmall), { kind: 'refused', status: 422 }, 'a 422 to an offer that asked no interval (a hold) is a refusal');
  assert.deepEqual(failedOffer(tooSmall, 120), { kind: 'refused', status: 422 }, 'a Min-SE no larger than asked cannot be met by asking again');
  assert.deepEqual(failedOffer(new SipResponse(422, 'Session Interval Too Small'), 90), { kind: 'refused', status: 422 }, 'a 422 without Min-SE');
  assert.deepEqual(failedOffer(new SipResponse(422, 'Session Interval Too Small', [['Min-SE', '99999999999']]), 90), { kind: 'refused', status: 422 }, 'an absurd Min-SE');
});
