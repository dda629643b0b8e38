// Music on hold (bridge and channel, classes, the generated default, the module switch), silence,
// snoop (spy and whisper, measured), talk detection through an ARI variable, and the dialplan's
// MusicOnHold(): each checked on the audio that really arrives.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { AUDIO_BY_TICKS, cleanUpAfterFailureInCluster, unlessCluster } from '../helpers/cluster-server.ts';
import { WavWriter } from '../../src/media/wav-writer.ts';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { capture, EventLog, expectStatus, finish, frameRms, isEvent, localCall, measure, ticks, toneWriter } from './bridges-helpers.ts';

const APP = 'media-app';

const DIALPLAN = `
[default]
exten => answer,1,Answer()
 same => n,Wait(3600)

[moh]
exten => timed,1,Answer()
 same => n,MusicOnHold(,1)
 same => n,Set(AFTER=done)
 same => n,Wait(3600)
exten => jazz,1,Answer()
 same => n,MusicOnHold(jazz)
`;

let server: TestServer;

// Through a cluster, a failed test's channels on A and C would fail every later leak check too.
afterEach((t) => cleanUpAfterFailureInCluster(server, t));
let log: EventLog;
let socket: Awaited<ReturnType<TestServer['events']>>;
let dialplanDir: string;

/** Writes a class of one file holding a steady tone. */
function writeToneClass(mohDir: string, className: string, frequency: number, amplitude: number): void {
  const dir = join(mohDir, className);
  mkdirSync(dir, { recursive: true });
  const writer = WavWriter.open(join(dir, 'tone.wav'), { rate: 8000 });
  const samples = new Int16Array(8000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / 8000));
  writer.write(samples);
  writer.finalize();
}

before(async () => {
  dialplanDir = mkdtempSync(join(tmpdir(), 'patchbay-media-dialplan-'));
  const file = join(dialplanDir, 'extensions.conf');
  writeFileSync(file, DIALPLAN);
  server = await startTestServer({ dialplan: { file } });
  writeToneClass(server.config.dirs.moh, 'jazz', 440, 6000);
  socket = await server.events(`app=${APP}`);
  log = new EventLog(socket);
});

after(async () => {
  await socket?.close();
  await server?.stop();
  rmSync(dialplanDir, { recursive: true, force: true });
});

/** The audio a capture got on the next `count` ticks (after letting `settle` ticks pass). */
async function listen(capturer: ReturnType<typeof capture>, count: number, settle = 3): Promise<Int16Array> {
  await ticks(server, settle);
  const from = server.core.media.clock.ticks;
  await ticks(server, count);
  return capturer.between(from, from + count - 1);
}

