// The core's side of direct media (remote-media.ts through audio-relay.ts): both technologies are
// asked or neither keeps it, it ends when the core needs the audio (a listener, a hold), and comes
// back when that goes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AudioRelay } from '../../src/core/channels/audio-relay.ts';
import type { ChannelDriver } from '../../src/core/channels/driver.ts';
import { kernel, unitChannel, type RecordingDriver } from './kernel-helpers.ts';

/** Gives a recording driver the remote-media capability: it records what it was asked and says `willing`. */
function remoteCapable(driver: RecordingDriver, willing: { value: boolean }): Array<ChannelDriver | undefined> {
  const asked: Array<ChannelDriver | undefined> = [];
  (driver as ChannelDriver).remoteMedia = (peer) => {
    asked.push(peer);
    return peer === undefined || willing.value;
  };
  return asked;
}

test('direct media runs while nothing else takes the audio, ends for a listener or a hold, and both sides are told', () => {
  const k = kernel();
  const a = unitChannel(k);
  const b = unitChannel(k);
  const aWilling = { value: true };
  const bWilling = { value: false };
  const askedA = remoteCapable(a.driver, aWilling);
  const askedB = remoteCapable(b.driver, bWilling);
  const relay = new AudioRelay(a.channel, b.channel, () => undefined, () => undefined);
  // b refuses: a, which said yes, is taken back.
  assert.equal(relay.direct, false);
  assert.deepEqual(askedA, [b.driver, undefined]);
  bWilling.value = true;
  a.channel.mediaPathChanged();
  assert.equal(relay.direct, true);
  assert.equal(relay.directions, 1);
  // A listener (a snoop, a recording) needs the audio here.
  const listener = (): void => undefined;
  a.channel.addFrameListener(listener);
  assert.equal(relay.direct, false);
  assert.equal(askedB.at(-1), undefined);
  a.channel.removeFrameListener(listener);
  assert.equal(relay.direct, true);
  assert.equal(relay.directions, 2);
  // A hold brings it back too, as bridge_native_rtp stops on one.
  b.channel.heldByFarEnd();
  assert.equal(relay.direct, false);
  b.channel.unheldByFarEnd();
  assert.equal(relay.direct, true);
  relay.stop();
  assert.equal(relay.direct, false);
  assert.equal(askedA.at(-1), undefined);
});

test('a pair whose digits are read for in-call features (Dial t, T, h, H) is never sent direct', async () => {
  const { connectMedia } = await import('../../src/core/channels/direct-connect.ts');
  const k = kernel();
  const a = unitChannel(k);
  const b = unitChannel(k);
  const askedA = remoteCapable(a.driver, { value: true });
  const askedB = remoteCapable(b.driver, { value: true });
  // Without features the same pair goes direct at once.
  const plain = connectMedia(a.channel, b.channel);
  assert.deepEqual(askedA, [b.driver]);
  plain.disconnect();
  askedA.length = 0;
  askedB.length = 0;
  const withFeatures = connectMedia(a.channel, b.channel, () => false);
  a.channel.mediaPathChanged();
  assert.equal(askedA.filter((peer) => peer !== undefined).length, 0);
  assert.equal(askedB.filter((peer) => peer !== undefined).length, 0);
  withFeatures.disconnect();
});
