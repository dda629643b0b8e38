// The stored SIP ladders of ended calls (src/channels/pjsip/ladder-store.ts, ended-ladders.ts):
// written when the call's channel ends, read back by ladder id (a Call-ID for older links) and by channel id or name after the
// database is reopened, bounded by rows and by bytes (the oldest go first), and served by the
// console's routes when the in-memory ring no longer has the dialog.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { EndedLadders } from '../../src/channels/pjsip/ended-ladders.ts';
import { LadderStore } from '../../src/channels/pjsip/ladder-store.ts';
import { SipLadder } from '../../src/channels/pjsip/sip-ladder.ts';
import { openDatabase } from '../../src/core/database.ts';
import { consoleRoute, type ConsoleSources } from '../../src/ops/console-routes.ts';
import { CallQuality } from '../../src/core/call-quality.ts';
import { MetricsHistory } from '../../src/ops/metrics-history.ts';
import { parseMessage } from '../../src/sip/parser.ts';
import type { SipMessage } from '../../src/sip/message.ts';

const work = mkdtempSync(join(tmpdir(), 'patchbay-ladder-store-'));
after(() => rmSync(work, { recursive: true, force: true }));

function invite(callId: string, padding = 0): SipMessage {
  const body = 'x'.repeat(padding);
  const parsed = parseMessage(Buffer.from(
    `INVITE sip:100@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1\r\nFrom: <sip:alice@127.0.0.1>;tag=a\r\nTo: <sip:100@127.0.0.1>\r\nCall-ID: ${callId}\r\nCSeq: 1 INVITE\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  ));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.message;
}

function ladderWith(callIds: readonly string[], padding = 0): SipLadder {
  const ladder = new SipLadder({ messagesPerDialog: 10, dialogs: 100, maxCallRate: 1000 });
  for (const [index, callId] of callIds.entries()) {
    ladder.record(invite(callId, padding), 'in', 'UDP', '127.0.0.1', 5070);
    ladder.bind(callId, { id: `id-${index}`, name: `PJSIP/alice-0000000${index}` });
  }
  return ladder;
}

test('a stored dialog is read back by Call-ID and by channel after the database is reopened', () => {
  const file = join(work, 'reopen.sqlite');
  const ladder = ladderWith(['call-a', 'call-b']);
  let database = openDatabase(file);
  const store = new LadderStore({ calls: 10, bytes: 1_000_000 }, (error) => assert.fail(String(error)));
  store.attach(database);
  store.save(ladder.get('call-a')!);
  store.save(ladder.get('call-b')!);
  store.save(ladder.get('call-a')!); // again: replaced, not doubled
  assert.equal(store.size, 2);
  store.detach();
  database.close();

  database = openDatabase(file);
  const reopened = new LadderStore({ calls: 10, bytes: 1_000_000 }, (error) => assert.fail(String(error)));
  reopened.attach(database);
  const dialog = reopened.get('call-a')!;
  assert.equal(dialog.kind, 'INVITE');
  assert.equal(dialog.messages.length, 1);
  assert.match(dialog.messages[0]!.text, /^INVITE sip:100@127\.0\.0\.1/);
  assert.deepEqual(dialog.channels, [{ id: 'id-0', name: 'PJSIP/alice-00000000' }]);
  assert.equal(reopened.ofChannel('PJSIP/alice-00000001')?.callId, 'call-b');
  assert.equal(reopened.ofChannel('id-1')?.callId, 'call-b');
  assert.equal(reopened.ofChannel('PJSIP/alice'), undefined);
  assert.ok(reopened.bytes > 0);

  // The routes answer from the store when the in-memory ring does not have the dialog.
  const channels = { list: () => [], onLifecycle: () => () => {} };
  const sources: ConsoleSources = { ladder: new SipLadder(), storedLadders: reopened, quality: new CallQuality({ channels }), history: new MetricsHistory({ channels, eventsSent: () => 0 }) };
  try {
    const one = consoleRoute(sources, ['sip', 'ladders', 'call-b'], new URLSearchParams())!;
    assert.equal(one.status, 200);
    assert.equal((one.body as { stored: boolean }).stored, true);
    const byChannel = consoleRoute(sources, ['sip', 'ladders'], new URLSearchParams({ channel: 'PJSIP/alice-00000000' }))!;
    assert.deepEqual((byChannel.body as { dialogs: Array<{ call_id: string }> }).dialogs.map((d) => d.call_id), ['call-a']);
  } finally {
    sources.quality.stop();
    sources.history.stop();
  }
  reopened.detach();
  database.close();
});

test('bounded by rows and by bytes: the oldest dialogs go first; a dialog larger than the bound is not kept', () => {
  const database = openDatabase(join(work, 'bounds.sqlite'));
  const ladder = ladderWith(['c0', 'c1', 'c2', 'c3', 'c4'], 2000);
  const store = new LadderStore({ calls: 3, bytes: 1_000_000 }, (error) => assert.fail(String(error)));
  store.attach(database);
  for (const callId of ['c0', 'c1', 'c2', 'c3', 'c4']) store.save(ladder.get(callId)!);
  assert.equal(store.size, 3);
  assert.equal(store.get('c0'), undefined);
  assert.equal(store.get('c1'), undefined);
  assert.ok(store.get('c4'));
  const each = store.bytes / 3;
  // Room for two of them by bytes: the oldest of the three goes.
  store.configure({ calls: 3, bytes: Math.floor(each * 2.5) });
  assert.equal(store.size, 2);
  assert.equal(store.get('c2'), undefined);
  assert.ok(store.bytes <= each * 2.5);
  // A dialog alone larger than every byte allowed is refused, not written then trimmed with the rest.
  store.configure({ calls: 3, bytes: 100 });
  assert.equal(store.size, 0);
  store.save(ladder.get('c4')!);
  assert.equal(store.size, 0);
  assert.equal(store.bytes, 0);
  // 0 calls: nothing kept.
  store.configure({ calls: 0, bytes: 1_000_000 });
  store.save(ladder.get('c4')!);
  assert.equal(store.size, 0);
  store.detach();
  database.close();
});

test('an ended SIP channel\'s dialog is written once it settled, with the others due then, and at stop', async () => {
  const database = openDatabase(join(work, 'ended.sqlite'));
  const ladder = ladderWith(['e0', 'e1', 'e2']);
  const store = new LadderStore({ calls: 10, bytes: 1_000_000 }, (error) => assert.fail(String(error)));
  store.attach(database);
  let ended: (channel: { id: string; technology: string }) => void = () => {};
  const channels = { onLifecycle: (_event: 'destroyed', listener: typeof ended) => ((ended = listener), () => {}) };
  const keeper = new EndedLadders({ ladder, store, channels, settleMs: 50 });
  ended({ id: 'id-0', technology: 'PJSIP' });
  ended({ id: 'id-1', technology: 'PJSIP' });
  ended({ id: 'id-2', technology: 'Local' });
  assert.equal(store.size, 0, 'not before it settled');
  const deadline = Date.now() + 10_000;
  while (store.size < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual([store.get('e0')?.callId, store.get('e1')?.callId, store.get('e2')], ['e0', 'e1', undefined]);
  ended({ id: 'id-2', technology: 'PJSIP' });
  keeper.stop();
  assert.ok(store.get('e2'), 'written at stop');
  store.detach();
  database.close();
});

/** A message of a self-call on Call-ID `self`: the caller's tag is `a`, the callee's `b`. */
function selfCallMessage(firstLine: string, method: string, toTag: string): SipMessage {
  const parsed = parseMessage(Buffer.from(
    `${firstLine}\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK9\r\nFrom: <sip:out@127.0.0.1>;tag=a\r\nTo: <sip:100@127.0.0.1>${toTag}\r\nCall-ID: self\r\nCSeq: 1 ${method}\r\nContent-Length: 0\r\n\r\n`,
  ));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.message;
}

test('two dialogs of one Call-ID (a self-call\'s legs) are two ladders, in memory and stored; old Call-ID rows migrate', () => {
  const ladder = new SipLadder({ messagesPerDialog: 10, dialogs: 10, maxCallRate: 100 });
  const inviteRequest = selfCallMessage('INVITE sip:100@127.0.0.1 SIP/2.0', 'INVITE', '');
  const ok = selfCallMessage('SIP/2.0 200 OK', 'INVITE', ';tag=b');
  ladder.bind({ callId: 'self', remoteTag: '' }, { id: 'out-1', name: 'PJSIP/loop-out-00000001' });
  ladder.record(inviteRequest, 'out', 'UDP', '127.0.0.1', 5060);
  ladder.record(inviteRequest, 'in', 'UDP', '127.0.0.1', 5060);
  ladder.bind({ callId: 'self', remoteTag: 'a' }, { id: 'in-2', name: 'PJSIP/loop-in-00000002' });
  ladder.record(ok, 'out', 'UDP', '127.0.0.1', 5060);
  ladder.record(ok, 'in', 'UDP', '127.0.0.1', 5060);
  const caller = ladder.ofChannel('out-1')!;
  const callee = ladder.ofChannel('in-2')!;
  assert.notEqual(caller.id, callee.id);
  assert.deepEqual(caller.messages.map((m) => `${m.direction} ${m.summary}`), ['out INVITE', 'in 200 OK']);
  assert.deepEqual(callee.messages.map((m) => `${m.direction} ${m.summary}`), ['in INVITE', 'out 200 OK']);

  const file = join(work, 'dialogs.sqlite');
  let database = openDatabase(file);
  // A database written before ladders were per dialog: one row per Call-ID.
  database.exec(`CREATE TABLE sip_ladder (call_id TEXT PRIMARY KEY, kind TEXT, from_party TEXT, to_party TEXT, first_at INTEGER, last_at INTEGER,
    dropped INTEGER, channels TEXT, messages TEXT, bytes INTEGER)`);
  database.exec('CREATE TABLE sip_ladder_channel (channel TEXT, call_id TEXT)');
  database.prepare('INSERT INTO sip_ladder VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run('old', 'INVITE', 'a', 'b', 1, 2, 0, '[{"id":"old-1","name":"PJSIP/x-1"}]', '[]', 2);
  database.prepare('INSERT INTO sip_ladder_channel VALUES (?, ?)').run('old-1', 'old');
  const store = new LadderStore({ calls: 10, bytes: 1_000_000 }, (error) => assert.fail(String(error)));
  store.attach(database);
  assert.equal(store.get('old')?.id, 'old');
  assert.equal(store.ofChannel('old-1')?.callId, 'old');
  store.saveAll([caller, callee]);
  assert.equal(store.size, 3);
  store.detach();
  database.close();

  database = openDatabase(file);
  const reopened = new LadderStore({ calls: 10, bytes: 1_000_000 }, (error) => assert.fail(String(error)));
  reopened.attach(database);
  assert.equal(reopened.ofChannel('PJSIP/loop-out-00000001')?.id, caller.id);
  assert.deepEqual(reopened.ofChannel('in-2')?.messages.map((m) => m.direction), ['in', 'out']);
  assert.equal(reopened.get(callee.id)?.callId, 'self');
  assert.ok(reopened.get('self'), 'a Call-ID still names one of its ladders');
  reopened.detach();
  database.close();
});