describe('music on hold', () => {
  test('the default class is generated at first start: a melody of tones in <moh>/default/patchbay-default.wav', () => {
    const file = join(server.config.dirs.moh, 'default', 'patchbay-default.wav');
    assert.ok(existsSync(file));
    const { samples, rate } = readWavFile(file);
    assert.equal(rate, 8000);
    assert.ok(samples.length >= 8000 * 8, `${samples.length / 8000} s long`);
    const levels = frameRms(samples);
    const quiet = levels.filter((level) => level < 100).length;
    assert.ok(quiet / levels.length < 0.05, `sound almost throughout (${quiet} quiet frames of ${levels.length})`);
    assert.ok(Math.max(...levels) < 12000, 'not too loud');
    assert.deepEqual(server.core.moh.classes(), ['default', 'jazz']);
  });

  test('bridge: startMoh plays into the bridge (members hear music), a class is chosen by name, stopMoh stops it and 409 when none plays', async () => {
    await expectStatus(server, '/bridges/mohroom', 200);
    const a = await localCall(server, log, APP, 'bmoh-a');
    await expectStatus(server, `/bridges/mohroom/addChannel?channel=${a.one.id}`, 204);
    const heard = capture(server, a.two);
    assert.deepEqual(await expectStatus(server, '/bridges/mohroom/moh', 409, 'DELETE'), { message: "Bridge isn't playing music" });

    await expectStatus(server, '/bridges/mohroom/moh', 204);
    const music = await listen(heard, 50);
    const levels = frameRms(music);
    assert.ok(levels.length >= 45, 'a frame per tick');
    assert.ok(levels.filter((level) => level > 50).length >= levels.length * 0.9, 'music in (nearly) every frame');
    assert.ok(measure(music, 440).rms > 500, `music energy (rms ${measure(music, 440).rms.toFixed(0)})`);

    // Another class replaces the music: the jazz class is a 440 Hz tone.
    await expectStatus(server, '/bridges/mohroom/moh?mohClass=jazz', 204);
    const jazz = measure(await listen(heard, 25), 440);
    assert.ok(Math.abs(jazz.amplitude - 6000) < 300, `jazz class at 440 Hz (${jazz.amplitude.toFixed(0)})`);
    assert.ok(jazz.purity > 0.95, 'only the jazz class plays');

    await expectStatus(server, '/bridges/mohroom/moh', 204, 'DELETE');
    assert.ok(measure(await listen(heard, 10), 440).rms < 1, 'silence after stopMoh');
    await expectStatus(server, '/bridges/mohroom/moh', 409, 'DELETE');
    await expectStatus(server, '/bridges/ghost/moh', 404);
    heard.stop();
    await finish(server, [a], ['mohroom']);
  });

  test('channel: startMoh replaces what the channel hears from its bridge, an unknown class plays default, stopMoh gives the bridge back', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/chanmoh', 200);
    const a = await localCall(server, log, APP, 'cmoh-a');
    const b = await localCall(server, log, APP, 'cmoh-b');
    await expectStatus(server, `/bridges/chanmoh/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const atA = capture(server, a.two);
    const tone = toneWriter(server, (frame) => b.two.write(frame), 1000, 8000);
    assert.ok(measure(await listen(atA, 10), 1000).amplitude > 7500, 'A hears B through the bridge');

    await expectStatus(server, `/channels/${a.one.id}/moh?mohClass=jazz`, 204);
    const jazz = measure(await listen(atA, 25), 440);
    assert.ok(Math.abs(jazz.amplitude - 6000) < 300, `A hears its music (${jazz.amplitude.toFixed(0)})`);
    assert.ok(measure(await listen(atA, 25, 0), 1000).amplitude < 100, 'and not the bridge meanwhile');

    await expectStatus(server, `/channels/${a.one.id}/moh?mohClass=no-such-class`, 204);
    const fallback = await listen(atA, 50);
    assert.ok(measure(fallback, 440).purity < 0.5 && measure(fallback, 440).rms > 300, 'an unknown class plays the default melody');

    await expectStatus(server, `/channels/${a.one.id}/moh`, 204, 'DELETE');
    assert.ok(measure(await listen(atA, 10), 1000).amplitude > 7500, 'the bridge is heard again');
    // Stopping when nothing plays is fine (Asterisk's ast_moh_stop is a no-op then).
    await expectStatus(server, `/channels/${a.one.id}/moh`, 204, 'DELETE');
    tone.stop();
    atA.stop();

    // 404 / 409 / 412.
    await expectStatus(server, '/channels/ghost/moh', 404);
    await expectStatus(server, `/channels/${a.two.id}/moh`, 409);
    const created = await expectStatus(server, `/channels/create?endpoint=Local/answer@default&app=${APP}&channelId=cmoh-down`, 200);
    await expectStatus(server, `/channels/${created.id}/moh`, 412);
    await expectStatus(server, `/channels/${created.id}/silence`, 412);
    await expectStatus(server, `/channels/${created.id}`, 204, 'DELETE');
    await finish(server, [a, b], ['chanmoh']);
  });

  test('with res_musiconhold.so unloaded, starting music on hold answers 409', unlessCluster('modules are each member\'s: res_musiconhold.so is unloaded on B, the channel\'s member A or C plays on'), async () => {
    await expectStatus(server, '/bridges/nomoh', 200);
    const a = await localCall(server, log, APP, 'nomoh-a');
    await expectStatus(server, '/asterisk/modules/res_musiconhold.so', 204, 'DELETE');
    try {
      assert.deepEqual(await expectStatus(server, `/channels/${a.one.id}/moh`, 409), { message: 'Music on hold is not available' });
      await expectStatus(server, '/bridges/nomoh/moh', 409);
    } finally {
      await expectStatus(server, '/asterisk/modules/res_musiconhold.so', 204);
    }
    await expectStatus(server, `/channels/${a.one.id}/moh`, 204);
    await finish(server, [a], ['nomoh']);
  });

  test('dialplan MusicOnHold(,1) plays the default class for a second, then the dialplan goes on', async () => {
    const call = await localCall(server, log, APP, 'dp-moh', { exten: 'timed', context: 'moh' });
    // ;2 runs the dialplan: its music goes to its far end, the ;1 half.
    const heard = capture(server, call.one);
    const music = await listen(heard, 25, 0);
    assert.ok(measure(music, 440).rms > 300, `music while MusicOnHold runs (rms ${measure(music, 440).rms.toFixed(0)})`);
    const varset = await log.waitFor('AFTER', (event) => event.type === 'ChannelVarset' && event.variable === 'AFTER' && event.channel.id === call.two.id, 0, 3000);
    assert.equal(varset.value, 'done');
    assert.ok(measure(await listen(heard, 10), 440).rms < 1, 'no music once it returned');
    heard.stop();
    await finish(server, [call]);
  });

  test('dialplan MusicOnHold(jazz) without a duration plays until hangup', async () => {
    const call = await localCall(server, log, APP, 'dp-jazz', { exten: 'jazz', context: 'moh' });
    const heard = capture(server, call.one);
    const jazz = measure(await listen(heard, 25), 440);
    assert.ok(Math.abs(jazz.amplitude - 6000) < 300, `the jazz class (${jazz.amplitude.toFixed(0)})`);
    heard.stop();
    await finish(server, [call]);
  });
});

describe('silence', () => {
  test('startSilence: the channel hears digital silence (a frame every tick) instead of its bridge; stopSilence gives the bridge back', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/quiet', 200);
    const a = await localCall(server, log, APP, 'sil-a');
    const b = await localCall(server, log, APP, 'sil-b');
    await expectStatus(server, `/bridges/quiet/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const atA = capture(server, a.two);
    const tone = toneWriter(server, (frame) => b.two.write(frame), 1000, 8000);
    assert.ok(measure(await listen(atA, 10), 1000).amplitude > 7500);
    await expectStatus(server, `/channels/${a.one.id}/silence`, 204);
    const silent = await listen(atA, 20);
    assert.equal(silent.length, 20 * 160, 'a frame on every tick');
    assert.ok(measure(silent, 1000).rms < 1, 'silence');
    await expectStatus(server, `/channels/${a.one.id}/silence`, 204, 'DELETE');
    assert.ok(measure(await listen(atA, 10), 1000).amplitude > 7500, 'the bridge again');
    await expectStatus(server, '/channels/ghost/silence', 404, 'DELETE');
    tone.stop();
    atA.stop();
    await finish(server, [a, b], ['quiet']);
  });
});

