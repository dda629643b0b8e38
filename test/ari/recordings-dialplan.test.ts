// The dialplan's Record() on the real media engine: what the caller says (audio written into the
// ;1 half of a Local pair reaches the ;2 half running the dialplan) goes into the file, and
// RECORD_STATUS tells how the recording ended: SILENCE, DTMF, OPERATOR, TIMEOUT, HANGUP, SKIP, ERROR.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { EventSocket } from '../helpers/server.ts';
import { originate, startPbxServer, untilDestroyed, varsets, watchAll, type AriEvent, type PbxServer } from '../pbx/pbx-helpers.ts';
import { parseWav, sleep, ToneFeeder, toneAmplitude } from './recordings-helpers.ts';

// The recordings directory, named by an absolute path in the dialplan; and a directory outside it.
const absoluteDir = mkdtempSync(join(tmpdir(), 'patchbay-record-abs-'));
const outsideDir = mkdtempSync(join(tmpdir(), 'patchbay-record-outside-'));

const DIALPLAN = `
[rec]
exten => silence,1,Record(dp/silence-%d.wav,1,0,q)
 same => n,Set(DONE=\${RECORD_STATUS}|\${RECORDED_FILE})
 same => n,Hangup()
exten => hash,1,Record(dp/hash.wav,0,0,q)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => star,1,Record(dp/star.sln,0,0,qt)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => operator,1,Record(dp/operator.wav,0,0,qo)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => timeout,1,Record(dp/timeout.ulaw,0,1)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => hangup,1,Record(dp/hangup.wav,0,0,q)
 same => n,Set(DONE=not reached)
exten => keep,1,Record(dp/keep.wav,0,0,qk)
exten => escape,1,Record(../escape.wav,0,1,q)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => noext,1,Record(dp/none)
 same => n,Set(DONE=not reached)
exten => badformat,1,Record(dp/bad.mp3,0,1,q)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => skip,1,Record(dp/skip.wav,0,1,s)
 same => n,Set(DONE=\${RECORD_STATUS}|\${CHANNEL(state)})
 same => n,Hangup()
exten => absolute,1,Record(${absoluteDir}/abs.wav,0,1,q)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => outside,1,Record(${outsideDir}/made/abs.wav,0,1,q)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
exten => linked,1,Record(planted/abs.wav,0,1,q)
 same => n,Set(DONE=\${RECORD_STATUS})
 same => n,Hangup()
`;

let pbx: PbxServer;
let events: EventSocket;
let recordings: string;
const feeders: ToneFeeder[] = [];

before(async () => {
  pbx = await startPbxServer(DIALPLAN, { dirs: { recordings: absoluteDir } });
  events = await watchAll(pbx.server, 'record-watch');
  recordings = pbx.server.config.dirs.recordings;
});

after(async () => {
  for (const feeder of feeders) feeder.stop();
  await events.close();
  await pbx.stop();
  rmSync(absoluteDir, { recursive: true, force: true });
  rmSync(outsideDir, { recursive: true, force: true });
});

/** A recording has begun (not just been queued). */
const recording = (): boolean => pbx.server.core.recordings.list().some((live) => live.state === 'recording');

