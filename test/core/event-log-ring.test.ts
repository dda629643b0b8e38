// The event log's storage and text: the message text spliced from the event's own text is the
// text of the event with the delivery fields, whatever the event and application name; the ring
// that holds the events keeps the right ones through growth and wrap-around; deliveries through
// Applications hand the sink the text and the sequence; a turn's many events reach SQLite (the
// rows are written in batches) exactly as held.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openDatabase } from '../../src/core/database.ts';
import { Applications, type ApplicationSink } from '../../src/core/applications.ts';
import { EventLog, type EventLogLimits } from '../../src/core/event-log.ts';
import type { CoreEvent } from '../../src/spec/events.ts';

const LIMITS: EventLogLimits = { maxEvents: 100, maxBytes: 1 << 20, maxAgeSeconds: 60, maxApplications: 10, maxTotalBytes: 1 << 30 };
const SERVER_ID = '02:00:00:00:00:0a';

function userEvent(name: string, padding = 0): CoreEvent {
  return { type: 'ChannelUserevent', timestamp: '2026-01-01T00:00:00.000+0000', eventname: name, userevent: { pad: 'é'.repeat(padding) } };
}

test('the message text is the event with application, asterisk_id and sequence, as a copy would serialise', () => {
  const log = new EventLog(LIMITS, SERVER_ID);
  const events = [
    userEvent('plain'),
    userEvent('multibyte ☎ "quoted"', 7),
    // Fields of its own keep their place, as in a copy.
    { type: 'ChannelUserevent', application: 'stale', eventname: 'own application' },
    { type: 'ChannelUserevent', asterisk_id: 'stale', eventname: 'own asterisk_id' },
    { type: 'ChannelUserevent', sequence: 99, eventname: 'own sequence' },
    { type: 'ChannelUserevent', eventname: 'dropped', missing: undefined },
    {},
  ] as unknown as CoreEvent[];
  for (const application of ['a', 'quo"te\\back ☎', '']) {
    events.forEach((event, i) => {
      const { message, entry } = log.append(application, event);
      assert.equal(message.sequence, i + 1);
      // An event that carries its own asterisk_id (relayed from the cluster member that owns it) keeps it.
      const own = (event as { asterisk_id?: unknown }).asterisk_id;
      const asteriskId = typeof own === 'string' ? own : SERVER_ID;
      assert.equal(entry.json, JSON.stringify({ ...event, application, asterisk_id: asteriskId, sequence: i + 1 }));
      assert.equal(entry.bytes, Buffer.byteLength(entry.json));
      assert.deepEqual(log.get(application, i + 1), entry);
    });
  }
});

test('the ring keeps exactly the newest events through growth and wrap-around, and the byte count follows', () => {
  let now = 0;
  const log = new EventLog({ ...LIMITS, maxBytes: 60_000 }, SERVER_ID, () => false, () => now);
  const sizes = new Map<number, number>();
  let countBound = 0;
  let byteBound = 0;
  for (let sequence = 1; sequence <= 1000; sequence++) {
    now++;
    // Runs of small and of large events: the count bound drops the small, the byte bound the large.
    const { entry } = log.append('a', userEvent(`e${sequence}`, (Math.floor(sequence / 150) % 2) * 300 + (sequence % 7)));
    sizes.set(sequence, entry.bytes);
    const first = log.firstHeld('a');
    assert.equal(log.lastSequence('a'), sequence);
    assert.equal(log.heldCount('a'), sequence - first + 1);
    assert.ok(log.heldCount('a') <= 100);
    let bytes = 0;
    for (let held = first; held <= sequence; held++) bytes += sizes.get(held)!;
    assert.ok(bytes <= 60_000, `${bytes} bytes held`);
    // One more event would have fit unless a bound stopped it.
    if (first > 1) {
      if (log.heldCount('a') === 100) countBound++;
      else byteBound++;
      assert.ok(log.heldCount('a') === 100 || bytes + sizes.get(first - 1)! > 60_000);
    }
    if (sequence % 97 === 0 || sequence > 990) {
      for (let held = first; held <= sequence; held++) {
        const kept = log.get('a', held)!;
        assert.equal(JSON.parse(kept.json).eventname, `e${held}`);
        assert.equal(kept.sequence, held);
        assert.equal(kept.at, held);
      }
      assert.equal(log.get('a', first - 1), undefined);
      assert.equal(log.get('a', sequence + 1), undefined);
    }
  }
  assert.ok(countBound > 0 && byteBound > 0, `both bounds acted: count ${countBound}, bytes ${byteBound}`);
});

test('a delivery through Applications gives the sink the core event, the numbered text and the sequence', () => {
  const log = new EventLog(LIMITS, SERVER_ID);
  const registry = new Applications(() => true);
  registry.eventLog = log;
  const received: { event: CoreEvent; json: string | undefined; sequence: number | undefined }[] = [];
  const sink: ApplicationSink = { deliver: (_application, event, json, sequence) => void received.push({ event, json, sequence }) };
  registry.register('app', sink, false);
  const first = userEvent('one');
  registry.sendTo('app', first);
  registry.sendTo('app', userEvent('two'));
  assert.deepEqual(received.map((r) => r.sequence), [1, 2]);
  assert.equal(received[0]!.event, first);
  assert.deepEqual(JSON.parse(received[1]!.json!), { ...userEvent('two'), application: 'app', asterisk_id: SERVER_ID, sequence: 2 });
  assert.equal(log.get('app', 2)!.json, received[1]!.json);
});

test('the events of a turn with more than one insert batch are written as held, and a restart loads them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-event-ring-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'batch.sqlite');
  const database = openDatabase(file);
  const log = new EventLog({ ...LIMITS, maxEvents: 150 }, SERVER_ID);
  log.open(database);
  // One turn: 200 events for a (the first 50 leave the buffer before the flush), 3 for b between.
  const texts = new Map<string, string>();
  for (let i = 1; i <= 200; i++) {
    const { entry } = log.append('a', userEvent(`a${i}`, i % 5));
    texts.set(`a/${i}`, entry.json);
    if (i % 70 === 0) texts.set(`b/${i / 70}`, log.append('b', userEvent(`b${i}`)).entry.json);
  }
  await new Promise((resolve) => setImmediate(resolve));
  const rows = database.prepare('SELECT application, sequence, message FROM event_log ORDER BY application, sequence').all() as { application: string; sequence: number; message: string }[];
  const expected = [...Array.from({ length: 150 }, (_, i) => `a/${i + 51}`), 'b/1', 'b/2'];
  assert.deepEqual(rows.map((row) => `${row.application}/${row.sequence}`), expected);
  for (const row of rows) assert.equal(row.message, texts.get(`${row.application}/${row.sequence}`));
  log.close();
  database.close();

  const reopened = openDatabase(file);
  const restarted = new EventLog({ ...LIMITS, maxEvents: 150 }, SERVER_ID);
  restarted.open(reopened);
  assert.equal(restarted.firstHeld('a'), 51);
  assert.equal(restarted.get('a', 200)!.json, texts.get('a/200'));
  assert.equal(restarted.append('a', userEvent('next')).message.sequence, 201);
  restarted.close();
  reopened.close();
});
