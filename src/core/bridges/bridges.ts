// The table of bridges. Each bridge mixes on the media clock; a channel's controlling application
// is subscribed to the bridge while the channel is a member.
import type { Applications } from '../applications.ts';
import type { Channel } from '../channels/channel.ts';
import { ConflictError, InvalidError, NotFoundError, UnavailableError } from '../errors.ts';
import type { MediaEngine } from '../media-engine.ts';
import { Bridge, type BridgeAudioSource, type BridgeType, type MemberOptions, type VideoMode } from './bridge.ts';
import { BasicBridge } from './basic-bridge.ts';
import { randomUUID } from 'node:crypto';
import { formatAriDate } from '../../util/ari-date.ts';
import type { CoreEventOf } from '../../spec/events.ts';
import type { EndableCollection } from '../../util/lifecycle.ts';

/** Type tokens a bridge may be created with. */
export const BRIDGE_TYPE_TOKENS = ['mixing', 'holding', 'dtmf_events', 'proxy_media', 'video_sfu', 'video_single', 'sdp_label'] as const;

export interface CreateBridgeOptions {
  readonly id?: string;
  readonly name?: string;
  /** The requested type tokens; default mixing. */
  readonly types?: readonly string[];
  readonly mute?: boolean;
  readonly absorbDtmf?: boolean;
  /** A bridge a core module makes (a parking lot's): what ARI shows as its class and creator. */
  readonly maker?: { readonly bridgeClass: string; readonly creator: string };
}

/** Resolves a list of type tokens into a base type and video mode; throws InvalidError for impossible sets. */
export function resolveBridgeType(tokens: readonly string[]): { type: BridgeType; videoMode: VideoMode; flags: string[] } {
  const set = new Set(tokens.length === 0 ? ['mixing'] : tokens);
  for (const token of set) {
    if (!(BRIDGE_TYPE_TOKENS as readonly string[]).includes(token)) throw new InvalidError(`Unknown bridge type: ${token}`);
  }
  const mixing = set.has('mixing') || set.has('video_sfu') || set.has('video_single');
  const holding = set.has('holding');
  if (mixing && holding) throw new InvalidError('A bridge cannot be both mixing and holding');
  if (!mixing && !holding) throw new InvalidError('A bridge type needs mixing or holding (or a video mode, which implies mixing)');
  if (set.has('video_sfu') && set.has('video_single')) throw new InvalidError('video_sfu and video_single cannot be combined');
  const videoMode: VideoMode = holding ? 'none' : set.has('video_sfu') ? 'sfu' : set.has('video_single') ? 'single' : 'talker';
  const flags = [...set].filter((token) => token !== 'mixing' && token !== 'holding');
  return { type: holding ? 'holding' : 'mixing', videoMode, flags };
}

/** A bridge ARI may list and show: one of the table's, or a basic bridge Dial() made. */
export type ListedBridge = Bridge | BasicBridge;

/** Asterisk's answer to a bridge operation on a bridge that exists but is no application's. */
export const NOT_IN_STASIS = 'Bridge not in Stasis application';

/** Default of `max_bridges`. */
export const DEFAULT_MAX_BRIDGES = 10_000;

export class Bridges implements EndableCollection {
  private readonly byId = new Map<string, Bridge>();
  /** How many of a bridge's members each application controls (for the bridge subscription). */
  private readonly appMembers = new Map<string, Map<string, number>>();
  /** The application each member was counted for (a channel may move to another app while bridged). */
  private readonly countedApp = new Map<string, string>();
  /** Channels held by a bridge outside the table (holdUnlisted). */
  private readonly unlisted = new Map<Channel, Bridge>();
  /** Basic bridges (Dial()'s calls): shown to ARI, operated by nobody there (basic-bridge.ts). */
  private readonly basic = new Map<string, BasicBridge>();

  constructor(
    private readonly applications: Applications,
    private readonly media: MediaEngine,
    /** Idle audio for holding bridges (music on hold), when available. */
    private readonly idleSource: () => BridgeAudioSource | undefined = () => undefined,
    /** A listener of a bridge's notifications failed (the bridge went on). */
    private readonly reportError?: (error: unknown, bridge: Bridge, during: string) => void,
  ) {}

  /** Most bridges at once (`max_bridges`): each one ticks on the media clock. */
  maxBridges = DEFAULT_MAX_BRIDGES;

