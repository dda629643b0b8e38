// A bridge whose channels live on two cluster members (docs/cluster.md, "A bridge across
// members"): the bridge's owner decides; the channel's owner puts the channel into a hidden
// two-party bridge with a leg end whose audio crosses to the bridge's owner over plain RTP, and
// the bridge's owner puts the other end, standing in for the channel (its id, its snapshot),
// into the bridge. Nothing of the leg is listed or announced: the application sees the channel
// enter and leave the bridge, as on one server. Whatever ends the leg on one side (removeChannel,
// the channel hanging up or leaving Stasis or joining another bridge, the bridge destroyed, this
// member stopping) ends it on the other with a `close`; a member declared dead has its legs
// ended here without a word.
import { randomUUID } from 'node:crypto';
import type dgram from 'node:dgram';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../config/config.ts';
import { addChannelsToBridge } from '../control/bridge-control.ts';
import type { Core } from '../control/core.ts';
import { Bridge, type MemberOptions } from '../core/bridges/bridge.ts';
import type { Channel } from '../core/channels/channel.ts';
import { ConflictError } from '../core/errors.ts';
import type { Model } from '../spec/index.ts';
import { closeQuietly, type RtpPortRange } from '../media/rtp/port-range.ts';
import { LegEvents } from './leg-events.ts';
import { connectSocket, LEG_TECHNOLOGY, LegEnd, legMediaAddress, legPortRange } from './media-leg.ts';
import { decodeLegMessage, decodeLegReply, encodeLeg, readSnapshot, type AddToBridge, type CloseLeg, type LegBridge, type LegConnected, type LegDigit, type LegHold, type LegMessage, type LegReply, type LegSnapshot, type OpenLeg, type RemoveFromBridge } from './media-leg-wire.ts';

/** The subject a member takes leg messages on. */
export function legSubject(prefix: string, node: string): string {
  return `${prefix}.node.${node}.legs`;
}

export interface BridgeLegsOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly node: string;
  readonly core: Core;
  readonly config: PatchbayConfig;
  /** Whether a node is a live member other than this one (an open from anyone else is refused). */
  readonly isLiveMember: (node: string) => boolean;
  readonly requestTimeoutMs: number;
  readonly log: Logger;
}

/** On the channel's member: the channel, its hidden bridge and the leg end beside it. */
interface ChannelSide {
  readonly kind: 'channel';
  readonly leg: string;
  readonly peer: string;
  readonly channel: Channel;
  readonly hidden: Bridge;
  readonly end: LegEnd;
  readonly tick: () => void;
  readonly onHangup: () => void;
  /** Lets the core forget that the hidden bridge holds the channel (Bridges.holdUnlisted). */
  release: () => void;
  readonly hearing: Hearing;
  closed: boolean;
}

/** On the bridge's member: the end standing in for the channel, and the bridge it is in. */
interface BridgeSide {
  readonly kind: 'bridge';
  readonly leg: string;
  readonly peer: string;
  readonly channelId: string;
  readonly end: LegEnd;
  bridge: Bridge | undefined;
  readonly onBridgeDestroyed: () => void;
  readonly hearing: Hearing;
  closed: boolean;
}

const OK: LegReply = { status: 200 };

/**
 * Both ends send a packet every 20 ms (a bridge writes silence when nobody speaks): an end that has
 * heard nothing this long ends its leg. The backstop for a close that never came (a NATS cut, the
 * other member gone before this one declares it dead).
 */
export const LEG_SILENCE_SECONDS = 10;

/** Packets received by an end at the last sweep, and the sweeps since that number last moved. */
interface Hearing {
  packets: number;
  silentSweeps: number;
}

