// What the two members of a bridge leg tell each other so that the application hears a channel in
// a bridge of another member as one server would tell it (docs/cluster.md, "A bridge across
// members"):
//
// - The bridge's member describes the bridge to the channel's member each time the bridge's events
//   show it changed (a member entering or leaving, the video source), with the applications that
//   hear of that bridge there. When the channel leaves by its own doing (it hangs up, continues to
//   the dialplan, joins another bridge), its own member raises the ChannelLeftBridge at that
//   moment from that copy, among the channel's other events: so it comes before the StasisEnd, and
//   before a ChannelEnteredBridge of the next bridge, in the application's order, wherever the
//   application's home is. The bridge's member then takes the stand-in out without a second one.
// - The channel's member sends the channel's snapshot each time one of its events shows it
//   changed (state, caller id, connected line, dialplan, variables), so the bridge's events show
//   the channel as it is, not as it was when it joined.
//
// Both ride on the core's event observers (every event passes them once): a map lookup per event,
// and a message only when a leg's channel or bridge really changed.
import type { Core } from '../control/core.ts';
import type { Channel } from '../core/channels/channel.ts';
import type { CoreEventOf } from '../spec/events.ts';
import type { Model } from '../spec/index.ts';
import { formatAriDate } from '../util/ari-date.ts';
import type { Bridge } from '../core/bridges/bridge.ts';
import { MAX_BRIDGE_APPS, type LegBridge, type LegSnapshot, type OpenLeg } from './media-leg-wire.ts';

/** On the channel's member: the bridge the stand-in is in, as the bridge's member last described it. */
export interface BridgeCopy {
  readonly snapshot: Model<'Bridge'>;
  /** The applications hearing of that bridge on its member: they hear of the leave from here. */
  readonly apps: readonly string[];
}

/** A leg on the channel's member: its channel, the bridge's copy, what was last sent of the channel. */
interface ChannelLeg {
  readonly leg: string;
  readonly peer: string;
  readonly channelId: string;
  /** The channel's application at the open: it hears of the leave from here whatever the copy says. */
  readonly app: string | undefined;
  copy: BridgeCopy | undefined;
  sent: string;
}

/** `apps` with the channel's own application in it (once). */
function withOwnApp(apps: readonly string[], app: string | undefined): readonly string[] {
  return app === undefined || apps.includes(app) ? apps : [...apps, app];
}

/** A leg on the bridge's member: the bridge its stand-in is in, what was last described of it. */
interface BridgeLeg {
  readonly leg: string;
  readonly peer: string;
  bridgeId: string;
  described: string;
}

/** ChannelLeftBridge for a channel leaving a bridge of another member: the bridge as it is without it. */
export function leftBridgeEvent(channel: Pick<Channel, 'id' | 'snapshot'>, copy: BridgeCopy): CoreEventOf<'ChannelLeftBridge'> {
  const { video_source_id: source, ...rest } = copy.snapshot;
  const bridge: Model<'Bridge'> = { ...rest, channels: copy.snapshot.channels.filter((id) => id !== channel.id) };
  // A bridge forgets a source that leaves it (Bridge.remove).
  if (source !== undefined && source !== channel.id) bridge.video_source_id = source;
  return { type: 'ChannelLeftBridge', timestamp: formatAriDate(), bridge, channel: channel.snapshot() };
}

export class LegEvents {
  readonly #core: Core;
  readonly #send: (peer: string, message: LegBridge | LegSnapshot) => void;
  readonly #channelLegs = new Map<string, ChannelLeg>();
  /** Channel id → its leg here (a channel is in one leg at a time). */
  readonly #byChannel = new Map<string, ChannelLeg>();
  readonly #bridgeLegs = new Map<string, BridgeLeg>();
  /** Bridge id → the legs whose stand-in is in it. */
  readonly #byBridge = new Map<string, Set<BridgeLeg>>();
  #unobserve: (() => void) | undefined;

  constructor(core: Core, send: (peer: string, message: LegBridge | LegSnapshot) => void) {
    this.#core = core;
    this.#send = send;
  }

  start(): void {
    this.#unobserve ??= this.#core.applications.observe((event) => {
      if ('bridge' in event && event.bridge !== undefined && this.#byBridge.size > 0) this.#bridgeChanged(event.bridge);
      if ('channel' in event && event.channel !== undefined && this.#byChannel.size > 0) this.#channelChanged(event.channel);
    });
  }

  stop(): void {
    this.#unobserve?.();
    this.#unobserve = undefined;
  }

  // ---- the channel's member ------------------------------------------------------------------

  /**
   * A leg is open here for `channel`; `snapshot` is what the bridge's member was given with the
   * open, `described` the bridge as the open described it (the channel's own application added).
   */
  channelLegOpened(leg: string, peer: string, channel: Channel, snapshot: Model<'Channel'>, described: OpenLeg['described']): void {
    const channelId = channel.id;
    const app = channel.stasis?.app;
    const copy = described && { snapshot: described.bridge as Model<'Bridge'>, apps: withOwnApp(described.apps, app) };
    const entry: ChannelLeg = { leg, peer, channelId, app, copy, sent: JSON.stringify(snapshot) };
    this.#channelLegs.set(leg, entry);
    this.#byChannel.set(channelId, entry);
  }

