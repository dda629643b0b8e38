// BRIDGEPEER and BRIDGEPVTCALLID on a Stasis bridge's members, on the Bridge alone (the ARI frames
// are test/ari/stasis-bridge-peer.test.ts): the call ids of two members with one (a SIP Call-ID, the
// channel's protocolId), dropped once a third joins (Asterisk's multi-party BRIDGEPEER has none:
// bridge.c set_bridge_peer_vars_multiparty), and a holding bridge clearing a stale value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Bridge } from '../../src/core/bridges/bridge.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { kernel, unitBridge, unitChannel, type Kernel } from './kernel-helpers.ts';

const bridgeOf = (k: Kernel, type: 'mixing' | 'holding'): Bridge => unitBridge(k, { id: `peers-${type}`, name: '', type, videoMode: 'talker' });

function sipLike(k: Kernel, callId: string): Channel {
  const { channel } = unitChannel(k, { state: 'Up' });
  channel.protocolId = callId;
  return channel;
}

const peerVariables = (channel: Channel): [string | undefined, string | undefined] => [channel.getVariable('BRIDGEPEER'), channel.getVariable('BRIDGEPVTCALLID')];

test("two members with call ids get each other's; a third drops them, and the bridge's end clears everything", () => {
  const k = kernel();
  const bridge = bridgeOf(k, 'mixing');
  const a = sipLike(k, 'call-a@example');
  const b = sipLike(k, 'call-b@example');
  const c = sipLike(k, 'call-c@example');
  bridge.add(a);
  assert.deepEqual(peerVariables(a), [undefined, undefined], 'a lone member is told nothing');
  bridge.add(b);
  assert.deepEqual(peerVariables(a), [b.name, 'call-b@example']);
  assert.deepEqual(peerVariables(b), [a.name, 'call-a@example']);
  bridge.add(c);
  // The newcomer heads the member order after the switch to softmix.
  assert.deepEqual(peerVariables(c), [`${a.name},${b.name}`, undefined]);
  assert.deepEqual(peerVariables(a), [`${c.name},${b.name}`, undefined]);
  assert.deepEqual(peerVariables(b), [`${c.name},${a.name}`, undefined]);
  const cleared = (channel: Channel): string[] => {
    const names: string[] = [];
    for (const event of k.events) if (event.type === 'ChannelVarset' && event.channel?.id === channel.id && event.value === '') names.push(event.variable);
    return names;
  };
  assert.deepEqual(cleared(a), ['BRIDGEPVTCALLID'], 'the call id announced cleared as the third joined');
  bridge.remove(c);
  assert.deepEqual(peerVariables(a), [b.name, 'call-b@example']);
  bridge.destroy();
  for (const channel of [a, b, c]) assert.deepEqual(peerVariables(channel), [undefined, undefined]);
});

test('a holding bridge clears a stale BRIDGEPEER on whoever enters, and sets none', () => {
  const k = kernel();
  const bridge = bridgeOf(k, 'holding');
  const a = sipLike(k, 'call-a@example');
  const b = sipLike(k, 'call-b@example');
  a.setSystemVariable('BRIDGEPEER', 'Unit/gone');
  bridge.add(a);
  bridge.add(b);
  assert.deepEqual(peerVariables(a), [undefined, undefined]);
  assert.deepEqual(peerVariables(b), [undefined, undefined]);
});
