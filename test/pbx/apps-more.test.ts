// The other applications on real calls: Gosub's failures, ExecIf, GotoIfTime's false branch,
// TIMEOUT() and `T`, the `h` extension, PlayTones/StopPlayTones and Milliwatt (frequencies heard by
// the caller), SendDTMF, ChanIsAvail, Read's timeout, and MixMonitor's separate legs, `b` option,
// StopMixMonitor and a shutdown in the middle of the call.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { readWavFile } from '../../src/media/wav-reader.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { startTestServer, type EventSocket } from '../helpers/server.ts';
import { channelName, collectUntil, originate, startWatchedPbx, stopWatchedPbx, type AriEvent, type PbxServer } from './pbx-helpers.ts';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const otherMonth = MONTHS[(new Date().getMonth() + 6) % 12];

const DIALPLAN = `
[more]
exten => return-alone,1,Return()
 same => n,UserEvent(NotReached)
exten => deep,1,Gosub(recurse,s,1)
exten => execif,1,ExecIf($[1 = 1]?Set(A=yes):Set(A=no))
 same => n,ExecIf(0?Set(B=yes):Set(B=no))
 same => n,ExecIf(1?Set(LOCAL(C)=x))
 same => n,UserEvent(ExecIf,a: \${A},b: \${B},c: [\${C}])
 same => n,ExecIf(1?NoSuchApp(x))
 same => n,UserEvent(NotReached)
exten => timed,1,GotoIfTime(*,*,*,${otherMonth}?yes:no)
 same => n(yes),UserEvent(Time,which: yes)
 same => n,Hangup()
 same => n(no),UserEvent(Time,which: no)
exten => absolute,1,Answer()
 same => n,Set(TIMEOUT(absolute)=0.5)
 same => n,Set(TIMEOUT(digit)=2.5)
 same => n,UserEvent(Timeouts,digit: \${TIMEOUT(digit)},response: \${TIMEOUT(response)},absolute: \${TIMEOUT(absolute)})
 same => n,WaitExten(10)
exten => T,1,UserEvent(Absolute,exten: \${EXTEN})
 same => n,Hangup()
exten => h,1,UserEvent(HangupExten,cause: \${CHANNEL(hangupcause)})
exten => tones,1,Answer()
 same => n,PlayTones(440)
 same => n,Wait(0.6)
 same => n,StopPlayTones()
 same => n,Wait(0.4)
 same => n,Milliwatt()
exten => dtmf,1,Answer()
 same => n,SendDTMF(12#,50,80)
 same => n,Wait(0.2)
 same => n,Hangup()
exten => avail,1,ChanIsAvail(PJSIP/nobody&Local/dtmf@more)
 same => n,UserEvent(Avail,chan: \${AVAILCHAN},status: \${AVAILSTATUS},cause: \${AVAILCAUSECODE})
 same => n,ChanIsAvail(PJSIP/nobody)
 same => n,UserEvent(Avail,chan: \${AVAILCHAN},status: \${AVAILSTATUS},cause: \${AVAILCAUSECODE})
exten => read-timeout,1,Read(X,,3,,2,0.3)
 same => n,UserEvent(Read,x: [\${X}],status: \${READSTATUS})
exten => bonly,1,Answer()
 same => n,MixMonitor(bonly.wav,b)
 same => n,Wait(0.5)
 same => n,StopMixMonitor()
 same => n,UserEvent(Stopped,file: \${MIXMONITOR_FILENAME})
 same => n,Hangup()

[recurse]
exten => s,1,Gosub(recurse,s,1)

[legs]
exten => s,1,Answer()
 same => n,MixMonitor(legs/mix.wav,r(legs/in.wav)t(legs/out.wav))
 same => n,Milliwatt()
`;

let pbx: PbxServer;
let events: EventSocket;
before(async () => {
  ({ pbx, events } = await startWatchedPbx(DIALPLAN));
});
after(() => stopWatchedPbx({ pbx, events }));

const userEvents = (seen: readonly AriEvent[], channel: Channel, name: string): Record<string, string>[] =>
  seen.filter((event) => event.type === 'ChannelUserevent' && channelName(event) === channel.name && event.eventname === name).map((event) => event.userevent as Record<string, string>);

const destroyedOf = (channel: Channel) => (event: AriEvent) => event.type === 'ChannelDestroyed' && channelName(event) === channel.name;

const warnings = (): string[] =>
  pbx.server.logLines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level === 40).map((entry) => entry.msg);

