// Wideband mixing in a bridge on its own (no server, the clock ticked by hand): the bridge mixes at
// the highest native rate of its members, each member hears at its own rate, a narrowband member
// hears wideband audio band-limited, and a member joining or leaving changes the mix rate without
// a click, a dropout or anything left behind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Bridge } from '../../src/core/bridges/bridge.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { samplesPerFrame, type Frame, type SampleRate } from '../../src/media/frame.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { kernel, RecordingDriver, unitBridge, type Kernel } from './kernel-helpers.ts';

/** A driver speaking a format of a given rate (what a wideband technology's nativeFormat says). */
class FormatDriver extends RecordingDriver {
  constructor(public format: string) {
    super();
  }
  nativeFormat(): string {
    return this.format;
  }
}

let serial = 0;

function bridgeOf(): { k: Kernel; bridge: Bridge } {
  const k = kernel();
  return { k, bridge: unitBridge(k, { id: 'wide-bridge', name: 'wide', type: 'mixing', videoMode: 'none' }) };
}

function join(k: Kernel, bridge: Bridge, format: string): { channel: Channel; driver: FormatDriver } {
  const driver = new FormatDriver(format);
  const channel = k.channels.create({ name: `Unit/wide-${++serial}`, technology: 'Unit', direction: 'inbound', state: 'Up' }, () => driver);
  bridge.add(channel);
  return { channel, driver };
}

/** A sine, continuous across the frames it is cut into. */
class Tone {
  private sample = 0;
  constructor(
    private readonly frequency: number,
    private readonly rate: SampleRate,
    private readonly amplitude = 8000,
  ) {}
  frame(): Frame {
    const samples = new Int16Array(samplesPerFrame(this.rate));
    for (let i = 0; i < samples.length; i++, this.sample++) samples[i] = Math.round(this.amplitude * Math.sin((2 * Math.PI * this.frequency * this.sample) / this.rate));
    return { rate: this.rate, samples };
  }
}

/** Everything a driver was given from frame `from` on, joined; every frame must be at `rate`. */
function heard(driver: RecordingDriver, rate: SampleRate, from = 0): Int16Array {
  const frames = driver.frames.slice(from);
  for (const frame of frames) assert.equal(frame.rate, rate);
  const out = new Int16Array(frames.reduce((total, frame) => total + frame.samples.length, 0));
  let at = 0;
  for (const frame of frames) {
    out.set(frame.samples, at);
    at += frame.samples.length;
  }
  return out;
}

function amplitude(samples: Int16Array, frequency: number, rate: number): number {
  return powerToAmplitude(goertzelPower(samples, frequency, rate, 0, samples.length));
}

