// Transfers and hold in Dial() calls through the technology seam alone (no SIP): a fake
// technology's far ends call in, Dial connects them, and the technology asks the core for blind
// and attended transfers and channel replacement as a SIP REFER or INVITE with Replaces would.
// Checks who ends up connected, who is hung up, where the dialplan goes on, the events, and that
// a far end's hold reaches the other party and leaves with a transferer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { ChannelDriver, ChannelRequest, Indication } from '../../src/core/channels/technology.ts';
import type { Frame } from '../../src/media/frame.ts';
import { watchDialplanInSuite } from '../helpers/dialplan-server.ts';
import { SeamTechnology } from './seam-technology-helpers.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** A far end that answers calls at once and remembers what it was told and sent. */
class FarEnd implements ChannelDriver {
  readonly indications: Indication[] = [];
  readonly heard = new Set<number>();
  constructor(readonly channel: Channel) {}
  call(): void {
    setTimeout(() => this.channel.remoteIndication('answer'), 5);
  }
  answer(): void {}
  hangup(): void {}
  indicate(indication: Indication): void {
    this.indications.push(indication);
  }
  sendDigit(): void {}
  writeFrame(frame: Frame): void {
    this.heard.add(frame.samples[0]);
  }
}

class TransferTechnology extends SeamTechnology {
  readonly name = 'XFER';
  readonly description = 'Far ends for transfer tests';
  readonly module = { name: 'chan_xfer.so', description: 'Transfer test driver' };
  readonly farEnds = new Map<string, FarEnd>();

  #create(resource: string, direction: 'inbound' | 'outbound'): Channel {
    let farEnd: FarEnd | undefined;
    const channel = this.context!.channels.create(
      { name: this.nextName(resource), technology: this.name, direction, state: direction === 'inbound' ? 'Ring' : 'Down' },
      (created) => (farEnd = new FarEnd(created)),
    );
    this.farEnds.set(channel.id, farEnd!);
    return channel;
  }

  request(request: ChannelRequest): Channel {
    return this.#create(request.resource, 'outbound');
  }

  /** `resource` calls `exten` in context `phones`. */
  incoming(resource: string, exten: string): Channel {
    const channel = this.#create(resource, 'inbound');
    this.context!.enterDialplan(channel, { context: 'phones', exten, priority: 1 });
    return channel;
  }
}

const xfer = new TransferTechnology();
const dialplan = [
  '[phones]',
  'exten => 100,1,Dial(XFER/bob)',
  ' same => n,Hangup()',
  'exten => 200,1,Dial(XFER/carol)',
  ' same => n,Hangup()',
  'exten => 300,1,Dial(XFER/dave,,g)',
  ' same => n,Set(AFTER=yes)',
  ' same => n,Wait(5)',
  '',
].join('\n');
const watched = watchDialplanInSuite(dialplan, 'app=watcher&subscribeAll=true', { technologies: [xfer] });

const nextEvent = (match: (event: Json) => boolean, timeoutMs = 5000): Promise<Json> => watched.events.nextMatching(match, timeoutMs);

