// A channel's events are serialised from its kept snapshot text (Channel.eventText): what every
// application receives must be, byte for byte, what serialising the event whole gives, through
// every kind of change a snapshot shows; and an unchanged channel hands out one snapshot object.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Applications } from '../../src/core/applications.ts';
import { Channels } from '../../src/core/channels/channels.ts';
import type { ChannelFunctions } from '../../src/core/channels/channel.ts';
import { EventLog } from '../../src/core/event-log.ts';
import type { LoggedMessage } from '../../src/core/application-sink.ts';
import { splicedTextFrame } from '../../src/util/websocket-text-frame.ts';
import { InvalidError } from '../../src/core/errors.ts';
import type { CoreEvent } from '../../src/spec/events.ts';
import { Stasis } from '../../src/core/stasis.ts';
import { RecordingDriver } from './kernel-helpers.ts';

const SERVER_ID = 'server-1';

/** The text a frame carries (header of 2, 4 or 10 bytes; server frames are unmasked). */
function frameText(frame: Buffer): string {
  const length = frame[1]! & 0x7f;
  return frame.subarray(length < 126 ? 2 : length === 126 ? 4 : 10).toString('utf8');
}

/**
 * @param parts the applications take their messages in parts and write them into frames, as the
 * event WebSocket does (the text is then read back from the frame, and its size checked).
 */
function table(channelvars: readonly string[] = [], functions?: ChannelFunctions, parts = false) {
  const delivered: { event: CoreEvent; text: string; sequence: number; application: string }[] = [];
  const counts = { split: 0 };
  const applications = new Applications(() => true);
  applications.eventLog = new EventLog({ maxEvents: 1000, maxBytes: 1 << 24, maxAgeSeconds: 60, maxApplications: 10, maxTotalBytes: 1 << 26 }, SERVER_ID);
  for (const name of ['first', 'second']) {
    const deliver = (application: string, event: CoreEvent, text?: string, sequence?: number) => delivered.push({ event, text: text!, sequence: sequence!, application });
    const deliverMessage = (application: string, event: CoreEvent, message: LoggedMessage) => {
      const text = frameText(splicedTextFrame(message.body, message.tail, message.bodyBytes, message.fields, message.fieldsBytes, message.sequence));
      assert.equal(Buffer.byteLength(text), message.bytes);
      if (message.tail !== '') counts.split++;
      assert.equal(text, message.text());
      assert.equal(text, applications.eventLog!.text(application, message.sequence), 'the held text is the sent one');
      delivered.push({ event, text, sequence: message.sequence, application });
    };
    applications.register(name, parts ? { deliver: () => assert.fail('taken in parts'), deliverMessage } : { deliver }, true);
  }
  const channels = new Channels({
    applications,
    channelvars,
    defaultLanguage: 'en',
    functions: functions ?? {
      read: () => undefined,
      write: (_channel, name) => {
        throw new InvalidError(`Unknown function: ${name}`);
      },
      registerWriter: () => undefined,
    },
    reportError: (error) => {
      throw error;
    },
  });
  return { applications, channels, delivered, counts };
}

function assertWholeText(delivered: { event: CoreEvent; text: string; sequence: number; application: string }[]): void {
  assert.ok(delivered.length > 0);
  for (const { event, text, sequence, application } of delivered) {
    assert.equal(text, JSON.stringify({ ...event, application, asterisk_id: SERVER_ID, sequence }), `${event.type} to ${application}`);
  }
}

