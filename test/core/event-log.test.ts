// The event log on its own: numbering, the count/bytes/age/total bounds, resume points, the bound
// on applications, and the SQLite mirror (what a restart loads).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openDatabase } from '../../src/core/database.ts';
import { EventStreams } from '../../src/ari/event-resume.ts';
import { EventLog, type EventLogLimits, type SharedText } from '../../src/core/event-log.ts';
import type { LoggedMessage } from '../../src/core/application-sink.ts';
import type { CoreEvent } from '../../src/spec/events.ts';

const LIMITS: EventLogLimits = { maxEvents: 5, maxBytes: 1 << 20, maxAgeSeconds: 60, maxApplications: 3, maxTotalBytes: 1 << 30 };
const SERVER_ID = '02:00:00:00:00:09';

function event(name: string, padding = 0): CoreEvent {
  return { type: 'ChannelUserevent', timestamp: '2026-01-01T00:00:00.000+0000', eventname: name, userevent: { pad: 'x'.repeat(padding) } };
}

const dir = mkdtempSync(join(tmpdir(), 'patchbay-event-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('numbering and bounds', () => {
  test('sequences are consecutive per application; the message carries the delivery fields; count bounds the buffer', () => {
    const log = new EventLog(LIMITS, SERVER_ID);
    const first = log.append('a', event('a1'));
    assert.equal(first.message.sequence, 1);
    assert.equal(first.message.application, 'a');
    assert.equal(first.message.asterisk_id, SERVER_ID);
    assert.deepEqual(JSON.parse(first.entry.json), first.message);
    assert.equal(log.append('b', event('b1')).message.sequence, 1);
    for (let i = 2; i <= 8; i++) assert.equal(log.append('a', event(`a${i}`)).message.sequence, i);
    assert.equal(log.heldCount('a'), 5);
    assert.equal(log.firstHeld('a'), 4);
    assert.equal(JSON.parse(log.get('a', 4)!.json).eventname, 'a4');
    assert.equal(log.get('a', 3), undefined);
    assert.equal(log.get('a', 9), undefined);
  });

  test('a sink that takes messages in parts gets the same message, sizes counted, sharing one event text', () => {
    const log = new EventLog(LIMITS, SERVER_ID);
    const seen: { app: string; text: string; bytes: number; body: string; sequence: number }[] = [];
    const sink = {
      deliver: () => assert.fail('the parts are taken instead'),
      deliverMessage: (app: string, _event: CoreEvent, message: LoggedMessage) =>
        seen.push({ app, text: message.text(), bytes: message.bytes, body: message.body, sequence: message.sequence }),
    };
    const shared: SharedText = { text: undefined };
    const raised = event('é-shared', 3);
    log.deliver('a', raised, sink, shared);
    log.deliver('b', raised, sink, shared);
    for (const { app, text, bytes, sequence } of seen) {
      assert.deepEqual(JSON.parse(text), { ...raised, application: app, asterisk_id: SERVER_ID, sequence });
      assert.equal(bytes, Buffer.byteLength(text));
      assert.equal(text, log.get(app, sequence)!.json);
      assert.equal(bytes, log.get(app, sequence)!.bytes);
    }
    assert.equal(seen[0]!.body, seen[1]!.body);
  });

  test('resume points: held, expired, never numbered', () => {
    const log = new EventLog(LIMITS, SERVER_ID);
    for (let i = 1; i <= 8; i++) log.append('a', event(`a${i}`));
    assert.deepEqual(log.resumePoint('a', 8), { next: 9 });
    assert.deepEqual(log.resumePoint('a', 3), { next: 4 });
    assert.deepEqual(log.resumePoint('a', 1), { next: 4, lost: { from: 2, to: 3, reason: 'expired' } });
    assert.deepEqual(log.resumePoint('a', 20), { next: 4, lost: { from: 21, to: undefined, reason: 'unknown_sequence' } });
    assert.deepEqual(log.resumePoint('never', 0), { next: 1 });
  });

  test('age and bytes bound the buffer; numbering goes on when it is empty', () => {
    let now = 1_000_000;
    const log = new EventLog({ ...LIMITS, maxEvents: 1000, maxBytes: 2000 }, SERVER_ID, () => false, () => now);
    for (let i = 1; i <= 10; i++) log.append('a', event(`a${i}`, 300));
    // Each message is a little over 400 bytes: four fit in 2000.
    assert.equal(log.heldCount('a'), 4);
    now += 61_000;
    log.sweep();
    assert.equal(log.heldCount('a'), 0);
    assert.equal(log.firstHeld('a'), 11);
    assert.equal(log.append('a', event('a11')).message.sequence, 11);
  });

  test('the total byte budget takes from the largest logs', () => {
    const log = new EventLog({ ...LIMITS, maxEvents: 1000, maxTotalBytes: 10_000 }, SERVER_ID);
    for (let i = 0; i < 40; i++) log.append('big', event(`b${i}`, 300));
    log.append('small', event('s', 10));
    assert.ok(log.heldCount('big') < 40 && log.heldCount('big') > 0, `big holds ${log.heldCount('big')}`);
    assert.equal(log.heldCount('small'), 1);
  });

  test('past max_applications the log of an idle application nobody uses goes', () => {
    let now = 0;
    const inUse = new Set(['a']);
    const log = new EventLog(LIMITS, SERVER_ID, (app) => inUse.has(app), () => now);
    for (const app of ['a', 'b', 'c']) {
      now++;
      log.append(app, event(app));
    }
    now++;
    log.append('d', event('d'));
    assert.equal(log.applicationCount, 3);
    assert.equal(log.lastSequence('a'), 1, 'in use: kept although idlest');
    assert.equal(log.lastSequence('b'), 0, 'the idlest unused log went');
    assert.equal(log.lastSequence('c'), 1);
  });

  test('when every application has a connection, opening more never restarts the numbering a live stream follows', () => {
    let now = 0;
    const log = new EventLog(LIMITS, SERVER_ID, () => true, () => now);
    const sent: string[] = [];
    const output = { serverId: SERVER_ID, closed: false, sendLogged: (json: string) => sent.push(json), sendMessage: () => undefined, mustPause: () => false, waitForRoom: () => undefined };
    const victim = new EventStreams(log, output);
    victim.open(['victim'], { after: new Map(), ack: false, resumable: false });
    for (let i = 1; i <= 3; i++) {
      now++;
      const { message } = log.append('victim', event(`v${i}`));
      assert.ok(victim.accepts('victim', message.sequence));
    }
    // Another client opens (and acknowledges, which creates their logs) more applications than the limit.
    for (let i = 0; i < 2 * LIMITS.maxApplications; i++) {
      now++;
      log.ack(`flood${i}`, 0);
      log.append(`flood${i}`, event('f'));
    }
    now++;
    const { message } = log.append('victim', event('v4'));
    assert.equal(message.sequence, 4, 'the numbering went on');
    assert.ok(victim.accepts('victim', message.sequence), 'the live stream takes the next event');
    // The bound holds for the events: the log that made room for the newest application lost its events.
    assert.equal(log.heldCount('flood0'), 0);
    assert.equal(log.lastSequence('flood0'), 1);
  });

  test('acknowledgements never move back and never pass the last sequence', () => {
    const log = new EventLog(LIMITS, SERVER_ID);
    for (let i = 1; i <= 4; i++) log.append('a', event(`a${i}`));
    assert.equal(log.acked('a'), undefined);
    log.ack('a', 3);
    log.ack('a', 2);
    assert.equal(log.acked('a'), 3);
    log.ack('a', 99);
    assert.equal(log.acked('a'), 4);
  });
});