export class ClusterBridgeLegs {
  /** Legs opened and closed here since start (status, bench). */
  opened = 0;
  closedCount = 0;
  readonly #options: BridgeLegsOptions;
  readonly #address: string;
  readonly #range: RtpPortRange;
  readonly #max: number;
  readonly #log: Logger;
  readonly #channelSides = new Map<string, ChannelSide>();
  readonly #bridgeSides = new Map<string, BridgeSide>();
  /** The bridge-side end of each channel of another member that is in a bridge here. */
  readonly #byChannel = new Map<string, BridgeSide>();
  /** Legs being opened (their ports are taken): counted against the cap. */
  #opening = 0;
  #subscription: Subscription | undefined;
  #sweep: NodeJS.Timeout | undefined;
  /** The bridge's description and the channel's snapshot, kept up to date across each leg (leg-events.ts). */
  readonly #events: LegEvents;

  constructor(options: BridgeLegsOptions) {
    this.#options = options;
    this.#address = legMediaAddress(options.config);
    this.#range = legPortRange(options.config);
    this.#max = options.config.cluster.maxMediaLegs;
    this.#log = options.log;
    this.#events = new LegEvents(options.core, (peer, message) => this.#tell(peer, message));
  }

  /** The end standing in here for another member's channel in a bridge here (video source, video-source.ts). */
  standIn(channelId: string): Channel | undefined {
    const side = this.#byChannel.get(channelId);
    return side && !side.closed ? side.end.channel : undefined;
  }

  /** Legs held here (either side), each one RTP port. */
  get size(): number {
    return this.#channelSides.size + this.#bridgeSides.size;
  }

  start(): void {
    const { nc, prefix, node } = this.#options;
    this.#subscription = nc.subscribe(legSubject(prefix, node), { callback: (error, msg) => void (error ? undefined : this.#onMessage(msg)) });
    this.#sweep = setInterval(() => this.#endSilentLegs(), 1000);
    this.#sweep.unref();
    this.#events.start();
  }

