// Transfers a technology asks for on behalf of its far end (a SIP REFER, an INVITE with
// Replaces) on channels in a two-party call (two-party-call.ts), with the events Asterisk's
// bridging core raises for them: BridgeBlindTransfer and BridgeAttendedTransfer, to the
// applications watching any of the channels involved (`is_external`: a protocol asked).
import type { CoreEventOf } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';
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
 * the transferer is in no two-party call (Asterisk: not bridged). `parker`: the destination parks
 * (its first priority is Park()); the transferer is left up and handed over with the transferee,
 * to hear the space before it is hung up (Asterisk's parking blind transfer).
 */
export function blindTransfer(
  transferer: Channel,
  destination: Pick<DialplanLocation, 'context' | 'exten'>,
  startDialplan: StartDialplan,
  transfereeVariables: ReadonlyArray<readonly [string, string]> = [],
  parker?: (transferer: Channel, transferee: Channel) => void,
  { external = true }: { readonly external?: boolean } = {},
): TransferResult {
  const call = TwoPartyCall.of(transferer);
  // The bridge as it was before the transfer (both parties in it), as Asterisk's event shows it.
  const bridge = call?.bridgeSnapshot();
  const transferee = call?.blindTransfer(transferer, destination, startDialplan, transfereeVariables, parker !== undefined);
  if (transferee && parker) parker(transferer, transferee);
  const result: TransferResult = !call ? 'Invalid' : transferee ? 'Success' : 'Fail';
  const event = blindTransferEvent({ transferer, destination, result, transferee, bridge, external });
  transferer.publishEvent(event, scopeOf(transferer, transferee));
  return result;
}

/** What a protocol-asked blind transfer reports, whichever kind of bridge the transferer was in. */
export interface BlindTransferReport {
  readonly transferer: Channel;
  readonly destination: Pick<DialplanLocation, 'context' | 'exten'>;
  readonly result: TransferResult;
  readonly transferee?: Channel;
  /** The channel that took the transferer's seat (a Stasis bridge's Local `;1`). */
  readonly replacement?: Channel;
  readonly bridge?: Model<'Bridge'>;
  /** A protocol asked (a SIP REFER), as by default; false for a DTMF feature of the bridge. */
  readonly external?: boolean;
}

/**
 * BridgeBlindTransfer in Asterisk's order of fields (captured), shared by the two-party call's and
 * the Stasis bridge's transfers so both raise the same shape.
 */
export function blindTransferEvent(report: BlindTransferReport): CoreEventOf<'BridgeBlindTransfer'> {
  const { transferer, destination, result, transferee, replacement, bridge, external = true } = report;
  return {
    type: 'BridgeBlindTransfer',
    timestamp: formatAriDate(),
    channel: transferer.snapshot(),
    exten: destination.exten,
    context: destination.context,
    result,
    is_external: external,
    ...(transferee ? { transferee: transferee.snapshot() } : {}),
    ...(replacement ? { replace_channel: replacement.snapshot() } : {}),
    ...(bridge ? { bridge } : {}),
  };
}

/**
 * The transferer's `firstLeg` and `secondLeg` leave; the first one's peer (transferee) is
 * connected with the second one's (target). Invalid when either leg is in no two-party call.
 */
export function attendedTransfer(firstLeg: Channel, secondLeg: Channel): TransferResult {
  const firstCall = TwoPartyCall.of(firstLeg);
  const secondCall = TwoPartyCall.of(secondLeg);
  const firstPeer = firstCall?.peerOf(firstLeg);
  const secondPeer = secondCall?.peerOf(secondLeg);
  // Both bridges as they were before the transfer, as Asterisk's event shows them.
  const firstBridge = firstCall?.bridgeSnapshot();
  const secondBridge = secondCall?.bridgeSnapshot();
  const parties = firstPeer && secondPeer ? TwoPartyCall.attendedTransfer(firstLeg, secondLeg) : undefined;
  const result: TransferResult = !firstPeer || !secondPeer ? 'Invalid' : parties ? 'Success' : 'Fail';
  // In Asterisk's order of fields (ast_attended_transfer_to_json).
  const event: CoreEventOf<'BridgeAttendedTransfer'> = {
    type: 'BridgeAttendedTransfer',
    timestamp: formatAriDate(),
    transferer_first_leg: firstLeg.snapshot(),
    transferer_second_leg: secondLeg.snapshot(),
    result,
    // Asterisk 22 raises it with is_external false for a SIP phone's REFER with Replaces (captured):
    // res_pjsip_refer hands the two channels to the bridging core as any attended transfer.
    is_external: false,
    ...(firstPeer ? { transferee: firstPeer.snapshot() } : {}),
    ...(secondPeer ? { transfer_target: secondPeer.snapshot() } : {}),
    ...(firstBridge ? { transferer_first_leg_bridge: firstBridge } : {}),
    ...(secondBridge ? { transferer_second_leg_bridge: secondBridge } : {}),
    // The transferee took the second leg's place next to the target: Asterisk's bridge swap.
    destination_type: parties ? 'bridge' : 'fail',
    ...(parties && secondBridge ? { destination_bridge: secondBridge.id } : {}),
  };
  firstLeg.publishEvent(event, scopeOf(firstLeg, secondLeg, firstPeer, secondPeer));
  return result;
}

/** `replacement` takes `existing`'s place in its call (INVITE with Replaces); false when it is in none. */
export function replaceChannel(existing: Channel, replacement: Channel): boolean {
  return TwoPartyCall.of(existing)?.replace(existing, replacement) ?? false;
}
