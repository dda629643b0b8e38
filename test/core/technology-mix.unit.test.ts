// The core's decision to let the members' technologies mix a bridge of three or more
// (technology-mix.ts through bridge-offload.ts), technology-neutral: drivers that can mix are asked
// to while nothing else takes the audio; a recording, a playback, a mute, a listener, a generator or
// a member that cannot be mixed (another technology) stops it at once, the bridge's mixer carrying
// the audio from its next tick, and it comes back after; a member joining or leaving makes a new
// mix; two members are the relay's, not the mix's. And the worker's mix (media/workers/worker-mix.ts)
// gives exactly what the bridge's mixer gives for the same frames, loud ones clipped alike and a
// member that said nothing hearing everyone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Bridge } from '../../src/core/bridges/bridge.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { ChannelDriver } from '../../src/core/channels/driver.ts';
import type { Frame, SampleRate } from '../../src/media/frame.ts';
import type { MixHandle } from '../../src/media/mix.ts';
import { LocalParty, WorkerMix } from '../../src/media/workers/worker-mix.ts';
import { frameOf, kernel, unitBridge, RecordingDriver, type Kernel } from './kernel-helpers.ts';

/** A driver whose technology can mix (unless told to refuse): the first member is asked for all. */
class MixDriver extends RecordingDriver {
  /** The members of the mix running now, as the first member's driver was given them. */
  mixing: readonly ChannelDriver[] | undefined;
  mixRate: SampleRate | undefined;
  refuse = false;
  mixAudio(members: readonly ChannelDriver[], rate: SampleRate): MixHandle | undefined {
    if (this.refuse || members.some((member) => !(member instanceof MixDriver))) return undefined;
    this.mixing = members;
    this.mixRate = rate;
    return { stop: () => void (this.mixing = undefined) };
  }
}

let serial = 0;
function mixChannel(k: Kernel): { channel: Channel; driver: MixDriver } {
  const driver = new MixDriver();
  const channel = k.channels.create({ name: `Mix/test-${++serial}`, technology: 'Mix', direction: 'inbound', state: 'Up' }, () => driver);
  return { channel, driver };
}

const bridgeOf = (k: Kernel): Bridge => unitBridge(k, { id: `mix-bridge-${++serial}`, name: 'mix', type: 'mixing', videoMode: 'talker' });

/** The mix that runs now (asked of the first member's driver), or undefined. */
const mixOf = (first: MixDriver): readonly ChannelDriver[] | undefined => first.mixing;

