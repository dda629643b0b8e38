// A dialplan of the shape real ones have, run end to end: a caller originated over ARI as a Local
// channel sends DTMF into an IVR menu (Background/WaitExten, `i`/`t`), the call goes through a
// Gosub with arguments and LOCAL(), GotoIfTime, Read, and is recorded whole by MixMonitor. The
// branch taken is read from the UserEvents the dialplan raises; the recording from disk.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { readWavFile } from '../../src/media/wav-reader.ts';
import type { EventSocket } from '../helpers/server.ts';
import { channelName, collectUntil, startPbxServer, watchAll, type AriEvent, type PbxServer } from './pbx-helpers.ts';

const DIALPLAN = `
[ivr]
exten => s,1,Answer()
 same => n,MixMonitor(ivr/\${UNIQUEID}.wav)
 same => n,UserEvent(Recording,file: \${MIXMONITOR_FILENAME})
 same => n,Set(TIMEOUT(digit)=1)
 same => n,Set(TIMEOUT(response)=2)
 same => n,Playback(beep)
 same => n,Gosub(sub-greet,s,1(alpha,beta))
 same => n,UserEvent(Returned,ret: \${GOSUB_RETVAL},arg1: [\${ARG1}],inner: [\${INNER}])
 same => n,GotoIfTime(*,*,*,*?open)
 same => n,UserEvent(Branch,which: closed)
 same => n,Hangup()
 same => n(open),GotoIfTime(00:00-00:00,*,*,*,Pacific/Kiritimati?closed-too-early)
 same => n,Background(silence/1)
 same => n,WaitExten()
exten => 1,1,UserEvent(Branch,which: one)
 same => n,Read(PIN,,4,,2,1)
 same => n,UserEvent(Read,pin: \${PIN},status: \${READSTATUS})
 same => n,Hangup()
exten => 42,1,UserEvent(Branch,which: forty-two)
 same => n,Hangup()
exten => 420,1,UserEvent(Branch,which: four-twenty)
 same => n,Hangup()
exten => i,1,UserEvent(Branch,which: invalid,exten: \${INVALID_EXTEN})
 same => n,Hangup()
exten => t,1,UserEvent(Branch,which: timeout)
 same => n,Hangup()

[sub-greet]
exten => s,1,Set(LOCAL(INNER)=\${ARG1}-\${ARG2})
 same => n,GosubIf($[\${LEN(\${ARG1})} > 3]?nested,1(deeper))
 same => n,UserEvent(InSub,inner: \${INNER},args: \${ARG1}|\${ARG2},nested: \${GOSUB_RETVAL})
 same => n,Return(\${INNER})
exten => nested,1,Return(\${ARG1}:[\${ARG2}])
`;

let pbx: PbxServer;
let watch: EventSocket;
let driver: EventSocket;

before(async () => {
  pbx = await startPbxServer(DIALPLAN);
  watch = await watchAll(pbx.server);
  driver = await pbx.server.events('app=ivr-driver');
});
after(async () => {
  await watch.close();
  await driver.close();
  await pbx.stop();
});

interface Call {
  readonly callerId: string;
  /** The `;2` half, which runs the dialplan. */
  readonly dialplanSide: string;
}

/** POST /channels: a Local channel into the IVR whose `;1` half the test drives from Stasis. */
async function originate(): Promise<Call> {
  const response = await pbx.server.ari('/channels?endpoint=Local/s@ivr&app=ivr-driver', { method: 'POST' });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { id: string; name: string };
  return { callerId: body.id, dialplanSide: body.name.replace(/;1$/, ';2') };
}

async function sendDigits(call: Call, digits: string): Promise<void> {
  const response = await pbx.server.ari(`/channels/${call.callerId}/dtmf?dtmf=${encodeURIComponent(digits)}`, { method: 'POST' });
  assert.equal(response.status, 204);
}

const userEvents = (events: readonly AriEvent[], call: Call, name?: string): Record<string, string>[] =>
  events
    .filter((event) => event.type === 'ChannelUserevent' && channelName(event) === call.dialplanSide && (name === undefined || event.eventname === name))
    .map((event) => event.userevent as Record<string, string>);

/** Events of the call until its dialplan side is destroyed, with the time each arrived. */
async function untilDestroyed(call: Call, seen: AriEvent[], timeoutMs = 12000): Promise<AriEvent[]> {
  const rest = await collectUntil(watch, (event) => event.type === 'ChannelDestroyed' && channelName(event) === call.dialplanSide, timeoutMs);
  return [...seen, ...rest];
}