  /** Ends the legs whose other end has sent nothing for LEG_SILENCE_SECONDS. */
  #endSilentLegs(): void {
    const silent = (end: LegEnd, hearing: Hearing): boolean => {
      const packets = end.session.statistics().rxcount;
      hearing.silentSweeps = packets === hearing.packets ? hearing.silentSweeps + 1 : 0;
      hearing.packets = packets;
      return hearing.silentSweeps >= LEG_SILENCE_SECONDS;
    };
    for (const side of [...this.#channelSides.values()]) {
      if (!silent(side.end, side.hearing)) continue;
      this.#log.warn({ leg: side.leg, peer: side.peer, channel: side.channel.id }, 'cluster media leg: nothing heard from the other member; the leg ends');
      this.#closeChannelSide(side, true);
    }
    for (const side of [...this.#bridgeSides.values()]) {
      if (!silent(side.end, side.hearing)) continue;
      this.#log.warn({ leg: side.leg, peer: side.peer, channel: side.channelId }, 'cluster media leg: nothing heard from the other member; the leg ends');
      this.#closeBridgeSide(side, true);
    }
  }

  /** Every leg ends (the peers are told while NATS is still there). */
  stop(): void {
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
    clearInterval(this.#sweep);
    for (const side of [...this.#channelSides.values()]) this.#closeChannelSide(side, true);
    for (const side of [...this.#bridgeSides.values()]) this.#closeBridgeSide(side, true);
    this.#events.stop();
  }

  /**
   * A member is gone: its legs end here (no one to tell); the channels it stood in for leave their
   * bridges, and a channel here in one of its bridges hears that it left it (from the last copy).
   */
  memberDown(node: string): number {
    const channelSides = [...this.#channelSides.values()].filter((side) => side.peer === node);
    const bridgeSides = [...this.#bridgeSides.values()].filter((side) => side.peer === node);
    for (const side of channelSides) {
      if (!side.closed && !side.channel.hangingUp) this.#events.announceLeft(side.leg, side.channel);
      this.#closeChannelSide(side, false);
    }
    for (const side of bridgeSides) this.#closeBridgeSide(side, false);
    return channelSides.length + bridgeSides.length;
  }

  async #onMessage(msg: Msg): Promise<void> {
    const message = decodeLegMessage(msg.data);
    let reply: LegReply;
    if (typeof message === 'string') reply = { status: 400, message: `Bad cluster leg message: ${message}` };
    else {
      try {
        reply = await this.handle(message);
      } catch (error) {
        this.#log.warn({ err: error }, 'cluster media leg: a message failed');
        reply = { status: 500, message: 'The cluster member failed to handle a bridge leg message' };
      }
    }
    if (msg.reply) msg.respond(encodeLeg(reply));
  }

  /** Handles one message (also called directly when the bridge's owner is this member). */
  handle(message: LegMessage): Promise<LegReply> | LegReply {
    switch (message.op) {
      case 'open':
        return this.#open(message);
      case 'close':
        return this.#close(message);
      case 'digit':
        return this.#digit(message);
      case 'hold':
      case 'unhold':
        return this.#hold(message);
      case 'connected':
        return this.#connected(message);
      case 'bridge':
        this.#events.described(message);
        return OK;
      case 'snapshot':
        return this.#snapshot(message);
      case 'add':
        return this.add(message);
      case 'remove':
        return this.remove(message);
    }
  }

  // ---- the bridge's member -------------------------------------------------------------------

  /** Adds channels, some of other members, to a bridge held here: ARI's statuses and messages. */
  async add(request: AddToBridge): Promise<LegReply> {
    const { core, node } = this.#options;
    const bridge = core.bridges.get(request.bridge);
    if (!bridge) return { status: 404, message: 'Bridge not found' };
    const local: Channel[] = [];
    const remote: Array<{ id: string; node: string }> = [];
    for (const entry of request.channels) {
      if (entry.node !== node && !core.channels.get(entry.id)) {
        remote.push(entry);
        continue;
      }
      const channel = core.channels.get(entry.id);
      if (!channel) return { status: 400, message: 'Channel not found' };
      if (!channel.stasis) return { status: 422, message: 'Channel not in Stasis application' };
      local.push(channel);
    }
    if (local.some((channel) => core.recordings.isRecordingChannel(channel.id))) return { status: 409, message: 'Channel is being recorded' };
    if (remote.length > 0 && this.#max === 0) {
      return { status: 501, message: `Channel ${remote[0].id} lives on cluster member ${remote[0].node} and bridge ${bridge.id} on ${node}: bridges across cluster members are turned off there (cluster.max_media_legs 0)` };
    }
    const options: MemberOptions = { roles: request.roles, absorbDtmf: request.absorbDtmf, mute: request.mute, inhibitConnectedLineUpdates: request.inhibitConnectedLineUpdates };
    const ends: BridgeSide[] = [];
    const opened: BridgeSide[] = [];
    for (const entry of remote) {
      const existing = this.#byChannel.get(entry.id);
      if (existing && existing.peer === entry.node) {
        ends.push(existing);
        continue;
      }
      const result = await this.#openToward(entry.id, entry.node, bridge.id);
      if ('status' in result) {
        for (const side of opened) this.#closeBridgeSide(side, true);
        return result;
      }
      ends.push(result);
      opened.push(result);
    }
    if (bridge.destroyed) {
      for (const side of opened) this.#closeBridgeSide(side, true);
      return { status: 404, message: 'Bridge not found' };
    }
    try {
      addChannelsToBridge(core, bridge, local, options);
    } catch (error) {
      for (const side of opened) this.#closeBridgeSide(side, true);
      if (error instanceof ConflictError) return { status: 409, message: error.message };
      throw error;
    }
    for (const side of ends) {
      if (side.closed) continue;
      // Watched first: the ChannelEnteredBridge is the first description the channel's member gets.
      this.#watch(side, bridge);
      core.bridges.addChannel(bridge, side.end.channel, options);
    }
    return { status: 204 };
  }

  /**
   * Takes channels out of a bridge held here when one of them is another member's; status 0 when
   * every one is this member's (the request goes its ordinary way). Another member's channel that
   * is not in the bridge answers 422, as a single server's own channel would. The answer waits for
   * the channels' members to have let them go, so a request made after it finds them out.
   */
  async remove(request: RemoveFromBridge): Promise<LegReply> {
    const { core, node } = this.#options;
    const bridge = core.bridges.get(request.bridge);
    if (!bridge || request.channels.every((entry) => entry.node === node && !this.#byChannel.has(entry.id))) return { status: 0 };
    const local: Channel[] = [];
    const standing: BridgeSide[] = [];
    for (const { id, node: holder } of request.channels) {
      const side = this.#byChannel.get(id);
      if (side || (holder !== node && !core.channels.get(id))) {
        if (side?.bridge !== bridge) return { status: 422, message: 'Channel not in this bridge' };
        standing.push(side);
        continue;
      }
      const channel = core.channels.get(id);
      if (!channel) return { status: 400, message: 'Channel not found' };
      if (!channel.stasis) return { status: 422, message: 'Channel not in Stasis application' };
      if (!bridge.has(channel)) return { status: 422, message: 'Channel not in this bridge' };
      local.push(channel);
    }
    for (const channel of local) bridge.remove(channel);
    for (const side of standing) this.#closeBridgeSide(side, false);
    // Asked, not told: a close the other member has not taken yet would leave the channel in its
    // bridge there a moment after the 204 (GET /channels/{id} still naming the bridge).
    await Promise.all(standing.map((side) => this.#ask(side.peer, { op: 'close', leg: side.leg })));
    return { status: 204 };
  }

  /** Opens a leg to the channel's member; its end here is not in a bridge yet. */
  async #openToward(channelId: string, peer: string, bridgeId: string): Promise<BridgeSide | LegReply> {
    const { core, node, log } = this.#options;
    if (this.size + this.#opening >= this.#max) return { status: 503, message: `Too many bridge legs across cluster members on ${node} (cluster.max_media_legs ${this.#max})` };
    this.#opening++;
    let socket: dgram.Socket | undefined;
    try {
      socket = await this.#range.bind(this.#address).catch(() => undefined);
      if (!socket) return { status: 503, message: 'No free RTP port for a bridge leg across cluster members' };
      const leg = randomUUID();
      const bridge = core.bridges.get(bridgeId);
      const described = bridge && this.#events.describeJoin(bridge, channelId);
      const reply = await this.#ask(peer, { op: 'open', leg, channel: channelId, peer: node, address: this.#address, port: socket.address().port, bridge: bridgeId, ...(described ? { described } : {}) });
      if (reply.status !== 200) return reply;
      const snapshot = readSnapshot(reply.snapshot, channelId);
      if (reply.address === undefined || reply.port === undefined || snapshot === undefined || snapshot === 'bad') {
        this.#tell(peer, { op: 'close', leg });
        return { status: 502, message: 'A cluster member gave a malformed answer about a bridge leg' };
      }
      const reachable = await connectSocket(socket, reply.address, reply.port).then(() => true, () => false);
      if (!reachable) {
        this.#tell(peer, { op: 'close', leg });
        return { status: 502, message: `Cluster member ${peer} answered an RTP address this member cannot send to (${reply.address}:${reply.port})` };
      }
      const end = new LegEnd({ core, log, id: channelId, name: `${LEG_TECHNOLOGY}/${peer}/${channelId}`, socket, represented: snapshot as Model<'Channel'> });
      socket = undefined;
      // The bridge subscribes the channel's application to itself while the channel is in it, as
      // it would for a channel of its own: the application hears the bridge's events from here.
      if (reply.app !== undefined) end.channel.stasis = { app: reply.app, args: [] };
      const side: BridgeSide = {
        kind: 'bridge',
        leg,
        peer,
        channelId,
        end,
        bridge: undefined,
        onBridgeDestroyed: () => this.#closeBridgeSide(side, true),
        hearing: { packets: 0, silentSweeps: 0 },
        closed: false,
      };
      end.session.onDigit = (digit, durationMs) => this.#tell(peer, { op: 'digit', leg, digit, durationMs });
      end.session.onHold = (indication) => this.#tell(peer, { op: indication, leg });
      end.channel.onConnected = ({ name, number }) => this.#tell(peer, { op: 'connected', leg, name, number });
      this.#bridgeSides.set(leg, side);
      this.#byChannel.set(channelId, side);
      this.opened++;
      return side;
    } finally {
      this.#opening--;
      if (socket) closeQuietly(socket);
    }
  }

  /** The end is in `bridge` now: the bridge's destruction ends the leg. */
  #watch(side: BridgeSide, bridge: Bridge): void {
    if (side.bridge === bridge) return;
    side.bridge?.off('destroyed', side.onBridgeDestroyed);
    side.bridge = bridge;
    bridge.once('destroyed', side.onBridgeDestroyed);
    this.#events.bridgeLegIn(side.leg, side.peer, bridge.id);
  }

  /** `announced`: the channel's member raised the ChannelLeftBridge already; the stand-in goes out silently. */
  #closeBridgeSide(side: BridgeSide, tellPeer: boolean, snapshot?: Record<string, unknown>, announced = false, announcedTo?: readonly string[]): void {
    if (side.closed) return;
    side.closed = true;
    this.closedCount++;
    this.#bridgeSides.delete(side.leg);
    this.#events.bridgeLegClosed(side.leg);
    if (this.#byChannel.get(side.channelId) === side) this.#byChannel.delete(side.channelId);
    // The channel's last snapshot from its owner, so ChannelLeftBridge shows it as it is now.
    if (snapshot) side.end.channel.represented = snapshot as Model<'Channel'>;
    side.bridge?.off('destroyed', side.onBridgeDestroyed);
    if (side.bridge && !side.bridge.destroyed) {
      if (announced && announcedTo) this.#events.announceMissed(side.bridge, side.end.channel, announcedTo);
      side.bridge.remove(side.end.channel, !announced);
    }
    side.bridge = undefined;
    side.end.close();
    if (tellPeer) this.#tell(side.peer, { op: 'close', leg: side.leg });
  }

  // ---- the channel's member ------------------------------------------------------------------

  /** The bridge's owner asks for the channel: it goes into a hidden bridge with a leg end. */
  async #open(request: OpenLeg): Promise<LegReply> {
    const { core, log, node } = this.#options;
    if (request.peer === node || !this.#options.isLiveMember(request.peer)) return { status: 403, message: `${request.peer.slice(0, 64)} is not a live cluster member` };
    if (this.#channelSides.has(request.leg) || this.#bridgeSides.has(request.leg)) return { status: 409, message: 'A bridge leg with that id exists already' };
    const check = (): LegReply | Channel => {
      const channel = core.channels.get(request.channel);
      if (!channel || channel.hangingUp) return { status: 400, message: 'Channel not found' };
      if (!channel.stasis) return { status: 422, message: 'Channel not in Stasis application' };
      if (core.recordings.isRecordingChannel(channel.id)) return { status: 409, message: 'Channel is being recorded' };
      return channel;
    };
    const first = check();
    if (!('id' in first)) return first;
    const previous = [...this.#channelSides.values()].find((side) => side.channel === first);
    if (this.size + this.#opening - (previous ? 1 : 0) >= this.#max) return { status: 503, message: `Too many bridge legs across cluster members on ${node} (cluster.max_media_legs ${this.#max})` };
    this.#opening++;
    let socket: dgram.Socket | undefined;
    try {
      socket = await this.#range.bind(this.#address).catch(() => undefined);
      if (!socket) return { status: 503, message: 'No free RTP port for a bridge leg across cluster members' };
      const reachable = await connectSocket(socket, request.address, request.port).then(() => true, () => false);
      if (!reachable) return { status: 400, message: `Cannot send RTP to ${request.address}:${request.port} from ${this.#address}` };
      // Checked again: the channel may have gone or changed while the port was being bound.
      const channel = check();
      if (!('id' in channel)) return channel;
      if (this.#channelSides.has(request.leg)) return { status: 409, message: 'A bridge leg with that id exists already' };
      // Joining a bridge elsewhere leaves the one it is in: announced here, before the join.
      const stillPrevious = [...this.#channelSides.values()].find((side) => side.channel === channel);
      if (stillPrevious) this.#channelLeft(stillPrevious);
      const end = new LegEnd({ core, log, id: `${LEG_TECHNOLOGY}-${request.leg}`, name: `${LEG_TECHNOLOGY}/${request.peer}-${request.leg}`, socket });
      const port = end.localPort;
      socket = undefined;
      const hidden = new Bridge(
        {
          // Hidden: no event, no listing, no application subscription; only the two ends.
          publish: () => undefined,
          memberJoined: () => undefined,
          // The channel leaving (hangup, continue, another bridge of this member) is its leave of the real bridge.
          memberLeft: (_bridge, left) => void (left === channel ? this.#channelLeft(side) : undefined),
          destroyed: () => undefined,
          reportError: (error, _bridge, during) => log.warn({ err: error, during }, 'cluster media leg: the hidden bridge failed'),
        },
        // The real bridge's id (ids are unique in the cluster): the channel's bridgeId here names the
        // bridge it is in, as on one server; a move to another bridge of this member changes it.
        // No BRIDGEPEER from it: its other member is the leg end, not a peer (the real bridge is elsewhere).
        { id: request.bridge ?? `${LEG_TECHNOLOGY}-${request.leg}`, name: '', type: 'mixing', videoMode: 'none', peerVariables: false },
      );
      const side: ChannelSide = {
        kind: 'channel',
        leg: request.leg,
        peer: request.peer,
        channel,
        hidden,
        end,
        tick: () => this.#tickChannelSide(side),
        onHangup: () => this.#closeChannelSide(side, true),
        release: () => undefined,
        hearing: { packets: 0, silentSweeps: 0 },
        closed: false,
      };
      end.session.onDigit = (digit, durationMs) => this.#tell(request.peer, { op: 'digit', leg: request.leg, digit, durationMs });
      end.session.onHold = (indication) => this.#tell(request.peer, { op: indication, leg: request.leg });
      // Out of a bridge of this member first (its ChannelLeftBridge is raised here, as on one server).
      core.bridges.addChannel(hidden, channel, {});
      // A join of another bridge of this member takes the channel out of the hidden one first.
      side.release = core.bridges.holdUnlisted(channel, hidden);
      // The hidden bridge makes no connected-line update (the leg end has no caller of its own):
      // the channel's connected line comes from the real bridge, through the other end.
      hidden.add(end.channel, { inhibitConnectedLineUpdates: true });
      channel.once('hangup', side.onHangup);
      core.media.onTick(side.tick);
      this.#channelSides.set(request.leg, side);
      const snapshot = channel.snapshot();
      this.#events.channelLegOpened(request.leg, request.peer, channel, snapshot, request.described);
      this.opened++;
      return { status: 200, address: this.#address, port, snapshot: snapshot as Record<string, unknown>, app: channel.stasis!.app };
    } finally {
      this.#opening--;
      if (socket) closeQuietly(socket);
    }
  }

  /** Every tick: the hidden bridge mixes; a channel no longer in it (moved by other means) has left. */
  #tickChannelSide(side: ChannelSide): void {
    if (side.end.channel.hangingUp) this.#closeChannelSide(side, true);
    else if (side.channel.bridgeId !== side.hidden.id && !side.hidden.remove(side.channel)) this.#closeChannelSide(side, true);
    if (!side.closed) side.hidden.tick();
  }

  /**
   * The channel left the real bridge by its own doing (hung up, left Stasis, joined another
   * bridge): its ChannelLeftBridge is raised here, now, among its other events, and the bridge's
   * member takes the stand-in out without raising another.
   */
  #channelLeft(side: ChannelSide): void {
    if (side.closed) return;
    const announcedTo = this.#events.announceLeft(side.leg, side.channel);
    this.#closeChannelSide(side, true, announcedTo);
  }

  /** `announcedTo`: the applications this member raised the channel's ChannelLeftBridge to. */
  #closeChannelSide(side: ChannelSide, tellPeer: boolean, announcedTo?: readonly string[]): void {
    if (side.closed) return;
    side.closed = true;
    this.closedCount++;
    this.#channelSides.delete(side.leg);
    this.#events.channelLegClosed(side.leg);
    this.#options.core.media.offTick(side.tick);
    side.channel.off('hangup', side.onHangup);
    side.release();
    side.hidden.destroy();
    side.end.close();
    const announced = announcedTo ? { announced: true, announcedTo } : {};
    if (tellPeer) this.#tell(side.peer, { op: 'close', leg: side.leg, snapshot: side.channel.snapshot() as Record<string, unknown>, ...announced });
  }

  /** The other side ended the leg. */
  #close(request: CloseLeg): LegReply {
    const channelSide = this.#channelSides.get(request.leg);
    if (channelSide) this.#closeChannelSide(channelSide, false);
    const bridgeSide = this.#bridgeSides.get(request.leg);
    if (bridgeSide) {
      const snapshot = readSnapshot(request.snapshot, bridgeSide.channelId);
      this.#closeBridgeSide(bridgeSide, false, snapshot === 'bad' ? undefined : snapshot, request.announced === true, request.announcedTo);
    }
    return OK;
  }

  /** The channel's snapshot changed on its member: the stand-in shows it from now on. */
  #snapshot(request: LegSnapshot): LegReply {
    const side = this.#bridgeSides.get(request.leg);
    const snapshot = side ? readSnapshot(request.snapshot, side.channelId) : undefined;
    if (side && !side.closed && snapshot !== undefined && snapshot !== 'bad') side.end.channel.represented = snapshot as Model<'Channel'>;
    return OK;
  }

  /**
   * A digit from the other end: its end here "receives" it, so the bridge it is in passes it on as
   * it passes any member's DTMF (not to a member that absorbs DTMF; the end raises no event).
   */
  #digit(request: LegDigit): LegReply {
    const side = this.#channelSides.get(request.leg) ?? this.#bridgeSides.get(request.leg);
    if (side && !side.closed) side.end.channel.receiveDigit(request.digit, request.durationMs);
    return OK;
  }

  /** The real bridge gave the channel a connected line: set on the channel, which raises ChannelConnectedLine here. */
  #connected(request: LegConnected): LegReply {
    const side = this.#channelSides.get(request.leg);
    if (side && !side.closed && !side.channel.hangingUp) side.channel.setConnected({ name: request.name, number: request.number });
    return OK;
  }

  /** A hold or unhold from the other end: its end here holds the others of its bridge, as a phone's hold would. */
  #hold(request: LegHold): LegReply {
    const side = this.#channelSides.get(request.leg) ?? this.#bridgeSides.get(request.leg);
    if (side && !side.closed) side.end.channel.remoteIndication(request.op);
    return OK;
  }

  // ---- talking to the other members ----------------------------------------------------------

  async #ask(peer: string, message: LegMessage): Promise<LegReply> {
    const { nc, prefix, requestTimeoutMs } = this.#options;
    try {
      return decodeLegReply((await nc.request(legSubject(prefix, peer), encodeLeg(message), { timeout: requestTimeoutMs })).data);
    } catch (error) {
      this.#log.warn({ err: error, peer }, 'cluster media leg: the other member did not answer');
      return { status: 504, message: `Cluster member ${peer} did not answer about a bridge leg` };
    }
  }

  /** A close or a digit the other side need not answer: published, never awaited. */
  #tell(peer: string, message: CloseLeg | LegDigit | LegHold | LegConnected | LegBridge | LegSnapshot): void {
    const { nc, prefix } = this.#options;
    try {
      nc.publish(legSubject(prefix, peer), encodeLeg(message));
    } catch (error) {
      this.#log.warn({ err: error, peer }, 'cluster media leg: could not tell the other member that a leg ended');
    }
  }
}