describe('Bridge mixing at the highest native rate', () => {
  test('narrowband members only: the bridge mixes at 8 kHz and passes frames as they are', () => {
    const { k, bridge } = bridgeOf();
    const a = join(k, bridge, 'ulaw');
    const b = join(k, bridge, 'alaw');
    a.channel.deliver(new Tone(1000, 8000).frame());
    bridge.tick();
    assert.equal(bridge.rate, 8000);
    assert.equal(b.driver.frames.at(-1)?.rate, 8000);
  });

  test('16 kHz and 8 kHz members: 16 kHz mix; the wideband member hears at 16 kHz, the narrowband one without what lies above 4 kHz', () => {
    const { k, bridge } = bridgeOf();
    const wide = join(k, bridge, 'slin16');
    const narrow = join(k, bridge, 'ulaw');
    const third = join(k, bridge, 'slin16');
    const high = new Tone(6000, 16000);
    const low = new Tone(1000, 8000);
    for (let tick = 0; tick < 25; tick++) {
      wide.channel.deliver(high.frame());
      narrow.channel.deliver(low.frame());
      bridge.tick();
    }
    assert.equal(bridge.rate, 16000);
    // 6 kHz reaches the other wideband member at full level...
    const thirdHeard = heard(third.driver, 16000, 5);
    assert.ok(amplitude(thirdHeard, 6000, 16000) > 7500, 'the 6 kHz tone at 16 kHz');
    assert.ok(amplitude(thirdHeard, 1000, 16000) > 7500, 'the narrowband 1 kHz, upsampled');
    // ...and is absent (not folded to 2 kHz either) for the narrowband one.
    const narrowHeard = heard(narrow.driver, 8000, 5);
    assert.ok(amplitude(narrowHeard, 2000, 8000) < 20, `alias at 2 kHz: ${amplitude(narrowHeard, 2000, 8000)}`);
    const wideHeard = heard(wide.driver, 16000, 5);
    assert.ok(amplitude(wideHeard, 1000, 16000) > 7500);
  });

  test('a 48 kHz member joining and leaving moves the mix rate up and back, with no click or dropout for the others', () => {
    const { k, bridge } = bridgeOf();
    const listener = join(k, bridge, 'slin16');
    const talker = join(k, bridge, 'ulaw');
    // 700 Hz: the delay each conversion adds (~3 ms) is not a whole number of its periods, so
    // an unspliced change of path would show as a step in the waveform.
    const tone = new Tone(700, 8000);
    let fullband: { channel: Channel; driver: FormatDriver } | undefined;
    const rates: number[] = [];
    for (let tick = 0; tick < 60; tick++) {
      if (tick === 20) fullband = join(k, bridge, 'slin48');
      if (tick === 40) bridge.remove(fullband!.channel);
      talker.channel.deliver(tone.frame());
      bridge.tick();
      rates.push(bridge.rate);
    }
    assert.deepEqual([rates[19], rates[20], rates[39], rates[40]], [16000, 48000, 48000, 16000]);
    const samples = heard(listener.driver, 16000);
    // A 700 Hz sine of peak 8000 at 16 kHz moves at most ~2200 per sample; a click is a far larger step.
    const slope = ((2 * Math.PI * 700) / 16000) * 8000;
    let largestStep = 0;
    let at = 0;
    for (let i = 320; i < samples.length; i++) {
      const step = Math.abs(samples[i] - samples[i - 1]);
      if (step > largestStep) [largestStep, at] = [step, i];
    }
    assert.ok(largestStep < slope * 1.3, `step of ${largestStep} at sample ${at} (frame ${Math.floor(at / 320)}), a sine moves ${slope.toFixed(0)}`);
    // No dropout: every millisecond after the first frames carries the tone.
    for (let ms = 20; ms < samples.length / 16; ms++) {
      let peak = 0;
      for (let i = ms * 16; i < ms * 16 + 23 && i < samples.length; i++) peak = Math.max(peak, Math.abs(samples[i]));
      assert.ok(peak > 4000, `dropout at ${ms} ms (peak ${peak})`);
    }
    // The fullband member heard at 48 kHz while it was in; nothing is left of it after.
    assert.ok(fullband!.driver.frames.every((frame) => frame.rate === 48000 && frame.samples.length === 960));
    assert.deepEqual(bridge.channelIds(), [listener.channel.id, talker.channel.id]);
    assert.equal(talker.driver.frames.at(-1)?.rate, 8000);
  });

  test('a member changing format mid-call (a re-INVITE to G.722) retunes the bridge', () => {
    const { k, bridge } = bridgeOf();
    const a = join(k, bridge, 'ulaw');
    const bDriver = new FormatDriver('ulaw');
    const b = k.channels.create({ name: 'Unit/switching', technology: 'Unit', direction: 'inbound', state: 'Up' }, () => bDriver);
    bridge.add(b);
    bridge.tick();
    assert.equal(bridge.rate, 8000);
    bDriver.format = 'g722';
    // Formats are looked at again within half a second (25 ticks) of steady mixing.
    for (let tick = 0; tick < 27; tick++) {
      a.channel.deliver(new Tone(1000, 8000).frame());
      bridge.tick();
    }
    assert.equal(bridge.rate, 16000);
    assert.equal(bDriver.frames.at(-1)?.rate, 16000);
    assert.equal(a.driver.frames.at(-1)?.rate, 8000);
  });
});
