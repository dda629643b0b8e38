// The playback fast path in the core, without a worker: a channel whose driver can play a shared
// sound (here the real player pair, whose "worker" side the test steps by hand) gets its file item
// handed over after the first frame made here, and its generators rest (the clock writes nothing);
// pause, forward, reverse and restart reach the player; the end of the sound moves the playback on
// at once (the next item, PlaybackFinished); a tap (a frame listener, a mute) takes the item back at the player's
// position; stop and hang-up stop the player; tones, and drivers that cannot, play frame by frame.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import type { Frame } from '../../src/media/frame.ts';
import type { SharedSound, SoundPlayback } from '../../src/media/shared-sound.ts';
import { FrameCache } from '../../src/media/workers/frame-ring.ts';
import { RemoteSoundPlay, WorkerSoundPlayer } from '../../src/media/workers/sound-player.ts';
import { ChannelGenerators } from '../../src/core/channel-generators.ts';
import { MediaEngine } from '../../src/core/media-engine.ts';
import { Playbacks } from '../../src/core/playback/playbacks.ts';
import { Sounds } from '../../src/core/sounds.ts';
import { setMuted } from '../../src/control/channel-control.ts';
import { kernel, RecordingDriver } from './kernel-helpers.ts';

const FRAME = 160;
let root: string;
let sounds: Sounds;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'patchbay-offload-'));
  mkdirSync(join(root, 'en'));
  // Sample i is i: a frame's first sample says where it came from. 10,000 samples (1.25 s).
  const ramp = new Int16Array(10_000);
  for (let i = 0; i < ramp.length; i++) ramp[i] = i;
  writeFileSync(join(root, 'en', 'ramp.sln'), Buffer.from(ramp.buffer));
  writeFileSync(join(root, 'en', 'short.sln'), Buffer.from(new Int16Array(FRAME * 3).fill(-7).buffer));
  sounds = new Sounds([root]);
});

after(() => rmSync(root, { recursive: true, force: true }));

/** A driver that plays shared sounds as a media worker would, one frame per step() of the test. */
class PlayingDriver extends RecordingDriver {
  readonly played: Frame[] = [];
  play: RemoteSoundPlay | undefined;
  worker: WorkerSoundPlayer | undefined;
  refuse = false;
  readonly #frames = new FrameCache();

  playSound(sound: SharedSound, from: number, paused: boolean, ended: () => void): SoundPlayback | undefined {
    if (this.refuse) return undefined;
    this.play = new RemoteSoundPlay(1, sound.length, from, paused, ended, () => {});
    this.worker = new WorkerSoundPlayer({ play: 1, sound: sound.buffer, rate: sound.rate, control: this.play.control });
    return this.play;
  }

