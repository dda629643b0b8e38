// The figures behind the operator console: the SIP ladder's bounds, masks and rate gate, and the
// E-model's MOS for clean and lossy calls.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SipLadder, maskDigestResponses } from '../../src/channels/pjsip/sip-ladder.ts';
import type { SipMessage } from '../../src/sip/message.ts';
import { parseMessage } from '../../src/sip/parser.ts';
import { estimateMos, mosRating } from '../../src/util/e-model.ts';
import { openDatabase } from '../../src/core/database.ts';
import { QualityStore } from '../../src/core/cdr/quality-store.ts';
import { consoleRoute, type ConsoleSources } from '../../src/ops/console-routes.ts';
import { CallQuality } from '../../src/core/call-quality.ts';
import { MetricsHistory } from '../../src/ops/metrics-history.ts';

function invite(callId: string, extra = ''): SipMessage {
  const parsed = parseMessage(Buffer.from(
    `INVITE sip:100@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1\r\nFrom: <sip:alice@127.0.0.1>;tag=a\r\nTo: <sip:100@127.0.0.1>\r\nCall-ID: ${callId}\r\nCSeq: 1 INVITE\r\n${extra}Content-Length: 0\r\n\r\n`,
  ));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.message;
}

test('the ladder keeps the last messages of each dialog, masks keys and digest responses', () => {
  const ladder = new SipLadder({ messagesPerDialog: 3, dialogs: 2, maxCallRate: 100 });
  const auth = 'Authorization: Digest username="alice", realm="x", nonce="n", uri="sip:100@127.0.0.1", response="0123456789abcdef"\r\n';
  ladder.record(invite('one', auth), 'in', 'UDP', '127.0.0.1', 5070);
  const kept = ladder.get('one')!;
  assert.equal(kept.kind, 'INVITE');
  assert.doesNotMatch(kept.messages[0]!.text, /0123456789abcdef/);
  assert.match(kept.messages[0]!.text, /response="\[masked\]"/);
  // More of the same dialog: the INVITE received again (one sent with the caller's tag would be the
  // other leg of a call Patchbay places to itself, a ladder of its own).
  for (let i = 0; i < 5; i++) ladder.record(invite('one'), 'in', 'UDP', '127.0.0.1', 5070);
  assert.equal(ladder.get('one')!.messages.length, 3);
  assert.equal(ladder.get('one')!.dropped, 3);
  ladder.record(invite('two'), 'in', 'UDP', '127.0.0.1', 5070);
  ladder.record(invite('three'), 'in', 'UDP', '127.0.0.1', 5070);
  assert.equal(ladder.get('one'), undefined, 'the oldest dialog is evicted');
  assert.deepEqual(ladder.list().map((d) => d.callId), ['three', 'two']);
  ladder.bind('two', { id: 'u1', name: 'PJSIP/alice-00000001' });
  assert.equal(ladder.ofChannel('PJSIP/alice-00000001')?.callId, 'two');
  assert.equal(maskDigestResponses('Proxy-Authorization: Digest response=abc, nonce="n"'), 'Proxy-Authorization: Digest response="[masked]", nonce="n"');
});

test('OPTIONS pings are not kept: they would push calls out', () => {
  const ladder = new SipLadder({ messagesPerDialog: 10, dialogs: 10, maxCallRate: 100 });
  const options = parseMessage(Buffer.from('OPTIONS sip:bob@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK2\r\nFrom: <sip:p@127.0.0.1>;tag=b\r\nTo: <sip:bob@127.0.0.1>\r\nCall-ID: ping\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n'));
  assert.ok(options.ok);
  if (options.ok) ladder.record(options.message, 'out', 'UDP', '127.0.0.1', 5070);
  assert.equal(ladder.list().length, 0);
});