/** Waits until the dialplan side runs `app`; returns the events up to there. */
function untilApp(call: Call, app: string, timeoutMs = 8000): Promise<AriEvent[]> {
  return collectUntil(watch, (event) => event.type === 'ChannelDialplan' && channelName(event) === call.dialplanSide && event.dialplan_app === app, timeoutMs);
}

describe('an IVR menu driven by DTMF from a Local caller', () => {
  test('Gosub with arguments and LOCAL(), GotoIfTime, then two digits during Background choose 42 (not 4, not 420 after the digit timeout)', async () => {
    const call = await originate();
    const before = await untilApp(call, 'Background');
    await sendDigits(call, '42');
    const events = await untilDestroyed(call, before);
    assert.deepEqual(userEvents(events, call, 'InSub'), [{ eventname: 'InSub', inner: 'alpha-beta', args: 'alpha|beta', nested: 'deeper:[]' }]);
    // Back from the subroutine: its arguments and LOCAL() variable are gone again, its value kept.
    assert.deepEqual(userEvents(events, call, 'Returned'), [{ eventname: 'Returned', ret: 'alpha-beta', 'arg1': '[]', inner: '[]' }]);
    assert.deepEqual(userEvents(events, call, 'Branch'), [{ eventname: 'Branch', which: 'forty-two' }]);
  });

  test('a digit no extension starts with goes to i with ${INVALID_EXTEN}', async () => {
    const call = await originate();
    const before = await untilApp(call, 'Background');
    await sendDigits(call, '9');
    const events = await untilDestroyed(call, before);
    assert.deepEqual(userEvents(events, call, 'Branch'), [{ eventname: 'Branch', which: 'invalid', exten: '9' }]);
  });

  test('no digit: WaitExten waits TIMEOUT(response) and goes to t; MixMonitor recorded the whole call to a valid WAV', async () => {
    const call = await originate();
    const events = await untilDestroyed(call, []);
    assert.deepEqual(userEvents(events, call, 'Branch'), [{ eventname: 'Branch', which: 'timeout' }]);
    const waitExten = events.find((event) => event.type === 'ChannelDialplan' && channelName(event) === call.dialplanSide && event.dialplan_app === 'WaitExten');
    const destroyed = events.find((event) => event.type === 'ChannelDestroyed' && channelName(event) === call.dialplanSide);
    const waited = Date.parse(String(destroyed?.timestamp)) - Date.parse(String(waitExten?.timestamp));
    assert.ok(waited >= 1900 && waited < 3000, `WaitExten() waited ${waited} ms for TIMEOUT(response)=2`);

    const [recording] = userEvents(events, call, 'Recording');
    assert.match(recording.file, /\/ivr\/[^/]+\.wav$/);
    assert.ok(existsSync(recording.file), `${recording.file} exists`);
    const wav = readWavFile(recording.file);
    const seconds = wav.samples.length / wav.rate;
    const mixStart = events.find((event) => event.type === 'ChannelDialplan' && channelName(event) === call.dialplanSide && event.dialplan_app === 'MixMonitor');
    const expected = (Date.parse(String(destroyed?.timestamp)) - Date.parse(String(mixStart?.timestamp))) / 1000;
    assert.ok(Math.abs(seconds - expected) < 0.3, `recorded ${seconds.toFixed(2)} s of a ${expected.toFixed(2)} s call`);
    // What the caller heard is in it: the beep (1 kHz, loud) among the silence.
    let loudest = 0;
    for (const sample of wav.samples) loudest = Math.max(loudest, Math.abs(sample));
    assert.ok(loudest > 3000, `the beep is in the recording (peak ${loudest})`);
  });

  test('1 then Read: digits into a variable with READSTATUS OK', async () => {
    const call = await originate();
    const before = await untilApp(call, 'Background');
    await sendDigits(call, '1');
    const more = await untilApp(call, 'Read');
    await sendDigits(call, '1234');
    const events = await untilDestroyed(call, [...before, ...more]);
    assert.deepEqual(userEvents(events, call, 'Branch'), [{ eventname: 'Branch', which: 'one' }]);
    assert.deepEqual(userEvents(events, call, 'Read'), [{ eventname: 'Read', pin: '1234', status: 'OK' }]);
  });
});