  /** One worker tick: a frame of the sound, or its end told to the owner. */
  step(): void {
    const worker = this.worker;
    if (!worker || worker.stopped) return;
    const frame = worker.next(this.#frames);
    if (frame) this.played.push({ rate: frame.rate, samples: frame.samples.slice() });
    else {
      this.worker = undefined;
      this.play?.ended();
    }
  }
}

function setup(): { driver: PlayingDriver; playbacks: Playbacks; generators: ChannelGenerators; media: MediaEngine; channel: ReturnType<ReturnType<typeof kernel>['channels']['create']>; k: ReturnType<typeof kernel> } {
  const k = kernel();
  const driver = new PlayingDriver();
  const channel = k.channels.create({ name: 'Unit/offload', technology: 'Unit', direction: 'inbound', state: 'Up' }, () => driver);
  const media = new MediaEngine({ manualClock: true });
  const generators = new ChannelGenerators(media);
  const playbacks = new Playbacks({ applications: k.applications, generators, sounds, findRecording: () => undefined, log: pino({ level: 'silent' }) });
  return { driver, playbacks, generators, media, channel, k };
}

const firsts = (frames: readonly Frame[]): number[] => frames.map((frame) => frame.samples[0]);

describe('the playback fast path in the core', () => {
  test('handed over after the first frame; the channel rests; the end moves on to the next item and finishes', () => {
    const { driver, playbacks, generators, media, channel, k } = setup();
    const playback = playbacks.playOnChannel(channel, { media: ['sound:ramp', 'sound:short'], language: 'en' });
    media.clock.tick();
    assert.deepEqual(firsts(driver.frames), [0], 'the first frame is made here');
    assert.equal(generators.resting, 1);
    assert.ok(playback.remote);
    for (let i = 0; i < 5; i++) media.clock.tick();
    assert.equal(driver.frames.length, 1, 'nothing is written through the channel while the driver plays');
    for (let i = 0; i < 3; i++) driver.step();
    assert.deepEqual(firsts(driver.played), [FRAME, 2 * FRAME, 3 * FRAME]);
    const written = driver.frames.length;
    const first = driver.worker;
    while (driver.worker === first) driver.step();
    assert.equal(driver.played.at(-1)!.samples[0], 62 * FRAME);
    // The end is caught up at once, not at the next tick: the second item's first frame is made
    // here, and that item is handed over in turn.
    assert.equal(driver.frames.length, written + 1);
    assert.equal(driver.frames.at(-1)!.samples[0], -7);
    assert.equal(generators.resting, 1);
    while (driver.worker) driver.step();
    assert.equal(playback.state, 'complete', 'the end of the last item finishes the playback at once');
    assert.deepEqual(k.types(playback.id), ['PlaybackStarted', 'PlaybackContinuing', 'PlaybackStarted', 'PlaybackFinished']);
    assert.equal(generators.resting, 0);
  });

  test('a sound then a tone: the tone, after the worker\'s end, is made here', () => {
    const { driver, playbacks, generators, media, channel, k } = setup();
    const playback = playbacks.playOnChannel(channel, { media: ['sound:short', 'tone:1000'], language: 'en' });
    media.clock.tick();
    assert.equal(generators.resting, 1);
    while (driver.worker) driver.step();
    assert.equal(generators.resting, 0);
    const written = driver.frames.length;
    for (let i = 0; i < 3; i++) media.clock.tick();
    assert.equal(driver.frames.length, written + 3, 'the tone is made frame by frame');
    assert.ok(driver.frames.at(-1)!.samples.some((sample) => sample !== 0 && sample !== -7));
    playbacks.stop(playback.id);
    assert.deepEqual(k.types(playback.id), ['PlaybackStarted', 'PlaybackContinuing', 'PlaybackStarted', 'PlaybackFinished']);
  });

  test('pause, forward, reverse and restart reach the player', () => {
    const { driver, playbacks, media, channel, k } = setup();
    const playback = playbacks.playOnChannel(channel, { media: ['sound:ramp'], language: 'en', skipMs: 500 });
    media.clock.tick();
    driver.step();
    playbacks.control(playback.id, 'pause');
    driver.step();
    assert.ok(driver.played.at(-1)!.samples.every((sample) => sample === 0), 'paused: silence');
    playbacks.control(playback.id, 'unpause');
    assert.equal(k.types(playback.id).filter((type) => type === 'PlaybackStarted').length, 2);
    driver.step();
    assert.equal(driver.played.at(-1)!.samples[0], 2 * FRAME, 'on from where it paused');
    playbacks.control(playback.id, 'forward');
    driver.step();
    assert.equal(driver.played.at(-1)!.samples[0], 3 * FRAME + 4000, 'forward 500 ms');
    playbacks.control(playback.id, 'reverse');
    driver.step();
    assert.equal(driver.played.at(-1)!.samples[0], 4 * FRAME, 'reverse 500 ms');
    playbacks.control(playback.id, 'restart');
    driver.step();
    assert.equal(driver.played.at(-1)!.samples[0], 0, 'restart');
  });

  test('a tap takes the item back at the player\'s position; stop and hang-up stop the player', () => {
    const { driver, playbacks, generators, media, channel, k } = setup();
    const playback = playbacks.playOnChannel(channel, { media: ['sound:ramp'], language: 'en', offsetMs: 100 });
    media.clock.tick();
    assert.equal(driver.frames[0].samples[0], 800, 'offsetms');
    driver.step();
    driver.step();
    channel.addFrameListener(() => {});
    assert.equal(generators.resting, 0);
    assert.equal(driver.worker?.stopped, true);
    media.clock.tick();
    assert.equal(driver.frames.at(-1)!.samples[0], 800 + 3 * FRAME, 'the rest is made here from where the player got to');
    media.clock.tick();
    assert.equal(generators.resting, 0, 'an item taken back stays here');
    playbacks.stop(playback.id);
    assert.equal(k.types(playback.id).at(-1), 'PlaybackFinished');

    const muted = setup();
    muted.playbacks.playOnChannel(muted.channel, { media: ['sound:ramp'], language: 'en' });
    muted.media.clock.tick();
    assert.equal(muted.generators.resting, 1);
    setMuted(muted.channel, 'out', true);
    assert.equal(muted.generators.resting, 0, 'a mute takes the sound back: it is muted here');
    muted.media.clock.tick();
    assert.ok(muted.driver.frames.at(-1)!.samples.every((sample) => sample === 0));

    const second = setup();
    const played = second.playbacks.playOnChannel(second.channel, { media: ['sound:ramp'], language: 'en' });
    second.media.clock.tick();
    assert.equal(second.generators.resting, 1);
    second.playbacks.stop(played.id);
    assert.equal(second.driver.worker?.stopped, true, 'stop stops the player');
    assert.equal(second.generators.resting, 0);

    const third = setup();
    const hungUp = third.playbacks.playOnChannel(third.channel, { media: ['sound:ramp'], language: 'en' });
    third.media.clock.tick();
    third.channel.hangup(16);
    assert.equal(third.driver.worker?.stopped, true, 'a hang-up stops the player');
    assert.equal(hungUp.state, 'complete');
    assert.equal(third.generators.resting, 0);
  });

  test('tones, drivers that cannot and channels already tapped play frame by frame', () => {
    const tone = setup();
    tone.playbacks.playOnChannel(tone.channel, { media: ['tone:1000'], language: 'en' });
    for (let i = 0; i < 3; i++) tone.media.clock.tick();
    assert.equal(tone.driver.frames.length, 3);
    assert.equal(tone.generators.resting, 0);

    const refusing = setup();
    refusing.driver.refuse = true;
    refusing.playbacks.playOnChannel(refusing.channel, { media: ['sound:ramp'], language: 'en' });
    for (let i = 0; i < 3; i++) refusing.media.clock.tick();
    assert.deepEqual(firsts(refusing.driver.frames), [0, FRAME, 2 * FRAME]);

    const tapped = setup();
    tapped.channel.addAudioHook('write', (frame) => frame);
    tapped.playbacks.playOnChannel(tapped.channel, { media: ['sound:ramp'], language: 'en' });
    for (let i = 0; i < 3; i++) tapped.media.clock.tick();
    assert.equal(tapped.driver.frames.length, 3);
    assert.equal(tapped.generators.resting, 0);
  });
});