  create(options: CreateBridgeOptions): Bridge {
    const id = options.id || randomUUID();
    if (this.byId.has(id) || this.basic.has(id)) throw new ConflictError(`Bridge with id ${id} already exists`);
    if (this.byId.size >= this.maxBridges) throw new UnavailableError(`Too many bridges: at most ${this.maxBridges} (max_bridges)`);
    const { type, videoMode, flags } = resolveBridgeType(options.types ?? []);
    const tick = (): void => bridge.tick();
    const bridge: Bridge = new Bridge(
      {
        publish: (event, scope) => this.applications.publish(event, scope),
        idleSource: this.idleSource,
        reportError: this.reportError,
        memberJoined: (joined, channel) => this.countApp(joined, channel, +1),
        memberLeft: (left, channel) => this.countApp(left, channel, -1),
        destroyed: (gone) => {
          this.media.offTick(tick);
          this.byId.delete(gone.id);
          this.appMembers.delete(gone.id);
          this.applications.forgetObject('bridge', gone.id);
        },
      },
      { id, name: options.name ?? '', type, videoMode, flags, defaultMute: options.mute, defaultAbsorbDtmf: options.absorbDtmf, ...(options.maker ? { maker: options.maker } : {}) },
    );
    this.byId.set(id, bridge);
    this.media.onTick(tick);
    // The table owns the creation event: the bridge is registered and ticking by now, which a
    // listener of BridgeCreated may rely on.
    const created: CoreEventOf<'BridgeCreated'> = { type: 'BridgeCreated', timestamp: formatAriDate(), bridge: bridge.eventSnapshot() };
    this.applications.publish(created, { bridgeIds: [id], channelIds: [] });
    return bridge;
  }

  get(id: string): Bridge | undefined {
    return this.byId.get(id);
  }

  /** A bridge ARI may operate on; a basic bridge is a conflict (409), as in Asterisk. */
  require(id: string): Bridge {
    const bridge = this.byId.get(id);
    if (!bridge) throw this.basic.has(id) ? new ConflictError(NOT_IN_STASIS) : new NotFoundError('Bridge not found');
    return bridge;
  }

  list(): Bridge[] {
    return [...this.byId.values()];
  }

  /** Every bridge ARI shows (GET /bridges): the table's, then the basic ones. */
  listShown(): ListedBridge[] {
    return [...this.byId.values(), ...this.basic.values()];
  }

  /** A bridge ARI shows (GET /bridges/{id}, subscriptions): the table's or a basic one. */
  shown(id: string): ListedBridge | undefined {
    return this.byId.get(id) ?? this.basic.get(id);
  }

  /**
   * A basic bridge for a two-party call (Dial()): announced at once (BridgeCreated), forgotten as
   * it dissolves. It does not count against `max_bridges`, which bounds the bridges that mix.
   */
  createBasic(): BasicBridge {
    const bridge = new BasicBridge({
      publish: (event, scope) => this.applications.publish(event, scope),
      destroyed: (gone) => {
        this.basic.delete(gone.id);
        this.applications.forgetObject('bridge', gone.id);
      },
    });
    this.basic.set(bridge.id, bridge);
    bridge.announceCreation();
    return bridge;
  }

  get size(): number {
    return this.byId.size;
  }

  /** Adds a channel, taking it out of any other bridge first (one of the table's, or an unlisted one). */
  addChannel(bridge: Bridge, channel: Channel, options: MemberOptions): void {
    if (channel.bridgeId && channel.bridgeId !== bridge.id) (this.byId.get(channel.bridgeId) ?? this.unlisted.get(channel))?.remove(channel);
    bridge.add(channel, options);
  }

  /**
   * A bridge outside the table holds the channel (a cluster leg's hidden bridge): a join takes the
   * channel out of it first, as out of any bridge, so its leave comes before the join. Returns the
   * release, for when that bridge lets the channel go.
   */
  holdUnlisted(channel: Channel, bridge: Bridge): () => void {
    this.unlisted.set(channel, bridge);
    return () => {
      if (this.unlisted.get(channel) === bridge) this.unlisted.delete(channel);
    };
  }

  endAll(): void {
    for (const bridge of this.list()) bridge.end();
  }

  private countApp(bridge: Bridge, channel: Channel, delta: number): void {
    const key = `${bridge.id}\u0000${channel.id}`;
    const app = delta > 0 ? channel.stasis?.app : this.countedApp.get(key);
    if (delta > 0 && app) this.countedApp.set(key, app);
    else this.countedApp.delete(key);
    if (!app) return;
    let counts = this.appMembers.get(bridge.id);
    if (!counts) this.appMembers.set(bridge.id, (counts = new Map()));
    const count = (counts.get(app) ?? 0) + delta;
    if (delta > 0 && count === 1) this.applications.subscribeInternal(app, 'bridge', bridge.id);
    if (count <= 0) {
      counts.delete(app);
      this.applications.get(app)?.removeSubscription('bridge', bridge.id);
    } else counts.set(app, count);
  }
}
