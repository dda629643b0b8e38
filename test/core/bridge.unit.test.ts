// Bridge on its own, without a server or a running clock: membership and its events, the mix on
// each tick (two parties pass through, more hear the sum minus themselves, mute, holding bridges
// with announcers and idle audio, the bridge's own sources and mix listeners), DTMF between members,
// connected lines, and the end of a bridge.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Bridge, type BridgeAudioSource, type BridgeEnvironment, type BridgeInit } from '../../src/core/bridges/bridge.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { frameOf, kernel, unitChannel, type Kernel, type RecordingDriver } from './kernel-helpers.ts';

interface Setup {
  readonly k: Kernel;
  readonly bridge: Bridge;
  /** What the bridge told its environment, in order. */
  readonly told: string[];
}

function bridgeOf(init: Partial<BridgeInit> = {}, idle?: BridgeAudioSource): Setup {
  const k = kernel();
  const told: string[] = [];
  const env: BridgeEnvironment = {
    publish: (event, scope) => k.applications.publish(event, scope),
    memberJoined: (_bridge, channel) => told.push(`joined:${channel.name}`),
    memberLeft: (_bridge, channel) => told.push(`left:${channel.name}`),
    destroyed: () => told.push('destroyed'),
    idleSource: idle ? () => idle : undefined,
  };
  const bridge = new Bridge(env, { id: 'unit-bridge', name: 'unit', type: 'mixing', videoMode: 'talker', ...init });
  return { k, bridge, told };
}

/** An answered channel in the bridge; returns it with its driver. */
function member(setup: Setup, options: Parameters<Bridge['add']>[1] = {}): { channel: Channel; driver: RecordingDriver } {
  const joined = unitChannel(setup.k, { state: 'Up' });
  setup.bridge.add(joined.channel, options);
  return joined;
}

/** The first sample of the last frame each driver was given. */
const lastHeard = (...drivers: RecordingDriver[]): (number | undefined)[] => drivers.map((driver) => driver.frames.at(-1)?.samples[0]);

const constantSource = (value: number): BridgeAudioSource => ({
  fill(dst) {
    dst.fill(value);
    return true;
  },
});

