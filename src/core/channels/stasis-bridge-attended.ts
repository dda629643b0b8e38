// An attended transfer a technology asks for (a SIP REFER with Replaces naming the transferer's
// other call) when at least one of the transferer's legs sits in an application's bridge, carried
// out as Asterisk 22's ast_bridge_transfer_attended does. res_stasis makes its bridges with merging
// and swapping inhibited, so the core can neither merge the two bridges nor move the transferee into
// the target's one (what call-transfers.ts does for two Dial() calls); it links them with a Local
// pair instead (attended_transfer_bridge, `Local/_attended@transfer`): `;2` takes the second leg's
// seat and `;1` the first leg's, each entering the leg's application first (StasisStart with
// `replace_channel` the leg) when the seat is in an application's bridge. The second leg is then
// hung up (a soft hang-up, as Asterisk's); a first leg in an application stays there, out of its
// bridge, for its technology to end (its phone's BYE). A leg in a Dial() call is swapped the same
// way (TwoPartyCall.replace) and hung up, as Patchbay's attended transfer between two Dial() calls
// hangs both legs up. BridgeAttendedTransfer (destination_type `link`) closes it.
import type { CoreEventOf } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import type { TransferResult } from './call-transfers.ts';
import { CAUSE, SOFT_HANGUP } from './causes.ts';
import type { Channel } from './channel.ts';
import type { StasisBridgeTransferDeps, TransferBridge } from './stasis-bridge-transfer.ts';
import { TwoPartyCall } from './two-party-call.ts';

/** Where Asterisk's attended transfer links the two bridges: an extension no dialplan runs. */
const LINK_DESTINATION = { exten: '_attended', context: 'transfer' } as const;

/** Where a transferer leg sits: an application's bridge, or a Dial() call. */
type Seat =
  | { readonly kind: 'application'; readonly leg: Channel; readonly app: string; readonly bridge: TransferBridge; readonly others: Channel[]; readonly before: Model<'Bridge'> }
  | { readonly kind: 'call'; readonly leg: Channel; readonly call: TwoPartyCall; readonly others: Channel[]; readonly before?: Model<'Bridge'> };

function seatOf(deps: StasisBridgeTransferDeps, leg: Channel): Seat | undefined {
  const app = leg.stasis?.app;
  const bridge = app ? deps.bridgeOf(leg) : undefined;
  if (app && bridge) {
    const others = bridge
      .channelIds()
      .filter((id) => id !== leg.id)
      .map((id) => deps.channel(id))
      .filter((channel): channel is Channel => channel !== undefined);
    return { kind: 'application', leg, app, bridge, others, before: bridge.eventSnapshot() };
  }
  const call = TwoPartyCall.of(leg);
  const peer = call?.peerOf(leg);
  if (!call || !peer) return undefined;
  const before = call.bridgeSnapshot();
  return { kind: 'call', leg, call, others: [peer], ...(before ? { before } : {}) };
}

/** Whether `leg` sits where a linked attended transfer can take its place. */
export function canLinkFrom(deps: StasisBridgeTransferDeps, leg: Channel): boolean {
  return seatOf(deps, leg) !== undefined;
}

/** `replacement` takes the leg's seat; false when it could not (the application gone, the seat taken). */
function takeSeat(deps: StasisBridgeTransferDeps, seat: Seat, replacement: Channel): boolean {
  if (seat.kind === 'call') return seat.call.replace(seat.leg, replacement);
  return deps.enterApplication(replacement, seat.app, seat.leg) && seat.bridge.replace(seat.leg, replacement);
}

/**
 * Links the bridges of `firstLeg` (the REFER's call: the transferee's side) and `secondLeg` (the
 * call Replaces names: the target's side). Invalid when either leg is in no bridge.
 */
