// Two channels in a call with each other, as Dial() connects its caller and the callee that
// answered (Asterisk puts them in a basic two-party bridge). Media and DTMF pass straight through
// (direct-connect.ts); a hold one party signals reaches the other, whose technology decides what
// that means (a SIP phone hears music on hold); transfers rearrange who talks to whom. Given a
// basic bridge (basic-bridge.ts), the call keeps it showing who is in the call, as ARI sees
// Asterisk's: the parties enter it, a transfer swaps them there, and it dissolves with the call.
//
// A party either has an owner, the dialplan application running it (Dial's caller), which learns
// through exitOf() how the party left the call and carries on from there, or none (Dial's callee,
// a transferee): then the call does what Asterisk's basic bridge would. A party whose peer hung up
// is hung up; a party a blind transfer sends elsewhere runs the dialplan there; a transferer, or
// a party another channel replaced, is hung up.
import type { BasicBridge, BridgedCall } from '../bridges/basic-bridge.ts';
import type { Model } from '../../spec/index.ts';
import { CAUSE } from './causes.ts';
import { InvalidError } from '../errors.ts';
import type { Channel, DialplanLocation } from './channel.ts';
import { connectMedia, type MediaConnection } from './direct-connect.ts';
import type { FeatureDigits } from './feature-digits.ts';
import type { Indication } from './driver.ts';

/** How a party left its call. */
export type PartyExit =
  /** It hung up. */
  | { readonly kind: 'hungup' }
  /** Its peer hung up with `cause`; the party itself is still up. */
  | { readonly kind: 'peer-hungup'; readonly cause: number }
  /** A blind transfer sends it to `location` (priority 1). */
  | { readonly kind: 'redirected'; readonly location: Pick<DialplanLocation, 'context' | 'exten'> }
  /**
   * It transferred its peer away, or another channel took its place: it is done. `unrequested`: a
   * party nobody owns is hung up with no hang-up request (a blind transferer, as Asterisk destroys it).
   */
  | { readonly kind: 'done'; readonly unrequested?: boolean; readonly kept?: boolean };

interface Seat {
  call: TwoPartyCall;
  /** Given by connect(): the party's owner hears of its exit instead of the call acting on it. */
  owner?: (exit: PartyExit) => void;
  /** Told at once as an owned party leaves, before its exit settles (connect's `onOwnerExit`). */
  onOwnerExit?: (exit: PartyExit) => void;
}

/** What connect() may be given beyond the parties. */
export interface ConnectOptions {
  /** The bridge ARI sees the call as: `b` enters it first, then `a`, as ast_bridge_call does. */
  readonly bridge?: BasicBridge;
  /**
   * Told synchronously as an owner's party leaves the call (the bridge is gone by then), while the
   * party still exists: Dial() leaves the call's times there, as Asterisk's end_bridge_callback.
   */
  readonly onOwnerExit?: (exit: PartyExit) => void;
  /**
   * Offered a party nobody owns whose peer hung up, before it is hung up: true when it takes the
   * party on (Dial's F sends the callee on in the dialplan, as Asterisk's after-bridge goto).
   */
  readonly goesOn?: (party: Channel) => boolean;
  /**
   * The in-call DTMF features of the parties that have any (Dial's t, T, h, H, x, X): each reads
   * its party's digits before they cross. Made once the call exists (a feature acts on it).
   */
  readonly features?: (call: TwoPartyCall) => ReadonlyMap<Channel, FeatureDigits>;
}

/** The call each channel is in; a party keeps its seat (and owner) when it moves to another call. */
const seats = new WeakMap<Channel, Seat>();

/** The parties of an attended transfer once it is done. */
export interface AttendedTransferParties {
  readonly transferee: Channel;
  readonly target: Channel;
}

export class TwoPartyCall {
  /**
   * The parties in the order they joined the call (`b`, then `a`, then whoever a swap brought in):
   * the one list of who is in the call. The basic bridge shows those of them that entered it, in
   * this order, so the two cannot disagree.
   */
  #parties: Channel[];
  #unwire: () => void = () => undefined;
  /** The exits of the parties connected with an owner. */
  readonly #exits = new Map<Channel, Promise<PartyExit>>();
  /** Parties that put their peer on hold (a re-INVITE sendonly): the peer is told unhold when they leave. */
  readonly #holding = new Set<Channel>();
  /** The bridge ARI sees the call as, if any; it carries no media. */
  readonly #bridge: BasicBridge | undefined;