describe('Bridge', () => {
  test('a channel entering and leaving is announced and told to the environment; the technology follows the member count', () => {
    const setup = bridgeOf();
    const { bridge, k, told } = setup;
    const a = member(setup).channel;
    const b = member(setup).channel;
    assert.equal(bridge.technology(), 'simple_bridge');
    const c = member(setup).channel;
    assert.equal(bridge.technology(), 'softmix');
    assert.deepEqual(bridge.channelIds(), [a.id, b.id, c.id]);
    assert.equal(a.bridgeId, bridge.id);
    assert.equal(bridge.remove(c), true);
    assert.equal(bridge.remove(c), false);
    assert.equal(c.bridgeId, undefined);
    assert.deepEqual(told, [`joined:${a.name}`, `joined:${b.name}`, `joined:${c.name}`, `left:${c.name}`]);
    // BRIDGEPEER set as the third entered, cleared as it left (captured from Asterisk 22, test/ari/stasis-bridge-peer.test.ts).
    assert.deepEqual(k.types(c.id), ['ChannelCreated', 'ChannelEnteredBridge', 'ChannelVarset', 'ChannelVarset', 'ChannelLeftBridge']);
    assert.deepEqual(bridge.snapshot().channels, [a.id, b.id]);
  });

  test('two parties hear each other, frame for frame; silence when the other sent nothing', () => {
    const setup = bridgeOf();
    const a = member(setup);
    const b = member(setup);
    a.channel.deliver(frameOf(100));
    b.channel.deliver(frameOf(-200));
    setup.bridge.tick();
    assert.deepEqual(lastHeard(a.driver, b.driver), [-200, 100]);
    a.channel.deliver(frameOf(300));
    setup.bridge.tick();
    assert.deepEqual(lastHeard(a.driver, b.driver), [0, 300]);
  });

  test('three parties each hear the sum of the others; a muted member is not heard but still hears', () => {
    const setup = bridgeOf();
    const a = member(setup);
    const b = member(setup);
    const c = member(setup, { mute: true });
    a.channel.deliver(frameOf(1));
    b.channel.deliver(frameOf(10));
    c.channel.deliver(frameOf(100));
    setup.bridge.tick();
    assert.deepEqual(lastHeard(a.driver, b.driver, c.driver), [10, 1, 11]);
  });

  test('the mix saturates instead of wrapping around', () => {
    const setup = bridgeOf();
    const a = member(setup);
    const b = member(setup);
    const c = member(setup);
    a.channel.deliver(frameOf(30000));
    b.channel.deliver(frameOf(30000));
    setup.bridge.tick();
    assert.equal(lastHeard(c.driver)[0], 32767);
  });

  test("the bridge's own sources are heard by everyone, and mix listeners get the whole mix", () => {
    const setup = bridgeOf();
    const a = member(setup);
    const b = member(setup);
    const mixes: number[] = [];
    setup.bridge.addSource(constantSource(5));
    setup.bridge.addMixListener((mix) => mixes.push(mix[0]));
    a.channel.deliver(frameOf(100));
    setup.bridge.tick();
    assert.deepEqual(lastHeard(a.driver, b.driver), [5, 105]);
    assert.deepEqual(mixes, [105]);
  });

  test('in a holding bridge participants hear announcers, not each other; with no announcer they hear the idle audio', () => {
    const setup = bridgeOf({ type: 'holding', videoMode: 'none' }, constantSource(7));
    const p1 = member(setup);
    const p2 = member(setup);
    assert.equal(setup.bridge.technology(), 'holding_bridge');
    p1.channel.deliver(frameOf(1000));
    setup.bridge.tick();
    assert.deepEqual(lastHeard(p1.driver, p2.driver), [7, 7]);

    const announcer = member(setup, { roles: ['announcer'] });
    announcer.channel.deliver(frameOf(50));
    p1.channel.deliver(frameOf(1000));
    setup.bridge.tick();
    assert.deepEqual(lastHeard(p1.driver, p2.driver), [50, 50]);
    assert.equal(announcer.driver.frames.length, 0, 'an announcer hears nothing');
  });

  test('DTMF from one member goes to the others, unless it entered absorbing DTMF', () => {
    const setup = bridgeOf();
    const a = member(setup);
    const b = member(setup);
    const c = member(setup, { absorbDtmf: true });
    a.channel.receiveDigit('7', 100);
    c.channel.receiveDigit('9', 100);
    assert.deepEqual([a.driver.digits, b.driver.digits, c.driver.digits], [[], ['7'], ['7']]);
  });

  test("two parties get each other's caller id as connected line, unless one inhibits it", () => {
    const setup = bridgeOf();
    const a = unitChannel(setup.k, { state: 'Up' }).channel;
    const b = unitChannel(setup.k, { state: 'Up' }).channel;
    a.setCaller({ name: 'Alice', number: '100' });
    b.setCaller({ name: 'Bob', number: '200' });
    setup.bridge.add(a);
    setup.bridge.add(b);
    assert.deepEqual([a.connected, b.connected], [{ name: 'Bob', number: '200' }, { name: 'Alice', number: '100' }]);

    const other = bridgeOf();
    const c = unitChannel(other.k, { state: 'Up' }).channel;
    const d = unitChannel(other.k, { state: 'Up' }).channel;
    d.setCaller({ name: 'Dave', number: '400' });
    other.bridge.add(c, { inhibitConnectedLineUpdates: true });
    other.bridge.add(d);
    assert.deepEqual(c.connected, { name: '', number: '' });
  });

  test('a member that hangs up leaves; a hung-up channel cannot enter', () => {
    const setup = bridgeOf();
    const a = member(setup).channel;
    const b = member(setup).channel;
    a.hangup();
    assert.deepEqual(setup.bridge.channelIds(), [b.id]);
    setup.bridge.add(a);
    assert.equal(setup.bridge.has(a), false);
  });

  test('entering again replaces the roles instead of adding the channel twice', () => {
    const setup = bridgeOf();
    const a = member(setup, { roles: ['announcer'] }).channel;
    setup.bridge.add(a, { roles: ['listener'] });
    assert.equal(setup.bridge.size, 1);
    assert.deepEqual(setup.bridge.roles(a), ['listener']);
  });

  test('end() lets every member go, announces BridgeDestroyed once, and takes no one after', () => {
    const setup = bridgeOf();
    const a = member(setup).channel;
    const ends: string[] = [];
    setup.bridge.on('destroyed', (gone) => ends.push(gone.id));
    setup.bridge.end();
    setup.bridge.end();
    assert.equal(setup.bridge.destroyed, true);
    assert.equal(setup.bridge.size, 0);
    assert.equal(a.bridgeId, undefined);
    assert.deepEqual(ends, [setup.bridge.id]);
    assert.deepEqual(setup.told.slice(-2), [`left:${a.name}`, 'destroyed']);
    assert.deepEqual(setup.k.types(setup.bridge.id).slice(-2), ['ChannelLeftBridge', 'BridgeDestroyed']);
    setup.bridge.add(unitChannel(setup.k, { state: 'Up' }).channel);
    assert.equal(setup.bridge.size, 0);
  });
});
