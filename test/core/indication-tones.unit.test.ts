// The core's in-band indications without a server: a technology that cannot show ringing, busy or
// congestion (its indicate returns false, as chan_pjsip's -1 on an answered call) has the zone's
// tone played to it frame by frame on the media clock; stop, another tone, a playback, music on
// hold, entering a bridge, a frame written by anyone else and the hang-up end or replace it; progress leaves it; a technology that
// shows the indication itself gets no tone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Applications } from '../../src/core/applications.ts';
import { ChannelGenerators } from '../../src/core/channel-generators.ts';
import type { Channel, ChannelFunctions } from '../../src/core/channels/channel.ts';
import { Channels } from '../../src/core/channels/channels.ts';
import type { Indication } from '../../src/core/channels/technology.ts';
import { IndicationTones } from '../../src/core/indication-tones.ts';
import { MediaEngine } from '../../src/core/media-engine.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { RecordingDriver } from './kernel-helpers.ts';

const NO_FUNCTIONS: ChannelFunctions = { read: () => undefined, write: () => undefined, registerWriter: () => undefined };

/** A far end that cannot show ringing, busy, congestion or stop once answered (chan_pjsip's -1). */
class AnsweredSipLike extends RecordingDriver {
  override indicate(indication: Indication): boolean {
    super.indicate(indication);
    return false;
  }
}

function setUp(): { channels: Channels; generators: ChannelGenerators; tones: IndicationTones; media: MediaEngine; channel(driver?: RecordingDriver): { channel: Channel; driver: RecordingDriver } } {
  const media = new MediaEngine({ manualClock: true });
  const generators = new ChannelGenerators(media);
  const tones = new IndicationTones(generators);
  const applications = new Applications(() => true);
  const channels = new Channels({ applications, channelvars: [], defaultLanguage: 'en', functions: NO_FUNCTIONS, inbandIndication: (channel, indication) => tones.emulate(channel, indication) });
  let serial = 0;
  return {
    channels,
    generators,
    tones,
    media,
    channel(driver = new AnsweredSipLike()) {
      const channel = channels.create({ name: `Unit/tones-${++serial}`, technology: 'Unit', direction: 'inbound', state: 'Up' }, () => driver);
      return { channel, driver };
    },
  };
}

/** The power of `frequency` in the frames the driver got, joined. */
function power(driver: RecordingDriver, frequency: number): number {
  const samples = new Int16Array(driver.frames.length * 160);
  driver.frames.forEach((frame, index) => samples.set(frame.samples, index * 160));
  return goertzelPower(samples, frequency, 8000);
}

function ticks(media: MediaEngine, count: number): void {
  for (let i = 0; i < count; i++) media.clock.tick();
}

describe('indication tones (Asterisk core emulation of an indication the driver refused)', () => {
  test('ringing the driver refused plays the us ring tone, 440+480 Hz, frame by frame; stop ends it', () => {
    const { media, tones, channel } = setUp();
    const { channel: up, driver } = channel();
    up.indicate('ringing');
    assert.deepEqual(driver.calls, ['indicate:ringing']);
    assert.ok(tones.playing(up));
    ticks(media, 50);
    assert.equal(driver.frames.length, 50);
    assert.ok(power(driver, 440) > 1e6 && power(driver, 480) > 1e6, 'both ring frequencies');
    assert.ok(power(driver, 620) < 1e5, 'not the busy tone');
    up.indicate('stop');
    assert.equal(tones.playing(up), false);
    ticks(media, 5);
    assert.equal(driver.frames.length, 50, 'nothing after stop');
  });

  test('busy replaces ringing, progress leaves it, congestion uses the zone set on the channel', () => {
    const { media, tones, channel } = setUp();
    const { channel: up, driver } = channel();
    up.indicate('ringing');
    up.indicate('busy');
    up.indicate('progress');
    assert.ok(tones.playing(up), 'progress leaves the tone playing');
    ticks(media, 20);
    assert.ok(power(driver, 620) > 1e6, 'the busy tone');
    const { channel: german, driver: germanDriver } = channel();
    german.toneZone = 'de';
    german.indicate('congestion');
    ticks(media, 10);
    assert.ok(power(germanDriver, 425) > 1e6, "Germany's congestion tone is 425 Hz");
  });

  test('a playback or music on hold started on the channel ends the tone (interruptible, as Asterisk starts it)', () => {
    const { generators, tones, channel } = setUp();
    const { channel: played } = channel();
    played.indicate('ringing');
    generators.set(played, 'playback', { fill: () => true });
    assert.equal(tones.playing(played), false);
    assert.equal(generators.get(played, 'tones'), undefined);
    const { channel: held } = channel();
    held.indicate('ringing');
    generators.set(held, 'moh', { fill: () => true });
    assert.equal(tones.playing(held), false);
  });

  test('entering a bridge ends the tone, and a bridged channel gets none', () => {
    const { tones, channel } = setUp();
    const { channel: up } = channel();
    up.indicate('ringing');
    up.bridgeId = 'bridge-1';
    assert.equal(tones.playing(up), false);
    up.indicate('busy');
    assert.equal(tones.playing(up), false);
  });

  test('a frame anyone else writes (Echo(), early media) ends the tone and goes out itself, as an interruptible generator in ast_write', () => {
    const { media, tones, channel } = setUp();
    const { channel: up, driver } = channel();
    up.indicate('ringing');
    ticks(media, 3);
    assert.equal(driver.frames.length, 3, 'the tone plays');
    const echoed = { rate: 8000 as const, samples: new Int16Array(160).fill(1234) };
    up.write(echoed);
    assert.equal(tones.playing(up), false, 'the first foreign frame ended the tone');
    assert.equal(up.generatorActive, false);
    assert.equal(driver.frames.length, 4);
    assert.equal(driver.frames[3]!.samples[0], 1234, 'the written frame went out');
    ticks(media, 5);
    assert.equal(driver.frames.length, 4, 'no tone after it');
    // A new indication plays again, and is again interruptible.
    up.indicate('busy');
    ticks(media, 2);
    assert.equal(driver.frames.length, 6);
    up.write(echoed);
    assert.equal(tones.playing(up), false);
  });

  test('the hang-up ends the tone; a driver that shows the indication itself gets none', () => {
    const { tones, channel } = setUp();
    const { channel: up } = channel();
    up.indicate('ringing');
    up.hangup(16);
    assert.equal(tones.playing(up), false);
    const { channel: shown, driver } = channel(new RecordingDriver());
    shown.indicate('ringing');
    assert.deepEqual(driver.calls, ['indicate:ringing']);
    assert.equal(tones.playing(shown), false);
  });
});