  /** Offered a party nobody owns whose peer hung up (connect's `goesOn`). */
  #goesOn: ((party: Channel) => boolean) | undefined;

  /** The parties' media while they are wired together. */
  #media: MediaConnection | undefined;
  /** Set once unwired (the media may not come back on resumeMedia). */
  #unwired = false;
  /** The parties' feature readers (connect's `features`); none: digits just cross. */
  #features: ReadonlyMap<Channel, FeatureDigits> | undefined;
  /** A feature runs on a party (a blind transfer's dialling): the media stays apart until it ends. */
  #suspended = false;

  /** The bridge ARI sees the call as, as it is now (a transfer event shows it from before the transfer). */
  bridgeSnapshot(): Model<'Bridge'> | undefined {
    return this.#bridge?.snapshot();
  }

  private constructor(a: Channel, b: Channel, bridge: BasicBridge | undefined) {
    this.#parties = [b, a];
    this.#bridge = bridge;
    bridge?.attach(this.#bridgedView());
  }

  /** What the bridge reads of the call (basic-bridge.ts). */
  #bridgedView(): BridgedCall {
    return { parties: () => this.#parties, technology: () => this.#technology() };
  }

  /**
   * The technology Asterisk would show for the bridge: native_rtp while the parties' technologies
   * relay the audio themselves (two RTP calls, as Asterisk's native_rtp bridges them), simple_bridge
   * while it passes through here.
   */
  #technology(): string {
    return this.#media?.relayed() ? 'native_rtp' : 'simple_bridge';
  }

  /**
   * Connects `a` and `b`; each takes a seat in the new call (leaving none it had). The `owners`
   * among them report how they leave through exitOf() (set before anything can happen, so a party
   * that hangs up at once is reported too). With a `bridge`, `b` enters it first, then `a`, as
   * ast_bridge_call puts the called party in before the caller.
   */
  static connect(a: Channel, b: Channel, owners: readonly Channel[] = [], { bridge, onOwnerExit, goesOn, features }: ConnectOptions = {}): TwoPartyCall {
    const call = new TwoPartyCall(a, b, bridge);
    call.#goesOn = goesOn;
    call.#features = features?.(call);
    for (const party of [a, b]) {
      const seat: Seat = seats.get(party) ?? { call };
      seat.call = call;
      seats.set(party, seat);
      if (owners.includes(party)) {
        seat.onOwnerExit = onOwnerExit;
        call.#exits.set(party, new Promise((resolve) => (seat.owner = resolve)));
      }
    }
    if (bridge) {
      for (const party of [b, a]) if (!party.hangingUp) bridge.enter(party);
    }
    call.#wire();
    if (a.hangingUp || b.hangingUp) call.#partyHungUp(a.hangingUp ? a : b);
    return call;
  }

  /** The call `channel` is in, if any. */
  static of(channel: Channel): TwoPartyCall | undefined {
    return seats.get(channel)?.call;
  }