  channelLegClosed(leg: string): void {
    const entry = this.#channelLegs.get(leg);
    if (!entry) return;
    this.#channelLegs.delete(leg);
    if (this.#byChannel.get(entry.channelId) === entry) this.#byChannel.delete(entry.channelId);
  }

  /** The bridge's member described the stand-in's bridge (checked by the wire decoder). */
  described(message: LegBridge): void {
    const entry = this.#channelLegs.get(message.leg);
    // A description made before the stand-in was in the bridge there (its application not yet
    // subscribed to it) must not drop the channel's own application: the leave announced here
    // reaches it anyway (through its channel), and the bridge's member must count it as told, or it
    // raises a second ChannelLeftBridge to it (announceMissed).
    if (entry) entry.copy = { snapshot: message.bridge as Model<'Bridge'>, apps: withOwnApp(message.apps, entry.app) };
  }

  /**
   * Raises the ChannelLeftBridge of a channel leaving a bridge of another member, here, now, and
   * returns the applications it went to; undefined when no description of the bridge has arrived
   * yet (the bridge's member raises it then).
   */
  announceLeft(leg: string, channel: Channel): readonly string[] | undefined {
    const copy = this.#channelLegs.get(leg)?.copy;
    if (!copy) return undefined;
    const event = leftBridgeEvent(channel, copy);
    this.#core.applications.publish(event, { channelIds: [channel.id], bridgeIds: [event.bridge.id], applications: copy.apps });
    return copy.apps;
  }

  #channelChanged(snapshot: Model<'Channel'>): void {
    const entry = this.#byChannel.get(snapshot.id);
    if (!entry) return;
    const text = JSON.stringify(snapshot);
    if (text === entry.sent) return;
    entry.sent = text;
    this.#send(entry.peer, { op: 'snapshot', leg: entry.leg, snapshot: snapshot as Record<string, unknown> });
  }

  // ---- the bridge's member -------------------------------------------------------------------

  /** The first description, sent with the open: `bridge` as it will be once `channelId` is in it. */
  describeJoin(bridge: Bridge, channelId: string): NonNullable<OpenLeg['described']> {
    const snapshot = bridge.eventSnapshot();
    return { bridge: { ...snapshot, channels: [...snapshot.channels, channelId] }, apps: this.#listeners(bridge.id) };
  }

  /** The stand-in of `leg` is (about to be) in `bridgeId`: its events are described to the channel's member. */
  bridgeLegIn(leg: string, peer: string, bridgeId: string): void {
    let entry = this.#bridgeLegs.get(leg);
    if (entry) this.#byBridge.get(entry.bridgeId)?.delete(entry);
    else this.#bridgeLegs.set(leg, (entry = { leg, peer, bridgeId, described: '' }));
    entry.bridgeId = bridgeId;
    let legs = this.#byBridge.get(bridgeId);
    if (!legs) this.#byBridge.set(bridgeId, (legs = new Set()));
    legs.add(entry);
  }

  bridgeLegClosed(leg: string): void {
    const entry = this.#bridgeLegs.get(leg);
    if (!entry) return;
    this.#bridgeLegs.delete(leg);
    const legs = this.#byBridge.get(entry.bridgeId);
    legs?.delete(entry);
    if (legs?.size === 0) this.#byBridge.delete(entry.bridgeId);
  }

  #bridgeChanged(snapshot: Model<'Bridge'>): void {
    const legs = this.#byBridge.get(snapshot.id);
    if (!legs) return;
    const apps = this.#listeners(snapshot.id);
    const text = JSON.stringify([snapshot, apps]);
    for (const entry of legs) {
      if (entry.described === text) continue;
      entry.described = text;
      this.#send(entry.peer, { op: 'bridge', leg: entry.leg, bridge: snapshot as Record<string, unknown>, apps });
    }
  }

  /**
   * The channel's member announced its leave to `announcedTo` from its copy of the bridge; a copy
   * sent before an application began to hear of the bridge (a member joining at the same moment,
   * its description still on the way) missed that application: it hears of the leave from here.
   */
  announceMissed(bridge: Bridge, channel: Pick<Channel, 'id' | 'snapshot'>, announcedTo: readonly string[]): void {
    const missed = this.#listeners(bridge.id).filter((app) => !announcedTo.includes(app));
    if (missed.length === 0) return;
    const event = leftBridgeEvent(channel, { snapshot: bridge.eventSnapshot(), apps: missed });
    // Only to those: the others (the channel's own application above all, subscribed here to the
    // bridge through the stand-in) had it from the channel's member already.
    this.#core.applications.publish(event, { only: missed });
  }

  /** The applications that hear a bridge's events on this member (its subscribers, its channels' applications). */
  #listeners(bridgeId: string): string[] {
    const scope = { bridgeIds: [bridgeId] };
    return this.#core.applications
      .list()
      .filter((app) => app.wants(scope))
      .map((app) => app.name)
      .slice(0, MAX_BRIDGE_APPS);
  }
}
