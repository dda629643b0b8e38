// The offer/answer exchange still open (src/sip/sdp/offer-exchange.ts) and how another offer is
// refused meanwhile (RFC 3311 §5.2, as Asterisk's stack refuses it): 491 while ours waits for its
// answer, 500 with a Retry-After of 0–10 s while the far end's is unanswered, nothing once closed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OfferExchange } from '../../src/sip/sdp/offer-exchange.ts';

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