  peerOf(channel: Channel): Channel | undefined {
    // Three are listed only inside a swap, while the bridge moves them: nobody has one peer then.
    if (this.#parties.length !== 2) return undefined;
    const [first, second] = this.#parties;
    return channel === first ? second : channel === second ? first : undefined;
  }

  /**
   * How an owner's party leaves: settles when it leaves its call, whichever call that is by then (a
   * transfer may move it to another). A party without an owner resolves at once.
   */
  exitOf(channel: Channel): Promise<PartyExit> {
    return this.#exits.get(channel) ?? Promise.resolve(channel.hangingUp ? { kind: 'hungup' } : { kind: 'done' });
  }

  /** Whether `channel` is one of the call's two parties now. */
  has(channel: Channel): boolean {
    return this.peerOf(channel) !== undefined;
  }

  /**
   * A feature takes a party aside (Asterisk suspends the bridge channel while a DTMF hook runs):
   * the two no longer hear each other until resumeMedia(). Nothing when the call is coming apart.
   */
  suspendMedia(): void {
    if (this.#suspended || this.#parties.length !== 2) return;
    this.#suspended = true;
    this.#media?.disconnect();
    this.#media = undefined;
  }

  /** The feature is over and both are still here: they hear each other again. */
  resumeMedia(): void {
    if (!this.#suspended) return;
    this.#suspended = false;
    if (this.#parties.length !== 2 || this.#unwired) return;
    const [b, a] = this.#parties;
    if (!a.hangingUp && !b.hangingUp) this.#media = this.#connectMedia(a, b);
  }

  // ---- transfers -------------------------------------------------------------------------------

  /**
   * Blind transfer by `transferer`: its peer leaves for `location`, and the transferer is done.
   * Returns the transferee. `enterDialplan` runs the transferee there when nobody owns it.
   * `keepTransferer`: a transferer nobody owns is left up, for whoever asked to hang it up later (a
   * parking transfer tells it the space first, as Asterisk's).
   */
  blindTransfer(
    transferer: Channel,
    location: Pick<DialplanLocation, 'context' | 'exten'>,
    enterDialplan: (channel: Channel) => void,
    transfereeVariables: ReadonlyArray<readonly [string, string]> = [],
    keepTransferer = false,
  ): Channel | undefined {
    const transferee = this.peerOf(transferer);
    if (!transferee) return undefined;
    // Asterisk's bridging core takes the transferer off hold first (ChannelUnhold, held or not).
    transferer.unheldByFarEnd();
    // Each learns the other's name where its dialplan can read it, the transferee first; then what
    // the technology leaves on the transferee (SIP: SIPTRANSFER, SIPREFERTOHDR, ...).
    transferee.setSystemVariable('BLINDTRANSFER', transferer.name);
    transferer.setSystemVariable('BLINDTRANSFER', transferee.name);
    for (const [name, value] of transfereeVariables) {
      try {
        transferee.setVariable(name, value);
      } catch (error) {
        // A transferee full of variables (count or bytes) goes without the rest, as inheritance does.
        if (error instanceof InvalidError) break;
        throw error;
      }
    }
    this.#releaseHold(transferer, transferee);
    this.#dissolve(transferer);
    this.#exit(transferer, { kind: 'done', unrequested: true, kept: keepTransferer });
    const owned = this.#exit(transferee, { kind: 'redirected', location });
    if (!owned) {
      transferee.setLocation({ context: location.context, exten: location.exten, priority: 1 });
      queueMicrotask(() => {
        if (!transferee.hangingUp) enterDialplan(transferee);
      });
    }
    return transferee;
  }

  /**
   * Attended transfer: `firstLeg` and `secondLeg` (the transferer's two calls) leave, the peer of
   * the first (transferee) takes the second's place next to its peer (target). In Asterisk's order
   * (captured): both legs taken off hold, ATTENDEDTRANSFER on the first leg and the transferee, the
   * transferee leaves its bridge, the second leg leaves the target's and the transferee enters it,
   * then the first leg leaves and its bridge is destroyed.
   */
  static attendedTransfer(firstLeg: Channel, secondLeg: Channel): AttendedTransferParties | undefined {
    const first = TwoPartyCall.of(firstLeg);
    const second = TwoPartyCall.of(secondLeg);
    if (!first || !second || first === second) return undefined;
    const transferee = first.peerOf(firstLeg);
    const target = second.peerOf(secondLeg);
    if (!transferee || !target || transferee.hangingUp || target.hangingUp) return undefined;
    firstLeg.unheldByFarEnd();
    secondLeg.unheldByFarEnd();
    firstLeg.setSystemVariable('ATTENDEDTRANSFER', transferee.name);
    transferee.setSystemVariable('ATTENDEDTRANSFER', firstLeg.name);
    first.#releaseHold(firstLeg, transferee);
    first.#bridge?.holdTechnology(first.#technology());
    first.#unwire();
    first.#holding.clear();
    first.#bridge?.release(transferee);
    second.#swap(secondLeg, transferee);
    first.#bridge?.dissolve(firstLeg);
    first.#exit(firstLeg, { kind: 'done' });
    return { transferee, target };
  }

  /**
   * `replacement` takes `existing`'s place (an INVITE with Replaces); `existing` is done. The
   * replacement must be in no call.
   */
  replace(existing: Channel, replacement: Channel): boolean {
    if (!this.peerOf(existing) || seats.has(replacement) || replacement.hangingUp) return false;
    seats.set(replacement, { call: this });
    this.#swap(existing, replacement);
    return true;
  }

  // ---- inside ----------------------------------------------------------------------------------

  #wire(): void {
    // The latest to join first: connect's `a` (Dial's caller), after a swap the one it brought in.
    const [b, a] = this.#parties;
    this.#unwired = false;
    this.#suspended = false;
    this.#media = this.#connectMedia(a, b);
    const onHangupA = (): void => this.#partyHungUp(a);
    const onHangupB = (): void => this.#partyHungUp(b);
    const onIndicationA = (indication: Indication): void => this.#passHold(a, b, indication);
    const onIndicationB = (indication: Indication): void => this.#passHold(b, a, indication);
    a.once('hangup', onHangupA);
    b.once('hangup', onHangupB);
    a.on('remote-indication', onIndicationA);
    b.on('remote-indication', onIndicationB);
    this.#unwire = () => {
      this.#media?.disconnect();
      this.#media = undefined;
      this.#unwired = true;
      a.off('hangup', onHangupA);
      b.off('hangup', onHangupB);
      a.off('remote-indication', onIndicationA);
      b.off('remote-indication', onIndicationB);
      this.#unwire = () => undefined;
    };
  }

  /** The parties' audio and DTMF, their digits read for features first when they have any. */
  #connectMedia(a: Channel, b: Channel): MediaConnection {
    const features = this.#features;
    if (!features || features.size === 0) return connectMedia(a, b);
    return connectMedia(a, b, (from, digit, durationMs) => features.get(from)?.digit(digit, durationMs) === true);
  }

  /** A hold or unhold from one party's far end is indicated to the other, as a bridge passes it on. */
  #passHold(from: Channel, to: Channel, indication: Indication): void {
    if (indication !== 'hold' && indication !== 'unhold') return;
    if (indication === 'hold') this.#holding.add(from);
    else this.#holding.delete(from);
    if (!to.hangingUp) to.indicate(indication);
  }