describe('snoop', () => {
  test('spy in: the snoop channel enters the app with its args and delivers what the target receives', unlessCluster(AUDIO_BY_TICKS), async () => {
    const a = await localCall(server, log, APP, 'spy-a');
    const mark = log.mark();
    const snoop = await expectStatus(server, `/channels/${a.one.id}/snoop?spy=in&app=${APP}&appArgs=one,two`, 200);
    assert.match(snoop.name, new RegExp(`^Snoop/${a.one.id.replace('.', '\\.')}-[0-9a-f]{8}$`));
    assert.equal(snoop.state, 'Up');
    const start = await log.waitFor('snoop StasisStart', isEvent('StasisStart', snoop.id), mark);
    assert.deepEqual(start.args, ['one', 'two']);
    const channel = server.channel(snoop.id);
    assert.ok(channel);
    assert.equal(channel.technology, 'Snoop');

    const spied = capture(server, channel);
    // The target's far end (A;2) speaks: the target receives it, and so does the spy.
    const tone = toneWriter(server, (frame) => a.two.write(frame), 1000, 8000);
    await ticks(server, 30);
    tone.stop();
    const heard = measure(spied.between(tone.firstTick + 3, tone.lastTick), 1000);
    assert.ok(Math.abs(heard.amplitude - 8000) < 240, `spy hears the target's audio (${heard.amplitude.toFixed(0)})`);
    assert.ok(heard.purity > 0.97);
    assert.ok(Math.abs(heard.frequency - 1000) < 10);
    // A steady frame stream on the clock, silence when the target is quiet.
    await ticks(server, 5);
    const quietFrom = server.core.media.clock.ticks;
    await ticks(server, 10);
    const quiet = spied.between(quietFrom, quietFrom + 9);
    assert.equal(quiet.length, 10 * 160);
    assert.ok(measure(quiet, 1000).rms < 1);
    spied.stop();

    // The snoop channel goes away with its target.
    const end = log.mark();
    await expectStatus(server, `/channels/${a.one.id}`, 204, 'DELETE');
    await log.waitFor('snoop StasisEnd', isEvent('StasisEnd', snoop.id), end);
    await log.waitFor('snoop destroyed', isEvent('ChannelDestroyed', snoop.id), end);
    await finish(server, [a]);
  });

  test('spy out and both: what is written towards the target, and the sum', unlessCluster(AUDIO_BY_TICKS), async () => {
    const a = await localCall(server, log, APP, 'spyout-a');
    const out = await expectStatus(server, `/channels/${a.one.id}/snoop/spy-out?spy=out&app=${APP}`, 200);
    assert.equal(out.id, 'spy-out');
    const both = await expectStatus(server, `/channels/${a.one.id}/snoop?spy=both&app=${APP}&snoopId=spy-both`, 200);
    assert.equal(both.id, 'spy-both');
    await expectStatus(server, `/channels/${a.one.id}/snoop/spy-both?spy=both&app=${APP}`, 409);
    const atOut = capture(server, server.channel('spy-out')!);
    const atBoth = capture(server, server.channel('spy-both')!);
    // 600 Hz written to the target (towards its far end), 1400 Hz received by it.
    const toward = toneWriter(server, (frame) => a.one.write(frame), 600, 5000);
    const from = toneWriter(server, (frame) => a.two.write(frame), 1400, 4000);
    await ticks(server, 30);
    toward.stop();
    from.stop();
    const first = Math.max(toward.firstTick, from.firstTick) + 3;
    const last = Math.min(toward.lastTick, from.lastTick);
    const outHeard = atOut.between(first, last);
    assert.ok(Math.abs(measure(outHeard, 600).amplitude - 5000) < 150, 'spy out hears what is written to the target');
    assert.ok(measure(outHeard, 1400).amplitude < 50, 'and not what the target receives');
    const bothHeard = atBoth.between(first, last);
    assert.ok(Math.abs(measure(bothHeard, 600).amplitude - 5000) < 150, 'spy both: written');
    assert.ok(Math.abs(measure(bothHeard, 1400).amplitude - 4000) < 120, 'spy both: received');
    atOut.stop();
    atBoth.stop();
    await finish(server, [a]);
  });

  test('whisper out: audio written to the snoop channel reaches the target\'s far end, added to what the target sends', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/whisper', 200);
    const a = await localCall(server, log, APP, 'wh-a');
    const b = await localCall(server, log, APP, 'wh-b');
    const snoop = await expectStatus(server, `/channels/${a.one.id}/snoop?whisper=out&app=${APP}`, 200);
    const snoopChannel = server.channel(snoop.id)!;
    const atFarEnd = capture(server, a.two);

    // Alone: the target sends nothing, the whisper goes on its own, one frame per tick.
    const whisper = toneWriter(server, (frame) => snoopChannel.write(frame), 800, 6000);
    await ticks(server, 30);
    const alone = atFarEnd.between(whisper.firstTick + 3, server.core.media.clock.ticks - 1);
    assert.ok(alone.length >= 25 * 160);
    assert.ok(Math.abs(measure(alone, 800).amplitude - 6000) < 180, `the far end hears the whisper (${measure(alone, 800).amplitude.toFixed(0)})`);

    // With the target in a bridge hearing B, the far end hears both, once per tick.
    await expectStatus(server, `/bridges/whisper/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const tone = toneWriter(server, (frame) => b.two.write(frame), 1000, 7000);
    await ticks(server, 5);
    const from = server.core.media.clock.ticks;
    await ticks(server, 30);
    const mixed = atFarEnd.between(from, from + 29);
    assert.equal(mixed.length, 30 * 160, 'exactly one frame per tick');
    assert.ok(Math.abs(measure(mixed, 800).amplitude - 6000) < 180, 'whisper');
    assert.ok(Math.abs(measure(mixed, 1000).amplitude - 7000) < 210, 'and the bridge');
    whisper.stop();
    tone.stop();
    atFarEnd.stop();
    await finish(server, [a, b], ['whisper']);
  });

  test('whisper in: audio written to the snoop channel is added to what the target delivers (its bridge peer hears it)', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/whisperin', 200);
    const a = await localCall(server, log, APP, 'whin-a');
    const b = await localCall(server, log, APP, 'whin-b');
    await expectStatus(server, `/bridges/whisperin/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const snoop = await expectStatus(server, `/channels/${a.one.id}/snoop?whisper=in&spy=in&app=${APP}`, 200);
    const snoopChannel = server.channel(snoop.id)!;
    const atB = capture(server, b.two);
    const spied = capture(server, snoopChannel);
    const whisper = toneWriter(server, (frame) => snoopChannel.write(frame), 800, 6000);
    await ticks(server, 5);
    const from = server.core.media.clock.ticks;
    await ticks(server, 30);
    const heard = atB.between(from, from + 29);
    assert.ok(Math.abs(measure(heard, 800).amplitude - 6000) < 180, `B hears the whisper through A (${measure(heard, 800).amplitude.toFixed(0)})`);
    assert.ok(measure(spied.between(from, from + 29), 800).amplitude < 50, 'the spy does not hear its own whisper');
    whisper.stop();
    atB.stop();
    spied.stop();
    await finish(server, [a, b], ['whisperin']);
  });

  test('errors: spy and whisper both none 400, no app 400, bad direction 400, target unknown 404', async () => {
    const a = await localCall(server, log, APP, 'snerr-a');
    assert.deepEqual(await expectStatus(server, `/channels/${a.one.id}/snoop?app=${APP}`, 400), {
      message: 'Direction must be specified for at least spy or whisper',
    });
    await expectStatus(server, `/channels/${a.one.id}/snoop?spy=in`, 400);
    await expectStatus(server, `/channels/${a.one.id}/snoop?spy=in&app=`, 400);
    await expectStatus(server, `/channels/${a.one.id}/snoop?spy=sideways&app=${APP}`, 400);
    assert.deepEqual(await expectStatus(server, `/channels/ghost/snoop?spy=in&app=${APP}`, 404), { message: 'Channel not found' });
    await expectStatus(server, `/channels/ghost/snoop/x?whisper=out&app=${APP}`, 404);
    await finish(server, [a]);
  });
});

