// Transfers a technology asks for on behalf of its far end (a SIP REFER, an INVITE with
// Replaces) on channels in a two-party call (two-party-call.ts), with the events Asterisk's
// bridging core raises for them: BridgeBlindTransfer and BridgeAttendedTransfer, to the
// applications watching any of the channels involved (`is_external`: a protocol asked).
import type { CoreEventOf } from '../../spec/events.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import type { Channel, DialplanLocation } from './channel.ts';
import { TwoPartyCall } from './two-party-call.ts';

/** ARI's transfer `result` values. */
export type TransferResult = 'Success' | 'Fail' | 'Invalid' | 'Not Permitted';

/** Runs the dialplan on a channel at its location (the transferee of a blind transfer). */
export type StartDialplan = (channel: Channel) => void;

function scopeOf(...channels: ReadonlyArray<Channel | undefined>): { channelIds: string[] } {
  return { channelIds: channels.filter((channel): channel is Channel => channel !== undefined).map((channel) => channel.id) };
}

/**
 * `transferer`'s peer goes to `destination` (priority 1) and the transferer is done. Invalid when
 * the transferer is in no two-party call (Asterisk: not bridged).
 */
export function blindTransfer(transferer: Channel, destination: Pick<DialplanLocation, 'context' | 'exten'>, startDialplan: StartDialplan): TransferResult {
  const call = TwoPartyCall.of(transferer);
  const transferee = call?.blindTransfer(transferer, destination, startDialplan);
  const result: TransferResult = !call ? 'Invalid' : transferee ? 'Success' : 'Fail';
  const event: CoreEventOf<'BridgeBlindTransfer'> = {
    type: 'BridgeBlindTransfer',
    timestamp: formatAriDate(),
    channel: transferer.snapshot(),
    ...(transferee ? { transferee: transferee.snapshot() } : {}),
    exten: destination.exten,
    context: destination.context,
    result,
    is_external: true,
  };
  transferer.publishEvent(event, scopeOf(transferer, transferee));
  return result;
}

/**
 * The transferer's `firstLeg` and `secondLeg` leave; the first one's peer (transferee) is
 * connected with the second one's (target). Invalid when either leg is in no two-party call.
 */
export function attendedTransfer(firstLeg: Channel, secondLeg: Channel): TransferResult {
  const firstPeer = TwoPartyCall.of(firstLeg)?.peerOf(firstLeg);
  const secondPeer = TwoPartyCall.of(secondLeg)?.peerOf(secondLeg);
  const parties = firstPeer && secondPeer ? TwoPartyCall.attendedTransfer(firstLeg, secondLeg) : undefined;
  const result: TransferResult = !firstPeer || !secondPeer ? 'Invalid' : parties ? 'Success' : 'Fail';
  const event: CoreEventOf<'BridgeAttendedTransfer'> = {
    type: 'BridgeAttendedTransfer',
    timestamp: formatAriDate(),
    transferer_first_leg: firstLeg.snapshot(),
    transferer_second_leg: secondLeg.snapshot(),
    ...(firstPeer ? { transferee: firstPeer.snapshot() } : {}),
    ...(secondPeer ? { transfer_target: secondPeer.snapshot() } : {}),
    result,
    is_external: true,
    // The transferee took the second leg's place next to the target: Asterisk's bridge swap.
    destination_type: parties ? 'bridge' : 'fail',
  };
  firstLeg.publishEvent(event, scopeOf(firstLeg, secondLeg, firstPeer, secondPeer));
  return result;
}

/** `replacement` takes `existing`'s place in its call (INVITE with Replaces); false when it is in none. */
export function replaceChannel(existing: Channel, replacement: Channel): boolean {
  return TwoPartyCall.of(existing)?.replace(existing, replacement) ?? false;
}
