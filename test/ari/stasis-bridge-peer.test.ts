// BRIDGEPEER on the members of Stasis bridges, as a subscribe-all application sees it: captured
// from Asterisk 22.10.1 (the dialfid36 captures, docs/differences.md "Stasis bridges and
// BRIDGEPEER") with Local/answer@default channels (formats=ulaw) in an application, bridged by ARI:
// - two members: each names the other, the first entered told first, after the second's
//   ChannelEnteredBridge; a lone member is told nothing;
// - a third: each gets a comma list of the others, the newcomer first (its join switched the
//   technology to softmix, which puts it at the head of Asterisk's member list); the
//   ChannelEnteredBridge still shows simple_bridge, the ChannelLeftBridge back to two softmix;
// - a member leaving: its BRIDGEPEER cleared just before its ChannelLeftBridge, the others told
//   again after it (the last one keeps the name of the one that left);
// - the list names at most 10 peers: the 12th member gets the 11th's list;
// - DELETE of the bridge: every member's BRIDGEPEER cleared first, then each leaves, the technology
//   unchanged; a holding bridge sets nothing; a member hung up is cleared after its
//   ChannelHangupRequest, before its ChannelLeftBridge; a member moved to another bridge is
//   cleared, leaves, enters the other and is told its new peer after the one already there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { watchDialplanInSuite } from '../helpers/dialplan-server.ts';

const DIALPLAN = `
[default]
exten => answer,1,Answer()
 same => n,Wait(3600)
`;
const APP = 'bridge-peer-app';

type Json = Record<string, any>;

/** A, B and C joining a mixing bridge one after another, as Asterisk 22 tells them (the newcomer first in each list). */
const THREE_JOIN = [
    'Entered A simple_bridge [1]',
    'Entered B simple_bridge [2]',
    'A BRIDGEPEER=B',
    'B BRIDGEPEER=A',
    'Entered C simple_bridge [3]',
    'C BRIDGEPEER=A,B',
    'A BRIDGEPEER=C,B',
    'B BRIDGEPEER=C,A',
];

const watched = watchDialplanInSuite(DIALPLAN, `app=${APP}&subscribeAll=true`);

/** One scenario's channels and bridges; frames are read into `frames` as steps wait for them. */
class Scenario {
  readonly frames: Json[] = [];
  readonly ids: string[] = [];
  /** Channel name → letter (A, B, ...), filled as the channels enter the application. */
  private readonly letters = new Map<string, string>();
  private readonly stamp = `bp${Date.now()}${Math.floor(Math.random() * 1e6)}`;