/** The part of the signal's power at `frequency` (1 for a pure tone). */
function share(samples: Int16Array, frequency: number): number {
  const power = meanSquare(samples);
  return power === 0 ? 0 : goertzelPower(samples, frequency, 8000) / power;
}

describe('subroutines and conditions', () => {
  test('Return without Gosub and a runaway recursion end the call with a warning', async () => {
    const alone = originate(pbx.server, 'Local/return-alone@more');
    const seen = await collectUntil(events, destroyedOf(alone.two), 15_000);
    assert.deepEqual(userEvents(seen, alone.two, 'NotReached'), []);
    assert.ok(warnings().includes('Return without Gosub: stack is empty'));

    const deep = originate(pbx.server, 'Local/deep@more');
    await collectUntil(events, destroyedOf(deep.two), 15_000);
    assert.ok(warnings().includes('Gosub: Gosub stack is full (100 frames); hanging up'));
  });

  test('ExecIf runs the branch chosen; LOCAL() outside a Gosub is a warning; an unknown application ends the call', async () => {
    const call = originate(pbx.server, 'Local/execif@more');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    assert.deepEqual(userEvents(seen, call.two, 'ExecIf'), [{ eventname: 'ExecIf', a: 'yes', b: 'no', c: '[]' }]);
    assert.deepEqual(userEvents(seen, call.two, 'NotReached'), []);
    assert.ok(warnings().includes('Set: LOCAL() is only meaningful inside a Gosub'));
    assert.ok(warnings().includes("ExecIf: could not find application 'NoSuchApp'; hanging up"));
  });

  test('GotoIfTime takes the false branch outside the time', async () => {
    const call = originate(pbx.server, 'Local/timed@more');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    assert.deepEqual(userEvents(seen, call.two, 'Time'), [{ eventname: 'Time', which: 'no' }]);
  });
});

describe('timeouts and special extensions', () => {
  test('TIMEOUT() reads back; TIMEOUT(absolute) interrupts WaitExten for T; h runs after the hangup', async () => {
    const started = Date.now();
    const call = originate(pbx.server, 'Local/absolute@more');
    const seen = await collectUntil(events, (event) => event.type === 'ChannelUserevent' && event.eventname === 'HangupExten' && channelName(event) === call.two.name, 15_000);
    assert.deepEqual(userEvents(seen, call.two, 'Timeouts'), [{ eventname: 'Timeouts', digit: '2.5', response: '10', absolute: '0.5' }]);
    assert.deepEqual(userEvents(seen, call.two, 'Absolute'), [{ eventname: 'Absolute', exten: 'T' }]);
    assert.ok(Date.now() - started < 2000, 'WaitExten(10) did not run its course');
    assert.deepEqual(userEvents(seen, call.two, 'HangupExten'), [{ eventname: 'HangupExten', cause: '16' }]);
  });

  test('Read with nothing entered tries its attempts and ends TIMEOUT with the variable empty', async () => {
    const started = Date.now();
    const call = originate(pbx.server, 'Local/read-timeout@more');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    assert.deepEqual(userEvents(seen, call.two, 'Read'), [{ eventname: 'Read', x: '[]', status: 'TIMEOUT' }]);
    const took = Date.now() - started;
    assert.ok(took >= 550 && took < 1500, `two attempts of 0.3 s took ${took} ms`);
  });
});