describe('talk detection', () => {
  test('TALK_DETECT(set) through setChannelVar: a 1 s burst raises ChannelTalkingStarted and ChannelTalkingFinished with its duration', async () => {
    const a = await localCall(server, log, APP, 'talk-a');
    await expectStatus(server, `/channels/${a.one.id}/variable?variable=${encodeURIComponent('TALK_DETECT(set)')}&value=300`, 204);
    const mark = log.mark();
    const burst = toneWriter(server, (frame) => a.two.write(frame), 700, 3000);
    await ticks(server, 50);
    burst.stop();
    const started = await log.waitFor('talking started', isEvent('ChannelTalkingStarted', a.one.id), mark);
    assert.equal(started.application, APP);
    const finished = await log.waitFor('talking finished', isEvent('ChannelTalkingFinished', a.one.id), mark, 2000);
    assert.ok(finished.duration >= 900 && finished.duration <= 1100, `duration ${finished.duration} ms for a 1 s burst`);
    assert.ok(log.since(mark).indexOf(started) < log.since(mark).indexOf(finished));

    // A quiet channel raises nothing; remove stops detection; removing twice is refused.
    await expectStatus(server, `/channels/${a.one.id}/variable?variable=${encodeURIComponent('TALK_DETECT(remove)')}`, 204);
    const afterRemove = log.mark();
    const again = toneWriter(server, (frame) => a.two.write(frame), 700, 3000);
    await ticks(server, 20);
    again.stop();
    assert.equal(log.since(afterRemove).filter(isEvent('ChannelTalkingStarted', a.one.id)).length, 0);
    await expectStatus(server, `/channels/${a.one.id}/variable?variable=${encodeURIComponent('TALK_DETECT(remove)')}`, 400);
    await expectStatus(server, `/channels/${a.one.id}/variable?variable=${encodeURIComponent('TALK_DETECT(sideways)')}`, 400);
    await expectStatus(server, `/channels/${a.one.id}/variable?variable=${encodeURIComponent('TALK_DETECT(set)')}&value=abc`, 400);
    await finish(server, [a]);
  });

  test('default thresholds (2500 ms of silence ends talking), and a channel that sends nothing at all is measured as silence', async () => {
    const a = await localCall(server, log, APP, 'talk-b');
    await expectStatus(server, `/channels/${a.one.id}/variable?variable=${encodeURIComponent('TALK_DETECT(set)')}`, 204);
    const mark = log.mark();
    const burst = toneWriter(server, (frame) => a.two.write(frame), 500, 3000);
    await ticks(server, 25);
    burst.stop();
    const stoppedAt = Date.now();
    await log.waitFor('talking started', isEvent('ChannelTalkingStarted', a.one.id), mark);
    // Nothing is written after the burst: no frames arrive at all, and talking still ends.
    const finished = await log.waitFor('talking finished', isEvent('ChannelTalkingFinished', a.one.id), mark, 4000);
    assert.ok(Date.now() - stoppedAt >= 2300, 'after the silence threshold');
    assert.ok(finished.duration >= 400 && finished.duration <= 600, `duration ${finished.duration}`);
    await finish(server, [a]);
  });
});