  async originate(count: number): Promise<void> {
    for (let index = 0; index < count; index++) {
      const id = `${this.stamp}-${String.fromCharCode(65 + index)}`;
      this.ids.push(id);
      const answer = await watched.server.ari(`/channels?endpoint=${encodeURIComponent('Local/answer@default')}&formats=ulaw&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' });
      assert.equal(answer.status, 200);
      const started = await this.until((frame) => frame.type === 'StasisStart' && frame.channel.id === id);
      this.letters.set(started.channel.name, String.fromCharCode(65 + index));
    }
  }

  async request(method: string, path: string, status = 204): Promise<void> {
    const answer = await watched.server.ari(path, { method });
    assert.equal(answer.status, status, `${method} ${path}: ${await answer.text()}`);
  }

  /** Reads frames until one matches; generous waits for a loaded machine. */
  async until(last: (frame: Json) => boolean): Promise<Json> {
    for (;;) {
      const frame = (await watched.events.next(20_000)) as Json;
      this.frames.push(frame);
      if (last(frame)) return frame;
    }
  }

  /** Until `letter`'s BRIDGEPEER is set to `value` (names as letters). */
  peerSet(letter: string, value: string): Promise<Json> {
    return this.until((frame) => frame.type === 'ChannelVarset' && frame.variable === 'BRIDGEPEER' && this.letterOf(frame.channel.name) === letter && this.lettered(frame.value) === value);
  }

  membership(type: 'ChannelEnteredBridge' | 'ChannelLeftBridge', letter: string): Promise<Json> {
    return this.until((frame) => frame.type === type && this.letterOf(frame.channel.name) === letter);
  }

  private letterOf(name: string): string {
    return this.letters.get(name) ?? '?';
  }

  private lettered(value: string): string {
    return value === '' ? '' : value.split(',').map((name) => this.letterOf(name)).join(',');
  }

  /** The bridge frames and the members' BRIDGE* variables, in order, names as letters. */
  story(): string[] {
    const lines: string[] = [];
    for (const frame of this.frames) {
      const who = frame.channel ? this.letterOf(frame.channel.name) : '';
      switch (frame.type) {
        case 'ChannelVarset':
          if (who !== '?' && frame.variable.startsWith('BRIDGE')) lines.push(`${who} ${frame.variable}=${this.lettered(frame.value)}`);
          break;
        case 'BridgeCreated':
        case 'BridgeDestroyed':
          lines.push(`${frame.type} ${frame.bridge.technology}`);
          break;
        case 'ChannelEnteredBridge':
        case 'ChannelLeftBridge':
          lines.push(`${frame.type === 'ChannelEnteredBridge' ? 'Entered' : 'Left'} ${who} ${frame.bridge.technology} [${frame.bridge.channels.length}]`);
          break;
        case 'ChannelHangupRequest':
          if (who !== '?') lines.push(`HangupRequest ${who}`);
          break;
        case 'StasisEnd':
          lines.push(`StasisEnd ${who}`);
          break;
      }
    }
    return lines;
  }

  async hangUp(): Promise<void> {
    for (const id of this.ids) {
      await this.request('DELETE', `/channels/${id}`);
      await this.until((frame) => frame.type === 'ChannelDestroyed' && frame.channel.id === `${id}-2`);
    }
  }
}

test('a mixing bridge of two, then three, members leaving one by one and the bridge deleted: BRIDGEPEER as Asterisk 22 sets it', async () => {
  const s = new Scenario();
  await s.originate(3);
  const [a, b, c] = s.ids;
  const bridge = `${s.ids[0]}-bridge`;
  s.frames.length = 0;
  await s.request('POST', `/bridges?type=mixing&bridgeId=${bridge}`, 200);
  await s.until((frame) => frame.type === 'BridgeCreated');
  await s.request('POST', `/bridges/${bridge}/addChannel?channel=${a}`);
  await s.membership('ChannelEnteredBridge', 'A');
  await s.request('POST', `/bridges/${bridge}/addChannel?channel=${b}`);
  await s.peerSet('B', 'A');
  await s.request('POST', `/bridges/${bridge}/addChannel?channel=${c}`);
  await s.peerSet('B', 'C,A');
  await s.request('POST', `/bridges/${bridge}/removeChannel?channel=${a}`);
  await s.peerSet('B', 'C');
  await s.request('POST', `/bridges/${bridge}/removeChannel?channel=${b}`);
  await s.membership('ChannelLeftBridge', 'B');
  await s.request('DELETE', `/bridges/${bridge}`);
  await s.until((frame) => frame.type === 'BridgeDestroyed');
  assert.deepEqual(s.story(), [
    'BridgeCreated simple_bridge',
    ...THREE_JOIN,
    'A BRIDGEPEER=',
    'Left A softmix [2]',
    'C BRIDGEPEER=B',
    'B BRIDGEPEER=C',
    'B BRIDGEPEER=',
    'Left B simple_bridge [1]',
    'C BRIDGEPEER=',
    'Left C simple_bridge [0]',
    'BridgeDestroyed simple_bridge',
  ]);
  await s.hangUp();
});

test('three added in one request, the bridge deleted: every BRIDGEPEER cleared before anyone leaves, softmix to the end', async () => {
  const s = new Scenario();
  await s.originate(3);
  const bridge = `${s.ids[0]}-bridge`;
  s.frames.length = 0;
  await s.request('POST', `/bridges?type=mixing&bridgeId=${bridge}`, 200);
  await s.request('POST', `/bridges/${bridge}/addChannel?channel=${s.ids.join(',')}`);
  await s.peerSet('B', 'C,A');
  await s.request('DELETE', `/bridges/${bridge}`);
  await s.until((frame) => frame.type === 'BridgeDestroyed');
  assert.deepEqual(s.story(), [
    'BridgeCreated simple_bridge',
    ...THREE_JOIN,
    'C BRIDGEPEER=',
    'A BRIDGEPEER=',
    'B BRIDGEPEER=',
    'Left C softmix [2]',
    'Left A softmix [1]',
    'Left B softmix [0]',
    'BridgeDestroyed softmix',
  ]);
  await s.hangUp();
});

test('twelve members: BRIDGEPEER lists at most ten peers, the twelfth gets the eleventh\'s list', async () => {
  const s = new Scenario();
  await s.originate(12);
  const bridge = `${s.ids[0]}-bridge`;
  await s.request('POST', `/bridges?type=mixing&bridgeId=${bridge}`, 200);
  for (const [index, id] of s.ids.entries()) {
    s.frames.length = 0;
    await s.request('POST', `/bridges/${bridge}/addChannel?channel=${id}`);
    await s.membership('ChannelEnteredBridge', String.fromCharCode(65 + index));
    // From the second on, every member is told again: wait for all of them.
    let told = 0;
    if (index > 0) await s.until((frame) => frame.type === 'ChannelVarset' && frame.variable === 'BRIDGEPEER' && ++told === index + 1);
  }
  // Asterisk's member order after the third joined: C, A, B, then the rest as they came.
  assert.deepEqual(s.story().slice(1), [
    'C BRIDGEPEER=A,B,D,E,F,G,H,I,J,K',
    'A BRIDGEPEER=C,B,D,E,F,G,H,I,J,K',
    'B BRIDGEPEER=C,A,D,E,F,G,H,I,J,K',
    'D BRIDGEPEER=C,A,B,E,F,G,H,I,J,K',
    'E BRIDGEPEER=C,A,B,D,F,G,H,I,J,K',
    'F BRIDGEPEER=C,A,B,D,E,G,H,I,J,K',
    'G BRIDGEPEER=C,A,B,D,E,F,H,I,J,K',
    'H BRIDGEPEER=C,A,B,D,E,F,G,I,J,K',
    'I BRIDGEPEER=C,A,B,D,E,F,G,H,J,K',
    'J BRIDGEPEER=C,A,B,D,E,F,G,H,I,K',
    'K BRIDGEPEER=C,A,B,D,E,F,G,H,I,J',
    'L BRIDGEPEER=C,A,B,D,E,F,G,H,I,J',
  ]);
  s.frames.length = 0;
  await s.request('DELETE', `/bridges/${bridge}`);
  await s.until((frame) => frame.type === 'BridgeDestroyed');
  const cleared = s.story().filter((line) => line.includes('BRIDGEPEER'));
  assert.deepEqual(cleared, ['C', 'A', 'B', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L'].map((letter) => `${letter} BRIDGEPEER=`));
  await s.hangUp();
});

test('a holding bridge and a lone member set no BRIDGEPEER', async () => {
  const s = new Scenario();
  await s.originate(2);
  const [a, b] = s.ids;
  const holding = `${a}-holding`;
  const single = `${a}-single`;
  s.frames.length = 0;
  await s.request('POST', `/bridges?type=holding&bridgeId=${holding}`, 200);
  await s.request('POST', `/bridges/${holding}/addChannel?channel=${a}`);
  await s.request('POST', `/bridges/${holding}/addChannel?channel=${b}`);
  await s.membership('ChannelEnteredBridge', 'B');
  await s.request('POST', `/bridges/${holding}/removeChannel?channel=${a}`);
  await s.membership('ChannelLeftBridge', 'A');
  await s.request('DELETE', `/bridges/${holding}`);
  await s.until((frame) => frame.type === 'BridgeDestroyed');
  await s.request('POST', `/bridges?type=mixing&bridgeId=${single}`, 200);
  await s.request('POST', `/bridges/${single}/addChannel?channel=${a}`);
  await s.membership('ChannelEnteredBridge', 'A');
  await s.request('POST', `/bridges/${single}/removeChannel?channel=${a}`);
  await s.membership('ChannelLeftBridge', 'A');
  await s.request('DELETE', `/bridges/${single}`);
  await s.until((frame) => frame.type === 'BridgeDestroyed');
  assert.deepEqual(s.story(), [
    'BridgeCreated holding_bridge',
    'Entered A holding_bridge [1]',
    'Entered B holding_bridge [2]',
    'Left A holding_bridge [1]',
    'Left B holding_bridge [0]',
    'BridgeDestroyed holding_bridge',
    'BridgeCreated simple_bridge',
    'Entered A simple_bridge [1]',
    'Left A simple_bridge [0]',
    'BridgeDestroyed simple_bridge',
  ]);
  await s.hangUp();
});

test('a member hung up in the bridge, and one moved to another bridge: cleared before it leaves', async () => {
  const s = new Scenario();
  await s.originate(4);
  const [a, b, c, d] = s.ids;
  const first = `${a}-first`;
  const second = `${a}-second`;
  s.frames.length = 0;
  await s.request('POST', `/bridges?type=mixing&bridgeId=${first}`, 200);
  await s.request('POST', `/bridges/${first}/addChannel?channel=${a},${b}`);
  await s.peerSet('B', 'A');
  await s.request('DELETE', `/channels/${a}`);
  await s.until((frame) => frame.type === 'StasisEnd' && frame.channel.id === a);
  await s.request('POST', `/bridges/${first}/addChannel?channel=${c}`);
  await s.peerSet('C', 'B');
  await s.request('POST', `/bridges?type=mixing&bridgeId=${second}`, 200);
  await s.request('POST', `/bridges/${second}/addChannel?channel=${d}`);
  await s.membership('ChannelEnteredBridge', 'D');
  await s.request('POST', `/bridges/${second}/addChannel?channel=${c}`);
  await s.peerSet('C', 'D');
  const story = s.story();
  // What Asterisk's hang-up of a member sends between its request and its StasisEnd.
  const hungUp = story.indexOf('HangupRequest A');
  assert.deepEqual(story.slice(hungUp, story.indexOf('StasisEnd A') + 1), ['HangupRequest A', 'A BRIDGEPEER=', 'Left A simple_bridge [1]', 'StasisEnd A']);
  assert.deepEqual(story.slice(story.indexOf('Entered C simple_bridge [2]')), [
    'Entered C simple_bridge [2]',
    'B BRIDGEPEER=C',
    'C BRIDGEPEER=B',
    'BridgeCreated simple_bridge',
    'Entered D simple_bridge [1]',
    'C BRIDGEPEER=',
    'Left C simple_bridge [1]',
    'Entered C simple_bridge [2]',
    'D BRIDGEPEER=C',
    'C BRIDGEPEER=D',
  ]);
  await s.request('DELETE', `/bridges/${first}`);
  await s.request('DELETE', `/bridges/${second}`);
  s.ids.shift();
  await s.hangUp();
});