describe('a bridge mixed by its members\' technologies', () => {
  test('three members are mixed by their technologies while nothing else takes the audio; each thing that does stops it at once and it comes back', () => {
    const k = kernel();
    const bridge = bridgeOf(k);
    const [a, b, c] = [mixChannel(k), mixChannel(k), mixChannel(k)];
    bridge.add(a.channel);
    bridge.add(b.channel);
    assert.equal(mixOf(a.driver), undefined, 'two members: the relay\'s (these drivers cannot relay), not the mix\'s');
    // A recording of a two-party bridge (issue 25): a relay has no mix to write, so the two are mixed by the technologies.
    const pairRecording = (): void => undefined;
    bridge.addMixListener(pairRecording, true);
    assert.deepEqual(mixOf(a.driver), [a.driver, b.driver], 'two members and a bridge recording: a mix of two');
    bridge.removeMixListener(pairRecording, true);
    assert.equal(mixOf(a.driver), undefined, 'the recording gone: the relay\'s again');
    bridge.add(c.channel);
    assert.deepEqual(mixOf(a.driver), [a.driver, b.driver, c.driver], 'three: mixed by the technologies');
    assert.equal(a.driver.mixRate, 8000);
    assert.equal(bridge.mixedByTechnology, true);
    a.channel.deliver(frameOf(100));
    bridge.tick();
    assert.equal(a.driver.frames.length + b.driver.frames.length + c.driver.frames.length, 0, 'the mixer writes nothing meanwhile');

    const recording = (): void => undefined;
    bridge.addMixListener(recording);
    assert.equal(mixOf(a.driver), undefined, 'a bridge recording needs the mix here');
    a.channel.deliver(frameOf(1000));
    b.channel.deliver(frameOf(200));
    bridge.tick();
    assert.equal(c.driver.frames.at(-1)?.samples[0], 1200, 'the mixer carries the audio at the next tick');
    assert.equal(a.driver.frames.at(-1)?.samples[0], 200, 'each hears the others');
    bridge.removeMixListener(recording);
    assert.ok(mixOf(a.driver), 'back once the recording ends');

    // A recording of the bridge (issue 25) is written by the technologies from their mix: one does not stop it, a second does.
    const first = (): void => undefined;
    const second = (): void => undefined;
    bridge.addMixListener(first, true);
    assert.ok(mixOf(a.driver), 'one bridge recording leaves the mix to the technologies');
    bridge.addMixListener(second, true);
    assert.equal(mixOf(a.driver), undefined, 'a second one needs the mix here');
    bridge.removeMixListener(second, true);
    assert.ok(mixOf(a.driver), 'back to the technologies with one');
    bridge.removeMixListener(first, true);
    assert.ok(mixOf(a.driver));

    const source = { fill: () => false };
    bridge.addSource(source);
    assert.equal(mixOf(a.driver), undefined, 'a bridge playback');
    bridge.removeSource(source);
    assert.ok(mixOf(a.driver));

    const listener = (): void => undefined;
    b.channel.addFrameListener(listener);
    assert.equal(mixOf(a.driver), undefined, 'a listener on a member (a snoop, talk detection, its own recording)');
    b.channel.removeFrameListener(listener);
    assert.ok(mixOf(a.driver));

    c.channel.generatorActive = true;
    assert.equal(mixOf(a.driver), undefined, 'a generator on a member (its playback, music on hold)');
    c.channel.generatorActive = false;
    assert.ok(mixOf(a.driver));

    c.channel.mutedIn = true;
    assert.equal(mixOf(a.driver), undefined, 'a muted channel');
    c.channel.mutedIn = false;
    assert.ok(mixOf(a.driver));

    bridge.add(b.channel, { mute: true });
    assert.equal(mixOf(a.driver), undefined, 'a member muted in the bridge');
    bridge.add(b.channel, { mute: false });
    assert.ok(mixOf(a.driver));
    assert.ok(bridge.technologyMixEngagements >= 7, `the mix came back each time (${bridge.technologyMixEngagements})`);
    bridge.destroy();
    assert.equal(mixOf(a.driver), undefined, 'destroyed: the audio is the channels\' again');
  });

  test('a member joining or leaving makes a new mix; a member the technology cannot mix leaves it to the bridge; a refusing driver too', () => {
    const k = kernel();
    const bridge = bridgeOf(k);
    const members = [mixChannel(k), mixChannel(k), mixChannel(k)];
    for (const member of members) bridge.add(member.channel);
    const [a, , c] = members;
    const d = mixChannel(k);
    bridge.add(d.channel);
    assert.equal(mixOf(a.driver)?.length, 4, 'four mixed');
    bridge.remove(c.channel);
    assert.deepEqual(mixOf(a.driver), [a.driver, members[1].driver, d.driver], 'three again, without the one that left');

    const plain = k.channels.create({ name: 'Plain/x', technology: 'Plain', direction: 'inbound', state: 'Up' }, () => new RecordingDriver());
    bridge.add(plain);
    assert.equal(mixOf(a.driver), undefined, 'a member of another technology: the bridge mixes');
    assert.equal(bridge.mixedByTechnology, false);
    bridge.remove(plain);
    assert.ok(mixOf(a.driver), 'it left: mixed by the technologies again');

    a.driver.refuse = true;
    bridge.add(c.channel);
    assert.equal(mixOf(a.driver), undefined, 'the technology refuses: the bridge mixes');
    a.channel.deliver(frameOf(300));
    bridge.tick();
    assert.equal(c.driver.frames.at(-1)?.samples[0], 300);
  });

  test('a member hanging up leaves the mix to be made again without it', () => {
    const k = kernel();
    const bridge = bridgeOf(k);
    const members = [mixChannel(k), mixChannel(k), mixChannel(k), mixChannel(k)];
    for (const member of members) bridge.add(member.channel);
    assert.equal(mixOf(members[0].driver)?.length, 4);
    members[3].channel.hangup(38);
    assert.equal(mixOf(members[0].driver)?.length, 3, 'the other three are mixed on');
  });
});

describe('the worker\'s mix and the bridge\'s mixer', () => {
  test('give the same audio for the same frames: the sum minus each one\'s own, clipped alike; a member that said nothing hears everyone', () => {
    const k = kernel();
    const bridge = bridgeOf(k);
    const channels = [0, 1, 2, 3].map(() => k.channels.create({ name: `Plain/${++serial}`, technology: 'Plain', direction: 'inbound', state: 'Up' }, () => new RecordingDriver()));
    for (const channel of channels) bridge.add(channel);
    const heardInWorker: Int16Array[][] = channels.map(() => []);
    const parties = channels.map((_, i) => new LocalParty(8000, (frame: Frame) => void heardInWorker[i].push(frame.samples.slice())));
    const mix = new WorkerMix(1, 8000, parties);
    const said = (tick: number, member: number): Frame | undefined => {
      // Loud enough to clip, quiet, negative, and now and then nothing.
      if ((tick + member) % 5 === 4) return undefined;
      const samples = new Int16Array(160);
      for (let i = 0; i < 160; i++) samples[i] = Math.round(Math.sin((i + tick * 7) * (member + 1) * 0.05) * [30000, 12000, -25000, 3000][member]);
      return { rate: 8000, samples };
    };
    for (let tick = 0; tick < 20; tick++) {
      for (let m = 0; m < channels.length; m++) {
        const frame = said(tick, m);
        if (!frame) continue;
        channels[m].deliver(frame);
        parties[m].put(frame);
      }
      bridge.tick();
      mix.tick();
    }
    for (let m = 0; m < channels.length; m++) {
      const onMain = (channels[m].driver as RecordingDriver).frames.map((frame) => [...frame.samples]);
      assert.equal(onMain.length, 20);
      assert.deepEqual(heardInWorker[m].map((samples) => [...samples]), onMain, `member ${m} hears the same in both`);
    }
    assert.ok(heardInWorker[1].some((samples) => samples.includes(32767) || samples.includes(-32768)), 'the frames did clip somewhere');
  });
});
