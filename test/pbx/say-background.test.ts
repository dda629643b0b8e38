// Say applications (prompt choice, and real playback lengths when Asterisk's English prompts are
// installed) and Background's options: s, n, m and the context argument.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sendDtmf } from '../../src/core/channels/dtmf-sender.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { dateFormatPrompts } from '../../src/pbx/apps/say.ts';
import type { EventSocket } from '../helpers/server.ts';
import { channelName, collectUntil, originate, startWatchedPbx, stopWatchedPbx, type AriEvent, type PbxServer } from './pbx-helpers.ts';

const SOUNDS = '/usr/share/asterisk/sounds/en';
const installed = existsSync(`${SOUNDS}/digits/1.wav`) && existsSync(`${SOUNDS}/digits/day-4.wav`);

const DIALPLAN = `
[say]
exten => digits,1,Answer()
 same => n,SayDigits(12)
 same => n,SayUnixTime(0,UTC,A)
 same => n,SayNumber(not-a-number)
 same => n,Hangup()

[bg]
exten => skip,1,Background(beep,s)
 same => n,UserEvent(Bg,state: \${CHANNEL(state)},status: \${BACKGROUNDSTATUS})
exten => noanswer,1,Background(beep,n)
 same => n,UserEvent(Bg,state: \${CHANNEL(state)},status: \${BACKGROUNDSTATUS})
exten => missing,1,Background(no-such-prompt)
 same => n,UserEvent(Bg,state: \${CHANNEL(state)},status: \${BACKGROUNDSTATUS})
exten => m,1,Answer()
 same => n,Background(silence/3,m)
 same => n,UserEvent(Bg,which: fell-through)
exten => 1,1,UserEvent(Bg,which: one)
exten => i,1,UserEvent(Bg,which: invalid \${INVALID_EXTEN})
exten => other,1,Answer()
 same => n,Background(silence/3,,,elsewhere)

[elsewhere]
exten => 7,1,UserEvent(Bg,which: seven in \${CONTEXT})
`;

let pbx: PbxServer;
let events: EventSocket;
before(async () => {
  ({ pbx, events } = await startWatchedPbx(DIALPLAN));
});
after(() => stopWatchedPbx({ pbx, events }));

const destroyedOf = (channel: Channel) => (event: AriEvent) => event.type === 'ChannelDestroyed' && channelName(event) === channel.name;
const bgEvents = (seen: readonly AriEvent[], channel: Channel): Record<string, string>[] =>
  seen
    .filter((event) => event.type === 'ChannelUserevent' && channelName(event) === channel.name && event.eventname === 'Bg')
    .map((event) => {
      const { eventname: _name, ...fields } = event.userevent as Record<string, string>;
      return fields;
    });

describe('Say applications', () => {
  test('SayUnixTime picks prompts as say.c does in English', () => {
    // Thursday 1 January 1970, 00:00 (UTC); Sunday 23 November 2026, 21:05.
    const epoch = { year: 1970, month: 0, day: 1, weekday: 4, hour: 0, minute: 0, second: 0 };
    assert.deepEqual(dateFormatPrompts(epoch, "ABdY 'digits/at' IMp"), [
      'digits/day-4',
      'digits/mon-0',
      'digits/h-1',
      'digits/19',
      'digits/70',
      'digits/at',
      'digits/12',
      'digits/oclock',
      'digits/a-m',
    ]);
    const evening = { year: 2026, month: 10, day: 23, weekday: 0, hour: 21, minute: 5, second: 0 };
    assert.deepEqual(dateFormatPrompts(evening, 'dY IMp'), ['digits/20', 'digits/h-3', 'digits/2', 'digits/thousand', 'digits/20', 'digits/6', 'digits/9', 'digits/oh', 'digits/5', 'digits/p-m']);
  });

  test('SayDigits and SayUnixTime play the prompts at real speed; a bad SayNumber is a warning', { skip: !installed && 'Asterisk English prompts not installed' }, async () => {
    const droppedBefore = pbx.server.core.media.clock.skippedTicks;
    const call = originate(pbx.server, 'Local/digits@say');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    // Never faster than the prompts; slower by what a loaded machine adds between steps (reading a
    // prompt file, the next step's start: 0.2-0.3 s seen under load 20, CI 1.208 s for 0.9 s) and
    // by the ticks the media clock dropped after a stall (no audio is played for them). Twice the
    // prompts' length would still fail.
    const late = 0.3 + (pbx.server.core.media.clock.skippedTicks - droppedBefore) * 0.02;
    const at = (app: string): number =>
      Date.parse(String(seen.find((event) => event.type === 'ChannelDialplan' && channelName(event) === call.two.name && event.dialplan_app === app)?.timestamp));
    const seconds = (prompt: string): number => {
      const wav = readWavFile(`${SOUNDS}/${prompt}.wav`);
      return wav.samples.length / wav.rate;
    };
    const digits = (at('SayUnixTime') - at('SayDigits')) / 1000;
    const expected = seconds('digits/1') + seconds('digits/2');
    assert.ok(digits > expected - 0.25 && digits < expected + 0.25 + late, `SayDigits(12) took ${digits} s for ${expected} s of prompts (${late} s allowed late)`);
    const weekday = (at('SayNumber') - at('SayUnixTime')) / 1000;
    const day = seconds('digits/day-4');
    assert.ok(weekday > day - 0.2 && weekday < day + 0.2 + late, `SayUnixTime(0,UTC,A) took ${weekday} s for ${day} s (${late} s allowed late)`);
    const lines = pbx.server.logLines.map((line) => JSON.parse(line) as { msg: string }).map((entry) => entry.msg);
    assert.ok(lines.includes("SayNumber: 'not-a-number' is not a number"));
  });
});

describe('Background options', () => {
  test('s skips on a channel not answered; n plays without answering; a missing prompt is FAILED', async () => {
    for (const [exten, expected] of [
      ['skip', { state: 'Ring', status: 'SUCCESS' }],
      ['noanswer', { state: 'Ring', status: 'SUCCESS' }],
      ['missing', { state: 'Up', status: 'FAILED' }],
    ] as const) {
      const call = originate(pbx.server, `Local/${exten}@bg`);
      const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
      assert.deepEqual(bgEvents(seen, call.two), [expected], exten);
    }
  });

  test('m: a digit that is no one-digit extension does not interrupt; one that is does', async () => {
    const call = originate(pbx.server, 'Local/m@bg');
    await collectUntil(events, (event) => event.type === 'ChannelDialplan' && channelName(event) === call.two.name && event.dialplan_app === 'Background');
    await sendDtmf(call.one, '51');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    assert.deepEqual(bgEvents(seen, call.two), [{ which: 'one' }]);
  });

  test('the context argument sends the digits to another context', async () => {
    const call = originate(pbx.server, 'Local/other@bg');
    await collectUntil(events, (event) => event.type === 'ChannelDialplan' && channelName(event) === call.two.name && event.dialplan_app === 'Background');
    await sendDtmf(call.one, '7');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    assert.deepEqual(bgEvents(seen, call.two), [{ which: 'seven in elsewhere' }]);
  });
});
