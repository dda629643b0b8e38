// The event log's storage and text: the message text spliced from the event's own text is the
// text of the event with the delivery fields, whatever the event and application name; the ring
// that holds the events keeps the right ones through growth and wrap-around; deliveries through
// Applications hand the sink the text and the sequence.
import assert from 'node:assert/strict';
import { test } from 'node:test';
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
      assert.equal(entry.json, JSON.stringify({ ...event, application, asterisk_id: SERVER_ID, sequence: i + 1 }));
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