describe('the SQLite mirror', () => {
  test('a new log on the same database goes on where the old one stopped, within the bounds', async () => {
    const file = join(dir, 'mirror.sqlite');
    const database = openDatabase(file);
    const log = new EventLog(LIMITS, SERVER_ID);
    log.open(database);
    for (let i = 1; i <= 7; i++) log.append('a', event(`a${i}`));
    log.ack('a', 5);
    log.append('b', event('b1'));
    await new Promise((resolve) => setImmediate(resolve));
    const rows = database.prepare("SELECT sequence FROM event_log WHERE application = 'a' ORDER BY sequence").all() as { sequence: number }[];
    assert.deepEqual(rows.map((row) => row.sequence), [3, 4, 5, 6, 7], 'rows beyond the count bound are trimmed');
    log.append('a', event('a8'));
    log.close();
    database.close();

    const reopened = openDatabase(file);
    const restarted = new EventLog(LIMITS, SERVER_ID);
    restarted.open(reopened);
    assert.equal(restarted.lastSequence('a'), 8);
    assert.equal(restarted.firstHeld('a'), 4);
    assert.equal(restarted.acked('a'), 5);
    assert.equal(JSON.parse(restarted.get('a', 8)!.json).eventname, 'a8');
    assert.equal(restarted.append('a', event('a9')).message.sequence, 9);
    assert.equal(restarted.lastSequence('b'), 1);
    restarted.close();
    reopened.close();
  });

  test('only the consecutive run ending at the last sequence is loaded', () => {
    const file = join(dir, 'gap.sqlite');
    const database = openDatabase(file);
    const log = new EventLog(LIMITS, SERVER_ID);
    log.open(database);
    for (let i = 1; i <= 5; i++) log.append('a', event(`a${i}`));
    log.close();
    database.prepare("DELETE FROM event_log WHERE application = 'a' AND sequence = 3").run();
    const again = new EventLog(LIMITS, SERVER_ID);
    again.open(database);
    assert.equal(again.lastSequence('a'), 5);
    assert.equal(again.firstHeld('a'), 4);
    assert.deepEqual(again.resumePoint('a', 1), { next: 4, lost: { from: 2, to: 3, reason: 'expired' } });
    again.close();
    database.close();
  });
});