/** `from` calls `exten`; resolves with the caller's channel and the callee's once answered. */
async function answeredCall(from: string, exten: string): Promise<{ caller: Channel; callee: Channel }> {
  const caller = xfer.incoming(from, exten);
  const dial = await nextEvent((e) => e.type === 'Dial' && e.caller?.id === caller.id && e.dialstatus === 'ANSWER');
  await new Promise((resolve) => setImmediate(resolve));
  return { caller, callee: watched.server.core.channels.get(dial.peer.id)! };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('transfers and hold in Dial() calls, through the technology seam', () => {
  test('blind transfer by the caller: the callee runs the destination; the transferer is hung up; BridgeBlindTransfer', async () => {
    const { caller, callee } = await answeredCall('alice', '100');
    assert.equal(xfer.context!.transfers.blind(caller, { context: 'phones', exten: '200' }), 'Success');
    const blindMark = await nextEvent((e) => e.type === 'ChannelVarset' && e.variable === 'BLINDTRANSFER' && e.channel?.id === callee.id);
    assert.equal(blindMark.value, caller.name);
    const event = await nextEvent((e) => e.type === 'BridgeBlindTransfer');
    assert.deepEqual([event.channel.id, event.transferee.id, event.exten, event.context, event.result, event.is_external], [caller.id, callee.id, '200', 'phones', 'Success', true]);
    const dial = await nextEvent((e) => e.type === 'Dial' && e.caller?.id === callee.id && e.dialstatus === 'ANSWER');
    assert.match(dial.peer.name, /^XFER\/carol-/);
    await settle();
    assert.ok(caller.hangingUp, 'the transferer is hung up');
    // Asterisk's basic bridge clears the mark as the transferee enters its next bridge (captured, xferfid36).
    assert.equal(callee.getVariable('BLINDTRANSFER'), undefined);
    callee.hangup();
    await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === dial.peer.id);
  });

  test('blind transfer by the callee: the caller\'s dialplan goes on at the destination (Dial returns); not in a call: Invalid', async () => {
    const { caller, callee } = await answeredCall('alice', '100');
    assert.equal(xfer.context!.transfers.blind(callee, { context: 'phones', exten: '200' }), 'Success');
    const dial = await nextEvent((e) => e.type === 'Dial' && e.caller?.id === caller.id && e.dialstatus === 'ANSWER' && /^XFER\/carol-/.test(e.peer?.name));
    await settle();
    assert.ok(callee.hangingUp);
    assert.equal(caller.location.exten, '200');
    assert.equal(xfer.context!.transfers.blind(callee, { context: 'phones', exten: '200' }), 'Invalid');
    assert.equal((await nextEvent((e) => e.type === 'BridgeBlindTransfer' && e.result === 'Invalid')).channel.id, callee.id);
    caller.hangup();
    await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === dial.peer.id);
  });

  test('attended transfer: the two callees talk, both transferer legs are hung up; the held transferee\'s hold ends; BridgeAttendedTransfer', async () => {
    const first = await answeredCall('alice', '100');
    first.caller.remoteIndication('hold');
    assert.deepEqual(xfer.farEnds.get(first.callee.id)!.indications, ['hold'], 'the hold reaches bob');
    const second = await answeredCall('alice', '200');
    assert.equal(xfer.context!.transfers.attended(first.caller, second.caller), 'Success');
    const event = await nextEvent((e) => e.type === 'BridgeAttendedTransfer');
    assert.deepEqual(
      [event.transferer_first_leg.id, event.transferer_second_leg.id, event.transferee.id, event.transfer_target.id, event.result, event.destination_type],
      [first.caller.id, second.caller.id, first.callee.id, second.callee.id, 'Success', 'bridge'],
    );
    await settle();
    assert.ok(first.caller.hangingUp && second.caller.hangingUp, 'both transferer legs are hung up');
    assert.deepEqual(xfer.farEnds.get(first.callee.id)!.indications, ['hold', 'unhold'], 'bob is taken off hold');
    assert.ok(!first.callee.hangingUp && !second.callee.hangingUp);
    // bob and carol hear each other now.
    const frame: Frame = { rate: 8000, samples: new Int16Array(160).fill(1234) };
    first.callee.deliver(frame);
    assert.ok(xfer.farEnds.get(second.callee.id)!.heard.has(1234), 'carol hears bob');
    first.callee.hangup();
    await settle();
    assert.ok(second.callee.hangingUp, 'one hangs up, the other is hung up');
  });

  test('replace (INVITE with Replaces): the new channel takes the caller\'s place; its peer stays', async () => {
    const { caller, callee } = await answeredCall('alice', '100');
    const desk = xfer.context!.channels.create({ name: 'XFER/desk-0', technology: 'XFER', direction: 'inbound', state: 'Ring' }, (created) => new FarEnd(created));
    assert.equal(xfer.context!.transfers.canReplace(caller), true);
    assert.equal(xfer.context!.transfers.replace(caller, desk), true);
    await settle();
    assert.ok(caller.hangingUp, 'the replaced channel is hung up');
    assert.ok(!callee.hangingUp);
    desk.hangup();
    await settle();
    assert.ok(callee.hangingUp, 'the call goes on between desk and bob until one hangs up');
    assert.equal(xfer.context!.transfers.canReplace(desk), false);
  });

  test('the basic bridge ARI sees follows the call: a replacement and an attended transfer re-seat it, BRIDGEPEER names the new peer', async () => {
    const bridgeOf = (channel: Channel) => watched.server.core.bridges.listShown().find((bridge) => bridge.channelIds().includes(channel.id));
    const { caller, callee } = await answeredCall('alice', '100');
    const bridge = bridgeOf(caller);
    assert.ok(bridge, 'the Dial() call is in a bridge');
    assert.equal(bridge.snapshot().bridge_class, 'basic');
    assert.deepEqual(bridge.channelIds(), [callee.id, caller.id], 'the callee entered first');
    assert.equal(caller.getVariable('BRIDGEPEER'), callee.name);
    assert.equal(callee.getVariable('BRIDGEPEER'), caller.name);

    const desk = xfer.context!.channels.create({ name: 'XFER/desk-1', technology: 'XFER', direction: 'inbound', state: 'Ring' }, (created) => new FarEnd(created));
    assert.equal(xfer.context!.transfers.replace(caller, desk), true);
    await settle();
    assert.deepEqual(bridge.channelIds(), [callee.id, desk.id], 'the replacement took the caller\'s seat in the same bridge');
    assert.equal(callee.getVariable('BRIDGEPEER'), desk.name);
    assert.equal(desk.getVariable('BRIDGEPEER'), callee.name);
    desk.hangup();
    await settle();
    assert.ok(bridge.destroyed, 'the bridge dissolves with the call');

    const first = await answeredCall('alice', '100');
    const second = await answeredCall('alice', '200');
    const [firstBridge, secondBridge] = [bridgeOf(first.caller)!, bridgeOf(second.caller)!];
    assert.equal(xfer.context!.transfers.attended(first.caller, second.caller), 'Success');
    await settle();
    assert.ok(firstBridge.destroyed, "the transferer's first call's bridge is gone");
    assert.deepEqual(secondBridge.channelIds(), [second.callee.id, first.callee.id], 'the transferee sits where the second leg was');
    assert.equal(first.callee.getVariable('BRIDGEPEER'), second.callee.name);
    assert.equal(second.callee.getVariable('BRIDGEPEER'), first.callee.name);
    first.callee.hangup();
    await settle();
    assert.ok(secondBridge.destroyed);
  });

  test('with Dial option g the caller goes on after the callee hangs up, and stops hearing music on hold', async () => {
    const { caller, callee } = await answeredCall('alice', '300');
    callee.remoteIndication('hold');
    assert.deepEqual(xfer.farEnds.get(caller.id)!.indications, ['hold']);
    callee.hangup();
    await settle();
    assert.ok(!caller.hangingUp);
    assert.deepEqual(xfer.farEnds.get(caller.id)!.indications, ['hold', 'unhold']);
    assert.equal(caller.getVariable('AFTER'), 'yes');
    caller.hangup();
  });
});
