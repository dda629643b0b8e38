// A bridge member taken out without a ChannelLeftBridge (Bridge.remove with announce false): what a
// cluster member does with a stand-in whose channel's own member announced the leave already. The
// bridge is as after any leave (members, the environment told), only the event is not raised.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Bridge, type BridgeEnvironment } from '../../src/core/bridges/bridge.ts';
import { kernel, unitChannel } from './kernel-helpers.ts';

describe('a silent leave', () => {
  test('takes the channel out, tells the environment, raises no ChannelLeftBridge', () => {
    const k = kernel();
    const told: string[] = [];
    const env: BridgeEnvironment = {
      publish: (event, scope) => k.applications.publish(event, scope),
      memberJoined: (_bridge, channel) => told.push(`joined:${channel.id}`),
      memberLeft: (_bridge, channel) => told.push(`left:${channel.id}`),
      destroyed: () => told.push('destroyed'),
    };
    const bridge = new Bridge(env, { id: 'silent', name: '', type: 'mixing', videoMode: 'talker' });
    const one = unitChannel(k, { state: 'Up' }).channel;
    const two = unitChannel(k, { state: 'Up' }).channel;
    bridge.add(one);
    bridge.add(two);
    assert.equal(bridge.remove(one, false), true);
    assert.equal(one.bridgeId, undefined);
    assert.deepEqual(bridge.channelIds(), [two.id]);
    assert.deepEqual(told, [`joined:${one.id}`, `joined:${two.id}`, `left:${one.id}`]);
    assert.deepEqual(k.types(one.id).filter((type) => type.includes('Bridge')), ['ChannelEnteredBridge']);
    // An announced leave still raises it.
    bridge.remove(two);
    assert.deepEqual(k.types(two.id).filter((type) => type.includes('Bridge')), ['ChannelEnteredBridge', 'ChannelLeftBridge']);
  });
});
