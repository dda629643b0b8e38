// The core's two-party relay decision (audio-relay.ts), technology-neutral: drivers that can relay
// are asked to for a connected pair (Dial()'s direct connection) and a two-member mixing bridge
// while nothing else takes the audio; a listener, a hook, a mute, a generator, a bridge recording or
// playback, or a third member stops it at once (both directions), and it starts again after. A
// driver that refuses one direction leaves neither relayed. The bridge mixes nothing while relayed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Bridge } from '../../src/core/bridges/bridge.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { connectChannels } from '../../src/core/channels/direct-connect.ts';
import type { ChannelDriver } from '../../src/core/channels/driver.ts';
import { frameOf, kernel, unitBridge, RecordingDriver, type Kernel } from './kernel-helpers.ts';

/** A driver that can relay (unless told to refuse) and remembers to whom. */
class RelayDriver extends RecordingDriver {
  relayingTo: ChannelDriver | undefined;
  refuse = false;
  relayAudio(peer: ChannelDriver | undefined): boolean {
    if (peer && this.refuse) return false;
    this.relayingTo = peer;
    return true;
  }
}

let serial = 0;
function relayChannel(k: Kernel): { channel: Channel; driver: RelayDriver } {
  const driver = new RelayDriver();
  serial++;
  const channel = k.channels.create({ name: `Relay/test-${serial}`, technology: 'Relay', direction: 'inbound', state: 'Up' }, () => driver);
  return { channel, driver };
}

const relayed = (a: RelayDriver, b: RelayDriver): boolean => a.relayingTo === b && b.relayingTo === a;
const released = (a: RelayDriver, b: RelayDriver): boolean => a.relayingTo === undefined && b.relayingTo === undefined;

const bridgeOf = (k: Kernel): Bridge => unitBridge(k, { id: `relay-bridge-${++serial}`, name: 'relay', type: 'mixing', videoMode: 'talker' });

describe('two-party audio relay', () => {
  test('a connected pair is relayed while nothing else takes the audio: listener, hook, mute and generator each stop it, and it starts again after', () => {
    const k = kernel();
    const a = relayChannel(k);
    const b = relayChannel(k);
    const disconnect = connectChannels(a.channel, b.channel);
    assert.ok(relayed(a.driver, b.driver), 'relayed both ways');

    const listener = (): void => undefined;
    a.channel.addFrameListener(listener);
    assert.ok(released(a.driver, b.driver), 'a second listener (a recording, a snoop) stops it');
    a.channel.removeFrameListener(listener);
    assert.ok(relayed(a.driver, b.driver), 'and it starts again');

    const hook = (frame: ReturnType<typeof frameOf>) => frame;
    b.channel.addAudioHook('write', hook);
    assert.ok(released(a.driver, b.driver), 'an audio hook');
    b.channel.removeAudioHook('write', hook);
    assert.ok(relayed(a.driver, b.driver));

    a.channel.mutedIn = true;
    assert.ok(released(a.driver, b.driver), 'a mute');
    a.channel.mutedIn = false;
    assert.ok(relayed(a.driver, b.driver));

    b.channel.generatorActive = true;
    assert.ok(released(a.driver, b.driver), 'a generator (playback, music on hold)');
    b.channel.generatorActive = false;
    assert.ok(relayed(a.driver, b.driver));

    disconnect();
    assert.ok(released(a.driver, b.driver), 'disconnected: the audio is the channels\' again');
    a.channel.addFrameListener(listener);
    a.channel.removeFrameListener(listener);
    assert.ok(released(a.driver, b.driver), 'and stays so');
  });

  test('a driver that refuses one direction leaves neither relayed; a driver without the hook is never asked', () => {
    const k = kernel();
    const a = relayChannel(k);
    const b = relayChannel(k);
    b.driver.refuse = true;
    connectChannels(a.channel, b.channel);
    assert.ok(released(a.driver, b.driver));

    const c = relayChannel(k);
    const plain = k.channels.create({ name: 'Plain/x', technology: 'Plain', direction: 'inbound', state: 'Up' }, () => new RecordingDriver());
    connectChannels(c.channel, plain);
    assert.equal(c.driver.relayingTo, undefined);
  });

  test('a two-member bridge is relayed and mixes nothing; a recording, a playback or a third member stop it; it starts again after', () => {
    const k = kernel();
    const bridge = bridgeOf(k);
    const a = relayChannel(k);
    const b = relayChannel(k);
    bridge.add(a.channel);
    assert.ok(released(a.driver, b.driver), 'one member: nothing to relay');
    bridge.add(b.channel);
    assert.ok(relayed(a.driver, b.driver));
    assert.equal(bridge.relayed, true);
    bridge.tick();
    assert.equal(a.driver.frames.length + b.driver.frames.length, 0, 'the mixer writes nothing while relayed');

    const recording = (): void => undefined;
    bridge.addMixListener(recording);
    assert.ok(released(a.driver, b.driver), 'a bridge recording needs the mix here');
    a.channel.deliver(frameOf(1000));
    bridge.tick();
    assert.equal(b.driver.frames.at(-1)?.samples[0], 1000, 'the mixer carries the audio again at once');
    bridge.removeMixListener(recording);
    assert.ok(relayed(a.driver, b.driver));

    const source = { fill: () => false };
    bridge.addSource(source);
    assert.ok(released(a.driver, b.driver), 'a bridge playback');
    bridge.removeSource(source);
    assert.ok(relayed(a.driver, b.driver));

    const c = relayChannel(k);
    bridge.add(c.channel);
    assert.ok(released(a.driver, b.driver), 'a third member: the mixer');
    assert.equal(c.driver.relayingTo, undefined);
    bridge.remove(c.channel);
    assert.ok(relayed(a.driver, b.driver), 'two again');
    assert.equal(bridge.relayEngagements, 1, 'a new relay for the new pair');

    bridge.remove(b.channel);
    assert.ok(released(a.driver, b.driver), 'a member left');
    bridge.add(b.channel);
    bridge.destroy();
    assert.ok(released(a.driver, b.driver), 'destroyed');
  });
});
