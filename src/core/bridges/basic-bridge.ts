// The bridge Dial() puts its caller and the callee that answered in, as Asterisk's app_dial does
// (ast_bridge_call: a "basic" bridge). It exists so that ARI sees the call as Asterisk shows it:
// BridgeCreated, ChannelEnteredBridge for each party, BRIDGEPEER on both, ChannelLeftBridge and
// BridgeDestroyed as it dissolves; GET /bridges lists it, and the bridge operations answer 409
// (it is no Stasis application's). It carries no media: the two-party call behind it passes audio
// and DTMF straight through (two-party-call.ts, direct-connect.ts), as Asterisk's simple_bridge and
// native_rtp technologies relay a two-party basic bridge without a mixer.
import { randomUUID } from 'node:crypto';
import type { CoreEvent, EventScope } from '../applications.ts';
import type { Channel } from '../channels/channel.ts';
import type { Model } from '../../spec/index.ts';
import type { CoreEventOf } from '../../spec/events.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { clearPeerVariables, setPeerVariables, unsetVariable } from './bridge-peers.ts';

export interface BasicBridgeEnvironment {
  publish(event: CoreEvent, scope: EventScope): void;
  /** The bridge dissolved (after BridgeDestroyed): the table forgets it. */
  destroyed(bridge: BasicBridge): void;
}

/** What the bridge shows of the two-party call behind it (two-party-call.ts). */
export interface BridgedCall {
  /**
   * The call's parties in the order they joined it; during a swap the one joining is listed
   * after the one leaving until the bridge has moved them.
   */
  parties(): readonly Channel[];
  /**
   * Asterisk's technology for two parties: simple_bridge, or native_rtp once both are RTP calls
   * whose media is relayed between them without the core (its smart bridge switches after both
   * entered, so the enter events still show simple_bridge).
   */
  technology(): string;
}

/** What events and REST answers show of the bridge; the same for every basic bridge. */
const BASIC_BRIDGE_SHAPE = {
  bridge_type: 'mixing',
  bridge_class: 'basic',
  creator: '',
  name: '',
} as const;

export class BasicBridge {
  readonly id = randomUUID();
  readonly creationtime = new Date();
  /** The call the bridge shows (attach); none yet: no members, simple_bridge. */
  #call: BridgedCall | undefined;
  #destroyed = false;
  /** The technology the bridge keeps showing while it dissolves (holdTechnology). */
  #heldTechnology: string | undefined;

  constructor(private readonly env: BasicBridgeEnvironment) {}

  /**
   * The call behind the bridge: who is in the bridge and what carries the audio are read from it,
   * so the bridge keeps no list of its own that could disagree with the call's parties.
   */
  attach(call: BridgedCall): void {
    this.#call = call;
  }

  /** The bridge is coming apart: it shows `technology` from now on, whatever its media becomes. */
  holdTechnology(technology: string): void {
    this.#heldTechnology ??= technology;
  }