describe('channel event text from the kept snapshot', () => {
  test('every change a snapshot shows, and the events of an unchanged channel, serialise as the whole event', () => {
    const { channels, delivered } = table(['PLAIN', 'QUOTED']);
    const channel = channels.create({ name: 'Unit/text-1', technology: 'Unit', direction: 'inbound', state: 'Ring' }, () => new RecordingDriver());
    channel.setDialplan({ context: 'default', exten: 's', priority: 1, appName: 'Answer', appData: '' });
    channel.answer();
    channel.setVariable('PLAIN', 'plain "quoted" \u00e9\u{1f600}');
    channel.redirecting = { ...channel.redirecting, from: { name: '', number: '5551234' } };
    channel.setCaller({ name: 'Caller "Q"', number: '100' });
    channel.setConnected({ number: '200' });
    channel.accountcode = 'acct';
    channel.language = 'fr';
    channel.protocolId = 'call-id@host';
    channel.hold('default');
    channel.unhold();
    channel.userEvent('Ping', { a: '1' });
    channel.setLocation({ priority: 2 });
    channel.setDialplan({ ...channel.location, appName: 'Wait', appData: '1' });
    channel.hangup();
    assertWholeText(delivered);
    const caller = delivered.filter(({ event }) => event.type === 'ChannelHangupRequest').map(({ event }) => ('channel' in event ? event.channel : undefined));
    assert.equal(caller[0]?.caller_rdnis, '5551234');
    assert.deepEqual(caller[0]?.channelvars, { PLAIN: 'plain "quoted" \u00e9\u{1f600}', QUOTED: '' });
  });

  test('taken in parts and written into frames, the events are the same bytes as the whole event', () => {
    const { channels, delivered, counts } = table(['PLAIN'], undefined, true);
    const channel = channels.create({ name: 'Unit/text-6', technology: 'Unit', direction: 'inbound', state: 'Ring' }, () => new RecordingDriver());
    channel.setDialplan({ context: 'default', exten: 's', priority: 1, appName: 'Answer', appData: '' });
    channel.answer();
    channel.setVariable('PLAIN', 'é "q" \u{1f600}');
    channel.hold('default');
    channel.unhold();
    channel.userEvent('Ping', { a: 'ü' });
    channel.hangup();
    assertWholeText(delivered);
    assert.ok(delivered.length >= 16);
    // Events after the first of each snapshot carry its kept text as the tail.
    assert.ok(counts.split >= 4, `${counts.split} events in parts`);
  });

  test('an unchanged channel hands out the same snapshot; a change makes a new one and leaves the old as it was', () => {
    const { channels } = table();
    const channel = channels.create({ name: 'Unit/text-2', technology: 'Unit', direction: 'inbound', state: 'Ring' }, () => new RecordingDriver());
    const before = channel.snapshot();
    assert.equal(channel.snapshot(), before);
    channel.setVariable('X', '1');
    const after = channel.snapshot();
    assert.notEqual(after, before);
    channel.caller = { name: 'n', number: '1' };
    assert.equal(channel.snapshot().caller.number, '1');
    assert.equal(after.caller.number, '');
    channel.location = { ...channel.location, priority: 7 };
    assert.equal(channel.snapshot().dialplan.priority, 7);
    assert.equal(after.dialplan.priority, 1);
  });

  test('a channelvars entry that reads a function is read again for every event', () => {
    let language = 'en';
    const { channels, delivered } = table(['CHANNEL(language)'], {
      read: (_channel, name) => (name === 'CHANNEL' ? language : undefined),
      write: () => undefined,
      registerWriter: () => undefined,
    });
    const channel = channels.create({ name: 'Unit/text-3', technology: 'Unit', direction: 'inbound', state: 'Ring' }, () => new RecordingDriver());
    channel.answer();
    language = 'de';
    channel.hangup();
    assertWholeText(delivered);
    const destroyed = delivered.find(({ event }) => event.type === 'ChannelDestroyed')!.event;
    assert.deepEqual('channel' in destroyed ? destroyed.channel?.channelvars : undefined, { 'CHANNEL(language)': 'de' });
  });

  test('StasisStart and StasisEnd, sent to one application, serialise as the whole event too', () => {
    const { applications, channels, delivered } = table(['PLAIN']);
    const stasis = new Stasis(applications);
    const channel = channels.create({ name: 'Unit/text-4', technology: 'Unit', direction: 'inbound', state: 'Ring' }, () => new RecordingDriver());
    const other = channels.create({ name: 'Unit/text-5', technology: 'Unit', direction: 'inbound', state: 'Ring' }, () => new RecordingDriver());
    assert.equal(stasis.enter(channel, 'first', ['a', 'b"c']), 'entered');
    assert.equal(stasis.enter(other, 'second', [], { replaceChannel: channel }), 'entered');
    channel.hangup();
    other.hangup();
    assertWholeText(delivered);
    assert.deepEqual(
      delivered.filter(({ event }) => event.type.startsWith('Stasis')).map(({ event, application }) => `${event.type}:${application}`),
      ['StasisStart:first', 'StasisStart:second', 'StasisEnd:first', 'StasisEnd:second'],
    );
  });
});