describe('adopting another member\'s numbering (cluster takeover)', () => {
  const entry = (sequence: number) => ({ sequence, json: JSON.stringify({ type: 'UserEvent', application: 'app', asterisk_id: 'aa:bb:cc:dd:ee:ff', sequence }) });

  test('keeps the newest consecutive run within the bounds and numbers on after it', () => {
    const log = new EventLog(LIMITS, 'server');
    log.append('app', event('x')); // a stand-in's numbering, replaced
    assert.equal(log.adopt('app', [1, 2, 4, 5, 6, 7, 8, 9, 10].map(entry)), true);
    assert.equal(log.lastSequence('app'), 10);
    // maxEvents 5: 6..10 held; 4 would fit the run but not the bound, and 2 → 4 is a gap anyway.
    assert.equal(log.firstHeld('app'), 6);
    assert.equal(JSON.parse(log.text('app', 7)!).sequence, 7);
    assert.deepEqual(log.resumePoint('app', 8), { next: 9 });
    const { message } = log.append('app', event('x'));
    assert.equal(message.sequence, 11);
  });

  test('adopts nothing from an empty journal', () => {
    const log = new EventLog(LIMITS, 'server');
    assert.equal(log.adopt('app', []), false);
    assert.equal(log.lastSequence('app'), 0);
  });

  test('tells of each event it numbers', () => {
    const log = new EventLog(LIMITS, 'server');
    const told: [string, number][] = [];
    log.onRecorded = (application, sequence) => told.push([application, sequence]);
    log.append('app', event('x'));
    log.append('app', event('x'));
    assert.deepEqual(told, [['app', 1], ['app', 2]]);
  });
});