  technology(): string {
    return this.#heldTechnology ?? this.#call?.technology() ?? 'simple_bridge';
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  get name(): string {
    return BASIC_BRIDGE_SHAPE.name;
  }

  /**
   * The call's parties that entered and have not left, in the order they joined the call: the
   * `channels` of every snapshot. A party hanging up as the call began never enters.
   */
  members(): Channel[] {
    return this.#call?.parties().filter((party) => party.bridgeId === this.id) ?? [];
  }

  channelIds(): string[] {
    return this.members().map((member) => member.id);
  }

  has(channel: Channel): boolean {
    return channel.bridgeId === this.id && this.#call?.parties().includes(channel) === true;
  }

  snapshot(): Model<'Bridge'> {
    // In Asterisk's order of fields (ast_bridge_snapshot_to_json).
    const { bridge_type, bridge_class, creator, name } = BASIC_BRIDGE_SHAPE;
    return { id: this.id, technology: this.technology(), bridge_type, bridge_class, creator, name, channels: this.channelIds(), creationtime: formatAriDate(this.creationtime), video_mode: 'none' };
  }

  /** Events carry the same snapshot: a basic bridge has no variables of its own. */
  eventSnapshot(): Model<'Bridge'> {
    return this.snapshot();
  }

  /** Announced by the table once the bridge is listed. */
  announceCreation(): void {
    const created: CoreEventOf<'BridgeCreated'> = { type: 'BridgeCreated', timestamp: formatAriDate(), bridge: this.snapshot() };
    this.env.publish(created, this.#scope());
  }

  /**
   * `channel`, one of the call's parties, enters; once two are in, each one's BRIDGEPEER names the
   * other (bridge_reconfigured).
   */
  enter(channel: Channel): void {
    if (this.#destroyed || this.has(channel) || !this.#call?.parties().includes(channel)) return;
    channel.bridgeId = this.id;
    this.#publishMembership('ChannelEnteredBridge', channel);
    clearTransferVariables(channel);
    this.#setPeerVariables();
    this.#indicateConnectedLines();
  }

  /**
   * `leaving` goes and `joining` takes its place (a transfer, an INVITE with Replaces): the one
   * leaving loses its BRIDGEPEER, the new pair gets theirs. The call lists both while this runs;
   * the bridge shows whichever of them is in it at each step.
   */
  swap(leaving: Channel, joining: Channel): void {
    if (this.#destroyed || !this.has(leaving) || !this.#call?.parties().includes(joining)) return;
    clearPeerVariables(leaving);
    // The one swapped out leaves before the other enters (captured: an attended transfer's second leg).
    this.#remove(leaving);
    joining.bridgeId = this.id;
    this.#publishMembership('ChannelEnteredBridge', joining);
    clearTransferVariables(joining);
    this.#setPeerVariables();
    // The new pair learn whom they talk to: the one who stayed first (captured after an attended transfer).
    const stays = this.members().find((member) => member !== joining);
    if (stays) {
      showCallerAsConnected(stays, joining);
      showCallerAsConnected(joining, stays);
    }
    this.#indicateConnectedLines();
  }

  /**
   * `channel` leaves a bridge that stays for now (an attended transfer's transferee, on its way to
   * the target's bridge): ChannelLeftBridge, its BRIDGEPEER left for its next bridge to overwrite.
   */
  release(channel: Channel): void {
    if (this.#destroyed) return;
    this.#remove(channel);
  }

  /**
   * The call is over (a party hung up, a transfer took it apart): every party is told to leave,
   * `first` (the one that caused it) first, as a basic bridge dissolves when one party hangs up.
   * Each loses its BRIDGEPEER, then each leaves, then the bridge is destroyed.
   */
  dissolve(first?: Channel): void {
    if (this.#destroyed) return;
    const members = this.members();
    const order = first && members.includes(first) ? [first, ...members.filter((member) => member !== first)] : members;
    for (const member of order) clearPeerVariables(member);
    for (const member of order) this.#remove(member);
    this.#destroyed = true;
    const destroyed: CoreEventOf<'BridgeDestroyed'> = { type: 'BridgeDestroyed', timestamp: formatAriDate(), bridge: this.snapshot() };
    this.env.publish(destroyed, this.#scope());
    this.env.destroyed(this);
  }

  #remove(channel: Channel): void {
    if (channel.bridgeId !== this.id) return;
    channel.bridgeId = undefined;
    this.#publishMembership('ChannelLeftBridge', channel);
  }

  /**
   * Two parties: each one's technology is told whom it talks to (bridge_reconfigured's connected-line
   * update; a SIP phone gets a re-INVITE or UPDATE), the first entered first. The connected lines
   * themselves were set by Dial() or the swap; a party told the same before is not told again.
   */
  #indicateConnectedLines(): void {
    const members = this.members();
    if (members.length !== 2) return;
    for (const member of members) member.indicateConnectedLine('bridge');
  }

  /** Two parties: the first entered is told the second's name first (set_bridge_peer_vars_2party). */
  #setPeerVariables(): void {
    const members = this.members();
    if (members.length !== 2) return;
    const [first, second] = members;
    setPeerVariables(first, second);
    setPeerVariables(second, first);
  }

  #publishMembership(type: 'ChannelEnteredBridge' | 'ChannelLeftBridge', channel: Channel): void {
    const event = { type, timestamp: formatAriDate(), bridge: this.snapshot(), channel: channel.snapshot() } satisfies CoreEventOf<typeof type>;
    this.env.publish(event, this.#scope());
  }

  /**
   * Only those watching the bridge (or everything) hear of it: an application subscribed to a
   * party alone does not, as Asterisk publishes these on the bridge's topic.
   */
  #scope(): EventScope {
    return { bridgeIds: [this.id], channelIds: [] };
  }
}
/** `channel`'s connected line becomes `peer`'s caller id, announced only when it changes. */
function showCallerAsConnected(channel: Channel, peer: Channel): void {
  if (channel.hangingUp) return;
  const { name, number } = peer.caller;
  channel.connectedPresentation = peer.callerPresentation;
  if (channel.connected.name !== name || channel.connected.number !== number) channel.setConnected({ name, number });
}

/** A basic bridge clears a finished transfer's marks on whoever joins it (bridge_basic_push). */
function clearTransferVariables(channel: Channel): void {
  unsetVariable(channel, 'BLINDTRANSFER');
  unsetVariable(channel, 'ATTENDEDTRANSFER');
}
