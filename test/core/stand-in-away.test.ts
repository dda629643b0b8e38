// A stand-in for an application whose connection is away on another server (a cluster member's
// relay, Applications.standInAway): its events still reach the stand-in, channels sent to it wait
// as for a held application until the given deadline, one can be let in ahead of the others, the
// application coming back lets the rest in, and without a deadline channels are refused at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Stasis } from '../../src/core/stasis.ts';
import type { CoreEvent } from '../../src/core/applications.ts';
import { kernel } from './kernel-helpers.ts';

const APP = 'away';

function setup() {
  const k = kernel();
  const stasis = new Stasis(k.applications);
  const relayed: string[] = [];
  const standIn = { deliver: (_app: string, event: CoreEvent) => relayed.push(`${event.type}:${(event as { channel?: { id?: string } }).channel?.id ?? ''}`) };
  const call = (id: string) => k.channels.create({ id, name: `Unit/${id}`, technology: 'Unit', direction: 'inbound', state: 'Up' });
  return { k, stasis, relayed, standIn, call };
}

describe('Applications.standInAway', () => {
  it('holds channels until the application is back, letting one in ahead; events still reach the stand-in', () => {
    const { k, stasis, relayed, standIn, call } = setup();
    k.applications.standInAway(APP, standIn, Date.now() + 60_000);
    assert.equal(k.applications.isActive(APP), false);
    assert.equal(k.applications.isHeld(APP), true);
    assert.equal(k.applications.get(APP)!.snapshot().connected, false);
    const [one, two, three] = [call('s1'), call('s2'), call('s3')];
    for (const channel of [one, two, three]) assert.equal(stasis.enter(channel, APP, []), 'waiting');
    assert.deepEqual(stasis.waitingSince(APP).map((entry) => entry.channel.id), ['s1', 's2', 's3']);
    assert.ok(stasis.waitingSince(APP).every((entry, index, all) => index === 0 || entry.since >= all[index - 1]!.since));
    assert.equal(stasis.releaseWaiting(APP, 's2'), true);
    assert.equal(stasis.releaseWaiting(APP, 's2'), false);
    assert.equal(two.stasis?.app, APP);
    assert.ok(relayed.includes('StasisStart:s2'), 'the stand-in carries the StasisStart');
    // Back: the others enter in their order.
    k.applications.register(APP, standIn, false);
    assert.equal(k.applications.isActive(APP), true);
    assert.deepEqual(relayed.filter((entry) => entry.startsWith('StasisStart')), ['StasisStart:s2', 'StasisStart:s1', 'StasisStart:s3']);
    k.applications.close();
  });

  it('at the deadline the waiting channels are hung up and the stand-in lets go of the application', async () => {
    const { k, stasis, standIn, call } = setup();
    k.applications.standInAway(APP, standIn, Date.now() + 100);
    const channel = call('d1');
    assert.equal(stasis.enter(channel, APP, []), 'waiting');
    const deadline = Date.now() + 5000;
    while (!channel.hangingUp && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(channel.hangingUp, true, 'hung up at the deadline');
    assert.equal(k.applications.isActive(APP), false);
    assert.equal(k.applications.isHeld(APP), false);
    k.applications.close();
  });

  it('without a deadline (or one already past) channels are refused at once', () => {
    const { k, stasis, standIn, call } = setup();
    k.applications.standInAway(APP, standIn, undefined);
    assert.equal(stasis.enter(call('r1'), APP, []), false);
    k.applications.standInAway(APP, standIn, Date.now() - 1000);
    assert.equal(stasis.enter(call('r2'), APP, []), false);
    k.applications.close();
  });
});