  /** A party leaving while it holds its peer: the peer is taken off hold (its music stops). */
  #releaseHold(leaving: Channel, peer: Channel): void {
    if (!this.#holding.delete(leaving)) return;
    if (!peer.hangingUp) peer.indicate('unhold');
  }

  #partyHungUp(party: Channel): void {
    const peer = this.peerOf(party);
    if (!peer) return;
    // A peer that goes on (Dial's caller with option g) stops hearing music on hold; one that is
    // about to be hung up is not re-INVITEd for nothing.
    if (seats.get(peer)?.owner) this.#releaseHold(party, peer);
    this.#dissolve(party);
    this.#exit(party, { kind: 'hungup' });
    this.#exit(peer, { kind: 'peer-hungup', cause: party.hangupCause ?? CAUSE.normal });
  }

  /** `leaving` goes (done), `joining` sits in its place, keeping its owner. */
  #swap(leaving: Channel, joining: Channel): void {
    const stays = this.peerOf(leaving);
    if (!stays) return;
    this.#unwire();
    this.#features?.get(leaving)?.stop();
    this.#releaseHold(leaving, stays);
    const seat = seats.get(joining);
    if (seat) seat.call = this;
    else seats.set(joining, { call: this });
    // Both listed while the bridge moves them (it shows whichever is in it at each step), then only the new pair.
    this.#parties = [stays, leaving, joining];
    this.#bridge?.swap(leaving, joining);
    this.#parties = [stays, joining];
    this.#exit(leaving, { kind: 'done' });
    this.#wire();
    if (joining.hangingUp || stays.hangingUp) this.#partyHungUp(joining.hangingUp ? joining : stays);
  }

  /** The call comes apart: `first` (who caused it) leaves the bridge first. */
  #dissolve(first: Channel): void {
    for (const reader of this.#features?.values() ?? []) reader.stop();
    // The bridge leaves and is destroyed showing the technology it had (native_rtp stays in Asterisk's last events).
    this.#bridge?.holdTechnology(this.#technology());
    this.#unwire();
    this.#holding.clear();
    this.#bridge?.dissolve(first);
  }

  /**
   * Tells `party`'s owner how it left, or acts for it when it has none. Returns whether an owner
   * was told. Nothing happens for a party that already sits in another call.
   */
  #exit(party: Channel, exit: PartyExit): boolean {
    const seat = seats.get(party);
    if (!seat || seat.call !== this) return false;
    seats.delete(party);
    if (seat.owner) {
      seat.onOwnerExit?.(exit);
      seat.owner(exit);
      return true;
    }
    if (exit.kind === 'peer-hungup') {
      if (!party.hangingUp && this.#goesOn?.(party)) return false;
      // Hung up outright, with no hang-up request, as a basic bridge's independent party is
      // (Asterisk's ast_hangup after the bridge dissolved).
      if (!party.hangingUp) party.hangup(exit.cause, { unrequested: true });
    } else if (exit.kind === 'done' && !exit.kept) {
      // After what the transfer's requester is told now (a SIP NOTIFY in the transferer's dialog).
      queueMicrotask(() => {
        if (!party.hangingUp) party.hangup(CAUSE.normal, exit.unrequested ? { unrequested: true } : {});
      });
    }
    return false;
  }
}