async function until(condition: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

/** Calls Local/<exten>@rec; the caller's audio goes into `one`. */
function call(exten: string): { one: Channel; two: Channel; feeder: ToneFeeder } {
  const { one, two } = originate(pbx.server, `Local/${exten}@rec`);
  const feeder = new ToneFeeder(pbx.server.core.media, one);
  feeders.push(feeder);
  return { one, two, feeder };
}

async function done(one: Channel, two: Channel, timeoutMs = 5000): Promise<{ seen: AriEvent[]; status: string[]; result: string[] }> {
  const seen = await untilDestroyed(events, [one, two], timeoutMs);
  return { seen, status: varsets(seen, two.name, 'RECORD_STATUS'), result: varsets(seen, two.name, 'DONE') };
}

describe('Record()', () => {
  test('ends on silence (SILENCE), numbering %d files; the caller is in the file', async () => {
    const first = call('silence');
    first.feeder.tone(1000, 8000, 25).after(recording);
    const { result } = await done(first.one, first.two);
    assert.deepEqual(result, ['SILENCE|dp/silence-0']);
    const wav = parseWav(readFileSync(join(recordings, 'dp/silence-0.wav')));
    const ms = (wav.samples.length / 8000) * 1000;
    assert.ok(ms >= 1450 && ms <= 1600, `0.5 s of tone then 1 s of silence (${ms} ms)`);
    assert.ok(Math.abs(toneAmplitude(wav.samples, 1000, 8000, 160, 3600) - 8000) < 500);
    const second = call('silence');
    assert.deepEqual((await done(second.one, second.two)).result, ['SILENCE|dp/silence-1']);
    assert.ok(existsSync(join(recordings, 'dp/silence-1.wav')));
  });

  test('# ends it (DTMF); with t, * does and # does not; with o, 0 gives OPERATOR', async () => {
    const hash = call('hash');
    await until(recording);
    await sleep(200);
    hash.one.driver.sendDigit('1', 80);
    hash.one.driver.sendDigit('#', 80);
    assert.deepEqual((await done(hash.one, hash.two)).result, ['DTMF']);
    assert.ok(parseWav(readFileSync(join(recordings, 'dp/hash.wav'))).dataSize > 0.15 * 16000);

    const star = call('star');
    await until(recording);
    star.one.driver.sendDigit('#', 80);
    await sleep(100);
    assert.equal(pbx.server.core.recordings.size, 1, '# does not end it with t');
    star.one.driver.sendDigit('*', 80);
    assert.deepEqual((await done(star.one, star.two)).result, ['DTMF']);

    const operator = call('operator');
    await until(recording);
    operator.one.driver.sendDigit('0', 80);
    assert.deepEqual((await done(operator.one, operator.two)).result, ['OPERATOR']);
  });

  test('maxduration ends it (TIMEOUT) after a beep the caller hears', async () => {
    const { one, two } = call('timeout');
    const heard: number[] = [];
    one.addFrameListener((frame) => heard.push(...frame.samples));
    const { result } = await done(one, two);
    assert.deepEqual(result, ['TIMEOUT']);
    assert.equal(statSync(join(recordings, 'dp/timeout.ulaw')).size, 8000, 'exactly 1 s of μ-law');
    const beep = Int16Array.from(heard.slice(0, 2000));
    assert.ok(Math.abs(toneAmplitude(beep, 1000, 8000) - 5000) < 300, 'a 1 kHz beep came first');
  });

  test('hangup ends it (HANGUP) and discards the file, unless k keeps it', async () => {
    const dropped = call('hangup');
    dropped.feeder.tone(1000, 8000);
    await until(recording);
    await sleep(300);
    dropped.one.hangup();
    const first = await done(dropped.one, dropped.two);
    assert.deepEqual(first.result, [], 'the dialplan does not go on');
    assert.equal(existsSync(join(recordings, 'dp/hangup.wav')), false);

    const kept = call('keep');
    kept.feeder.tone(1000, 8000);
    await until(recording);
    await sleep(300);
    kept.one.hangup();
    await done(kept.one, kept.two);
    const wav = parseWav(readFileSync(join(recordings, 'dp/keep.wav')));
    assert.ok(wav.dataSize >= 0.25 * 16000, `${wav.dataSize} bytes kept`);
    assert.equal(pbx.server.core.recordings.size, 0);
  });

  test('ERROR for a name leaving the recordings directory, an unknown format, no format; SKIP when not answered with s', async () => {
    const escape = call('escape');
    assert.deepEqual((await done(escape.one, escape.two)).result, ['ERROR']);
    assert.equal(existsSync(join(dirname(recordings), 'escape.wav')), false);
    const bad = call('badformat');
    assert.deepEqual((await done(bad.one, bad.two)).result, ['ERROR']);
    assert.equal(existsSync(join(recordings, 'dp/bad.mp3')), false);
    const none = call('noext');
    const noneDone = await done(none.one, none.two);
    assert.deepEqual(noneDone.status, ['ERROR']);
    assert.deepEqual(noneDone.result, [], 'Record without a format ends the dialplan');
    const skip = call('skip');
    assert.deepEqual((await done(skip.one, skip.two)).result, ['SKIP|Ring']);
  });

  test('an absolute file name is used as written', async () => {
    const { one, two } = call('absolute');
    assert.deepEqual((await done(one, two)).result, ['TIMEOUT']);
    assert.equal(parseWav(readFileSync(join(absoluteDir, 'abs.wav'))).dataSize, 16000);
  });

  test('an absolute name outside the recordings directory, or a link leading out of it, is ERROR and writes nothing', async () => {
    const outside = call('outside');
    assert.deepEqual((await done(outside.one, outside.two)).result, ['ERROR']);
    symlinkSync(outsideDir, join(recordings, 'planted'));
    const linked = call('linked');
    assert.deepEqual((await done(linked.one, linked.two)).result, ['ERROR']);
    assert.deepEqual(readdirSync(outsideDir), [], 'nothing was created outside');
  });
});