export function linkedAttendedTransfer(deps: StasisBridgeTransferDeps, firstLeg: Channel, secondLeg: Channel): TransferResult {
  // What the event shows of the legs and their bridges is taken before anything moves (Asterisk
  // builds its message first).
  const firstBefore = firstLeg.snapshot();
  const secondBefore = secondLeg.snapshot();
  const first = seatOf(deps, firstLeg);
  const second = seatOf(deps, secondLeg);
  // Only a bridge of two names a transferee and a target (ast_bridge_peer).
  const transferee = first?.others.length === 1 ? first.others[0] : undefined;
  const target = second?.others.length === 1 ? second.others[0] : undefined;
  const report = (result: TransferResult, link?: readonly [Channel, Channel]): TransferResult => {
    const event: CoreEventOf<'BridgeAttendedTransfer'> = {
      type: 'BridgeAttendedTransfer',
      timestamp: formatAriDate(),
      transferer_first_leg: firstBefore,
      transferer_second_leg: secondBefore,
      result,
      // As call-transfers.ts: Asterisk's message for a protocol's attended transfer says false.
      is_external: false,
      ...(transferee ? { transferee: transferee.snapshot() } : {}),
      ...(target ? { transfer_target: target.snapshot() } : {}),
      ...(first?.before ? { transferer_first_leg_bridge: first.before } : {}),
      ...(second?.before ? { transferer_second_leg_bridge: second.before } : {}),
      destination_type: link ? 'link' : 'fail',
      ...(link ? { destination_link_first_leg: link[0].snapshot(), destination_link_second_leg: link[1].snapshot() } : {}),
    };
    const involved = [firstLeg, secondLeg, transferee, target, ...(link ?? [])].filter((channel): channel is Channel => channel !== undefined);
    const bridgeIds = [first, second].flatMap((seat) => (seat?.kind === 'application' ? [seat.bridge.id] : []));
    firstLeg.publishEvent(event, { channelIds: involved.map((channel) => channel.id), bridgeIds });
    return result;
  };
  if (!first || !second || (first.kind === 'application' && second.kind === 'application' && first.bridge === second.bridge)) return report('Invalid');
  // Both legs are taken off hold (ast_bridge_channel_write_unhold), then marked as the bridging
  // core marks an attended transfer's first bridge: the first leg names its bridge peer, every
  // other member names the first leg.
  firstLeg.unheldByFarEnd();
  secondLeg.unheldByFarEnd();
  firstLeg.setSystemVariable('ATTENDEDTRANSFER', firstLeg.getVariable('BRIDGEPEER') ?? transferee?.name ?? '');
  for (const other of first.others) other.setSystemVariable('ATTENDEDTRANSFER', firstLeg.name);
  let one: Channel;
  try {
    one = deps.requestLocal(LINK_DESTINATION, firstLeg);
  } catch {
    return fail();
  }
  const two = one.peer;
  if (!two) {
    one.hangup();
    return fail();
  }
  one.setSystemVariable('ATTENDEDTRANSFER', firstLeg.name);
  // The pair is not called: no dialplan runs at `_attended@transfer`, its halves only carry the
  // audio between the two bridges. `;2` is seated first (Asterisk calls the pair, which sets up
  // `;2`'s bridge, before it imparts `;1`).
  if (!takeSeat(deps, second, two) || !takeSeat(deps, first, one)) {
    if (!one.hangingUp) one.hangup();
    return fail();
  }
  // Both halves are up: each is a party of a bridge now, as an answered call.
  two.answer();
  if (one.state !== 'Up') one.setState('Up');
  hangUpLeg(secondLeg);
  if (first.kind === 'call') hangUpLeg(firstLeg);
  return report('Success', [one, two]);

  function fail(): TransferResult {
    // Asterisk hangs the target's leg up when the transfer failed too.
    hangUpLeg(secondLeg);
    return report('Fail');
  }
}

function hangUpLeg(leg: Channel): void {
  if (!leg.hangingUp) leg.hangup(CAUSE.normal, { soft: SOFT_HANGUP.dev });
}