test('above the configured call rate the ladder takes no new dialogs', () => {
  let now = 1_000_000;
  const ladder = new SipLadder({ messagesPerDialog: 10, dialogs: 1000, maxCallRate: 1 }, () => now);
  for (let i = 0; i < 15; i++) ladder.record(invite(`c${i}`), 'in', 'UDP', '127.0.0.1', 5070);
  assert.equal(ladder.list().length, 10, '1 per second over 10 s');
  assert.equal(ladder.skipped, 5);
  ladder.record(invite('c0'), 'in', 'UDP', '127.0.0.1', 5070);
  assert.equal(ladder.get('c0')!.messages.length, 2, 'a dialog already held carries on');
  now += 10_001;
  ladder.record(invite('later'), 'in', 'UDP', '127.0.0.1', 5070);
  assert.ok(ladder.get('later'));
});

test('E-model: a clean G.711 call scores about 4.4, 5% loss clearly lower', () => {
  const clean = estimateMos({ lossPercent: 0, jitterMs: 1, rttMs: 1, codec: 'ulaw' });
  const lossy = estimateMos({ lossPercent: 5, jitterMs: 1, rttMs: 1, codec: 'ulaw' });
  assert.ok(clean.mos > 4.3 && clean.mos <= 4.5, String(clean.mos));
  assert.ok(lossy.mos < clean.mos - 0.3, `${lossy.mos} vs ${clean.mos}`);
  assert.equal(mosRating(clean.mos), 'good');
  assert.equal(estimateMos({ lossPercent: 40, jitterMs: 50, rttMs: 600 }).mos < 2.5, true);
});

test('quality figures are kept beside the records by uniqueid (and a dstchannel by name), within retention', () => {
  const store = new QualityStore((error) => assert.fail(String(error)));
  const figures = { uniqueid: '1700000000.7', linkedid: '1700000000.7', channel: 'PJSIP/bob-00000007', codec: 'ulaw', packets_received: 100, packets_sent: 100, lost_received: 5, lost_sent: 0, loss_percent: 4.76, jitter_ms: 2, rtt_ms: 10, r: 77, mos: 3.9, rating: 'fair', ended_at: Date.now() };
  store.add(figures); // before the database: queued
  const database = openDatabase(':memory:');
  store.attach(database);
  assert.equal(store.find('1700000000.7')?.mos, 3.9);
  assert.equal(store.find('', 'PJSIP/bob-00000007')?.loss_percent, 4.76);
  assert.equal(store.find('nope'), undefined);
  store.expire({ days: 1, maxRows: 10 }, Date.now() + 2 * 86_400_000);
  assert.equal(store.find('1700000000.7'), undefined);
  database.close();
});

test('the console routes check their parameters', () => {
  const channels = { list: () => [], onLifecycle: () => () => {} };
  const sources: ConsoleSources = { ladder: new SipLadder(), quality: new CallQuality({ channels }), history: new MetricsHistory({ channels, eventsSent: () => 0 }) };
  after(() => {
    sources.quality.stop();
    sources.history.stop();
  });
  assert.equal(consoleRoute(sources, ['sip', 'ladders'], new URLSearchParams('limit=0'))?.status, 400);
  assert.equal(consoleRoute(sources, ['sip', 'ladders'], new URLSearchParams('bogus=1'))?.status, 400);
  assert.equal(consoleRoute(sources, ['sip', 'ladders', 'x'.repeat(300)], new URLSearchParams())?.status, 400);
  assert.equal(consoleRoute(sources, ['sip', 'ladders', 'unknown'], new URLSearchParams())?.status, 404);
  assert.equal(consoleRoute(sources, ['quality'], new URLSearchParams('ended=99999'))?.status, 400);
  assert.equal(consoleRoute(sources, ['metrics', 'history'], new URLSearchParams('since=abc'))?.status, 400);
  assert.equal(consoleRoute(sources, ['metrics', 'history'], new URLSearchParams())?.status, 200);
  assert.equal(consoleRoute(sources, ['core', 'status'], new URLSearchParams()), undefined);
});