describe('tones, DTMF and devices', () => {
  test('PlayTones plays 440 Hz until StopPlayTones; Milliwatt plays ~1004 Hz', async () => {
    const call = originate(pbx.server, 'Local/tones@more');
    const frames: { at: number; samples: Int16Array }[] = [];
    call.one.addFrameListener((frame) => frames.push({ at: Date.now(), samples: Int16Array.from(frame.samples) }));
    // Milliwatt is heard for 0.7 s once it starts (a fixed 1.6 s from the originate left a loaded
    // machine too little of it).
    const milliwattStep = (event: AriEvent): boolean => event.type === 'ChannelDialplan' && channelName(event) === call.two.name && event.dialplan_app === 'Milliwatt';
    const upToMilliwatt = await collectUntil(events, milliwattStep);
    await new Promise((resolve) => setTimeout(resolve, 700));
    call.one.hangup();
    const seen = [...upToMilliwatt, ...(await collectUntil(events, destroyedOf(call.two)))];
    const startOf = (app: string): number =>
      Date.parse(String(seen.find((event) => event.type === 'ChannelDialplan' && channelName(event) === call.two.name && event.dialplan_app === app)?.timestamp));
    const heardBetween = (from: number, to: number): Int16Array => {
      const kept = frames.filter((frame) => frame.at >= from && frame.at < to);
      const out = new Int16Array(kept.length * 160);
      kept.forEach((frame, index) => out.set(frame.samples, index * 160));
      return out;
    };
    const tone = heardBetween(startOf('PlayTones') + 100, startOf('StopPlayTones') - 50);
    const gap = heardBetween(startOf('StopPlayTones') + 60, startOf('Milliwatt') - 20);
    const milliwatt = heardBetween(startOf('Milliwatt') + 100, Infinity);
    // About 0.45 s of the 0.6 s Wait on an idle machine; at least 0.2 s when a loaded one's media
    // clock dropped ticks (CI heard 0.34 s).
    assert.ok(tone.length >= 1600 && share(tone, 440) > 0.8, `440 Hz: ${tone.length} samples, share ${share(tone, 440)}`);
    assert.ok(gap.every((sample) => sample === 0), 'nothing heard once the tone is stopped');
    assert.ok(milliwatt.length >= 2400 && share(milliwatt, 1004) > 0.8, `1004 Hz: ${milliwatt.length} samples, share ${share(milliwatt, 1004)}`);
  });

  test('SendDTMF sends its digits to the far end', async () => {
    const call = originate(pbx.server, 'Local/dtmf@more');
    const seen = await collectUntil(events, destroyedOf(call.one), 15_000);
    const digits = seen.filter((event) => event.type === 'ChannelDtmfReceived' && channelName(event) === call.one.name).map((event) => event.digit);
    assert.deepEqual(digits, ['1', '2', '#']);
  });

  test('ChanIsAvail finds the first device that can take a call', async () => {
    const call = originate(pbx.server, 'Local/avail@more');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    assert.deepEqual(userEvents(seen, call.two, 'Avail'), [
      { eventname: 'Avail', chan: 'Local/dtmf@more', status: '4&1', cause: '0' },
      { eventname: 'Avail', chan: '', status: '4', cause: '3' },
    ]);
  });
});

describe('MixMonitor', () => {
  test('b records only while bridged (nothing here); StopMixMonitor finalises the file at once', async () => {
    const call = originate(pbx.server, 'Local/bonly@more');
    const seen = await collectUntil(events, destroyedOf(call.two), 15_000);
    const [stopped] = userEvents(seen, call.two, 'Stopped');
    assert.ok(existsSync(stopped.file), stopped.file);
    assert.equal(readWavFile(stopped.file).samples.length, 0);
  });

  test('r() and t() record each direction apart; a shutdown mid-call leaves complete WAV files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-mixmonitor-'));
    const file = join(dir, 'extensions.conf');
    writeFileSync(file, DIALPLAN);
    const server = await startTestServer({ dialplan: { file } }, { dataDir: dir });
    try {
      const originatedAt = Date.now();
      const call = originate(server, 'Local/s@legs');
      // About a second of recording, timed from the first milliwatt frame the caller hears (the step
      // after MixMonitor's): a loaded machine may take a while to get there from the originate.
      const recordings = join(dir, 'recordings', 'legs');
      let toneAt: number | undefined;
      call.one.addFrameListener((frame) => void (toneAt ??= frame.samples.some((sample) => sample !== 0) ? Date.now() : undefined));
      for (const deadline = Date.now() + 15_000; Date.now() < deadline && toneAt === undefined; ) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(toneAt !== undefined, 'the milliwatt tone reached the caller');
      const startedBy = toneAt;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // Ticks the media clock dropped after stalls (a loaded machine) are frames never recorded.
      const droppedMs = 20 * server.core.media.clock.skippedTicks;
      const stopSentAt = Date.now();
      await server.stop();
      void call;
      const [shortest, longest] = [(stopSentAt - startedBy - 200 - droppedMs) / 1000, (Date.now() - originatedAt + 300) / 1000];
      const mix = readWavFile(join(recordings, 'mix.wav')).samples;
      const heard = readWavFile(join(recordings, 'in.wav')).samples;
      const said = readWavFile(join(recordings, 'out.wav')).samples;
      for (const [name, samples] of [['mix', mix], ['in', heard], ['out', said]] as const) {
        const seconds = samples.length / 8000;
        assert.ok(seconds >= shortest && seconds <= longest, `${name}: ${seconds} s; the wall clock allows ${shortest}–${longest} s`);
      }
      assert.ok(heard.every((sample) => sample === 0), 'the caller said nothing');
      assert.ok(share(said.subarray(1600, 6400), 1004) > 0.8, 'the channel sent the milliwatt tone');
      assert.ok(share(mix.subarray(1600, 6400), 1004) > 0.8, 'the mix holds it too');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
