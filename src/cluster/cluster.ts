// A Patchbay cluster member (docs/cluster.md): its NATS connection, membership, the resources it
// owns, forwarding and events across members. server.ts imports this file dynamically, and only
// when `cluster.nats_url` is set: a single server loads nothing of NATS.
import { randomUUID } from 'node:crypto';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../config/config.ts';
import type { Core } from '../control/core.ts';
import { AppEvents } from './app-events.ts';
import { ClusterBridgeLegs } from './bridge-legs.ts';
import { CrossMemberBridges } from './bridge-routing.ts';
import { ChannelPlaces, type ChannelPlacesAnswer } from './channel-places.ts';
import { ClusterContacts, CONTACTS_MAX_AGE_MS } from './contacts.ts';
import { SharedStateMirror } from './shared-state.ts';
import { ClusterSipFlows, type SipFlowsOptions } from './sip-flows.ts';
import { startSharedConfig, type SharedConfig } from './shared-config.ts';
import { ClusterForwarder } from './forwarder.ts';
import { CrossMemberVideoSource } from './video-source.ts';
import { DialIdentity } from './dial-identity.ts';
import { HeldCalls } from './held-calls.ts';
import { KvSeen } from './kv-seen.ts';
import { Membership, type Member } from './membership.ts';
import { Ownership, type LocalAri } from './ownership.ts';
import { applicationsNamed } from './request-apps.ts';

export interface ClusterOptions {
  readonly config: PatchbayConfig;
  readonly core: Core;
  readonly log: Logger;
  readonly ari: LocalAri;
  /** The ARI address this server listens on (announced unless `cluster.ari_url` says otherwise). */
  readonly ariUrl: string;
  /** Whether the server is draining (graceful stop): announced to the other members. */
  readonly draining: () => boolean;
}

/** How long a stop waits for the NATS connection to drain. */
const STOP_DRAIN_MS = 2000;

/** What `patchbay cluster status` and /admin/cluster show. */
export interface ClusterStatus {
  readonly cluster: string;
  readonly node: string;
  readonly nats_connected: boolean;
  readonly nats_server: string;
  readonly members: ReadonlyArray<{ node: string; asterisk_id: string; ari: string; channels: number; bridges: number; draining: boolean; self: boolean; last_seen_ms: number }>;
  readonly home_applications: readonly string[];
  readonly owned_resources: number;
  readonly forwarded_requests: number;
  readonly gathered_listings: number;
  /** Registrations: this member's written to the bucket (and withdrawn), other members' known here. */
  readonly contacts: { readonly shared: number; readonly withdrawn: number; readonly known_elsewhere: number };
  /** Global variables and astdb writes: made here and sent, made elsewhere and applied here. */
  readonly shared_state: { readonly globals_sent: number; readonly globals_applied: number; readonly astdb_sent: number; readonly astdb_applied: number; readonly device_states_sent: number; readonly device_states_applied: number; readonly config_sent: number; readonly config_applied: number; readonly writes_confirmed: number; readonly writes_unconfirmed: number };
  /** Bridges across members: the media legs held here now, and opened/closed since start. */
  readonly media_legs: { readonly held: number; readonly opened: number; readonly closed: number };
  /** Dialogs over a phone's connection held by another member: lent here to others, and run here through others (sip-flows.ts). */
  readonly relayed_dialogs: { readonly lent: number; readonly through_others: number };
}

/** The node id from the server id when none is configured: `:` is not allowed in KV keys. */
export function defaultNodeId(serverId: string): string {
  return serverId.replaceAll(':', '-');
}

export class Cluster {
  readonly node: string;
  readonly forwarder: ClusterForwarder;
  /** The registrations of every member: what server.ts hands the pjsip technology as its contact directory. */
  readonly contacts: ClusterContacts;
  private readonly nc: NatsConnection;
  private readonly membership: Membership;
  private readonly ownership: Ownership;
  private readonly events: AppEvents;
  private readonly places: ChannelPlaces;
  private readonly globals: SharedStateMirror;
  private readonly astdb: SharedStateMirror;
  /** Bridges across members: the media legs this member holds (set once started). */
  private legs: ClusterBridgeLegs | undefined;
  /** Calls to phones on another member's connection, and this member's connections lent (sip-flows.ts); set once started. */
  sipFlows: ClusterSipFlows | undefined;
  /** A dialled channel's caller identity from another member (set once started). */
  private dialIdentity: DialIdentity | undefined;
  private readonly log: Logger;
  private readonly name: string;
  private connected = true;
  /** Device states and dynamic configuration (shared-config.ts), set once started. */
  private sharedConfig: SharedConfig | undefined;
  /** Channels held here for applications away from their home (held-calls.ts), set once started. */
  private heldCalls: HeldCalls | undefined;
  /** Read-your-writes of the dynamic configuration and device states (kv-seen.ts), set once started. */
  private kvSeen: KvSeen | undefined;

  private constructor(parts: { nc: NatsConnection; node: string; name: string; membership: Membership; ownership: Ownership; forwarder: ClusterForwarder; events: AppEvents; contacts: ClusterContacts; globals: SharedStateMirror; astdb: SharedStateMirror; places: ChannelPlaces; log: Logger }) {
    this.nc = parts.nc;
    this.node = parts.node;
    this.name = parts.name;
    this.membership = parts.membership;
    this.ownership = parts.ownership;
    this.forwarder = parts.forwarder;
    this.events = parts.events;
    this.contacts = parts.contacts;
    this.globals = parts.globals;
    this.places = parts.places;
    this.astdb = parts.astdb;
    this.log = parts.log;
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    const { config, core, ari } = options;
    const settings = config.cluster;
    const node = settings.nodeId === '' ? defaultNodeId(config.serverId) : settings.nodeId;
    const log = options.log.child({ cluster: settings.name, member: node });
    const prefix = `pb.${settings.name}`;
    const nc = await connect(connectionOptions(config, node));
    // Generated channel ids carry the member's name (`<node>-<epoch>.<n>`, as Asterisk's with a
    // systemname): each member counts its own, and a forwarded id must name one channel only.
    core.channels.idPrefix = `${node}-`;
    log.info({ server: nc.getServer() }, 'cluster: connected to NATS');
    try {
      const kvm = new Kvm(nc);
      const membersKv = await kvm.create(`pb_${settings.name}_members`, { ttl: settings.failureSeconds * 1000 * 2 });
      const appsKv = await kvm.create(`pb_${settings.name}_apps`);
      const contacts = new ClusterContacts({ kv: await kvm.create(`pb_${settings.name}_contacts`, { ttl: CONTACTS_MAX_AGE_MS }), node, log });
      const globals = new SharedStateMirror({ kv: await kvm.create(`pb_${settings.name}_globals`), store: core.globalVars, what: 'global variables', log });
      const astdb = new SharedStateMirror({ kv: await kvm.create(`pb_${settings.name}_astdb`), store: core.astdb, what: 'astdb', log });
      let cluster: Cluster | undefined;
      const membership = new Membership({
        nc,
        kv: membersKv,
        prefix,
        node,
        instance: randomUUID(),
        asteriskId: config.serverId,
        ari: settings.ariUrl === '' ? options.ariUrl : settings.ariUrl,
        failureSeconds: settings.failureSeconds,
        load: () => ({ channels: core.channels.size, bridges: core.bridges.size }),
        draining: options.draining,
        log,
        onDown: (member) => cluster?.memberDown(member),
      });
      // A forwarded request naming applications (originate with app=…) finds their relays here
      // even when the apps bucket's watch has not brought them yet.
      const servingAri: LocalAri = {
        userNamed: (name) => ari.userNamed(name),
        dispatch: async (request) => {
          await events.relaysFor(applicationsNamed(request));
          return ari.dispatch(request);
        },
      };
      const ownership = new Ownership({ nc, prefix, node, core, ari: servingAri, log });
      const forwarder = new ClusterForwarder({ nc, prefix, ownership, membership, node, requestTimeoutMs: settings.requestTimeoutMs, log, placement: settings.placement, placeOnSelf: settings.placeOnSelf });
      forwarder.local = async (request) => ari.dispatch({ ...request, forwarded: true });
      // Calls held for an application away from its home, on every member (held-calls.ts).
      const heldCalls = new HeldCalls({ nc, prefix, node, core, requestTimeoutMs: settings.requestTimeoutMs, log, otherNodes: () => membership.others().map((member) => member.node) });
      const events = new AppEvents({
        nc,
        js: jetstream(nc),
        jsm: await jetstreamManager(nc),
        apps: appsKv,
        prefix,
        stream: `PB_${settings.name}_EVENTS`,
        node,
        asteriskId: config.serverId,
        core,
        log,
        liveAsteriskIds: () => new Set(membership.list().map((member) => member.asteriskId)),
        releaseHeld: (application) => heldCalls.releaseInOrder(application),
      });
      cluster = new Cluster({ nc, node, name: settings.name, membership, ownership, forwarder, events, contacts, globals, astdb, places: new ChannelPlaces({ nc, prefix, node, core, membership, requestTimeoutMs: settings.requestTimeoutMs, log }), log });
      cluster.heldCalls = heldCalls;
      heldCalls.start();
      ownership.start();
      cluster.startBridgeLegs({ nc, prefix, node, core, config, requestTimeoutMs: settings.requestTimeoutMs, log, membership });
      cluster.places.start();
      cluster.startSipFlows({ nc, prefix, node, requestTimeoutMs: settings.requestTimeoutMs, maxDialogs: settings.maxRelayedDialogs, log, isLiveMember: (other) => membership.others().some((member) => member.node === other) });
      await events.start();
      await contacts.start();
      await globals.start();
      await astdb.start();
      cluster.sharedConfig = await startSharedConfig(kvm, settings.name, core, log);
      cluster.startKvSeen(nc, prefix, membership, cluster.sharedConfig);
      membership.start();
      cluster.watchConnection();
      return cluster;
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  /** Before an event WebSocket is accepted: takes its applications over from a previous home. */
  prepareApplications(applications: readonly string[]): Promise<void> {
    return this.events.prepare(applications);
  }

  /** /health's reasons: the NATS connection is down. */
  degradations(): string[] {
    return this.connected ? [] : [`cluster: NATS connection lost (reconnecting to ${this.nc.getServer()})`];
  }

  get natsConnected(): boolean {
    return this.connected;
  }

  get memberCount(): number {
    return this.membership.list().length;
  }

  /** Each live member's load and drain as its last heartbeat gave them (/metrics). */
  memberLoads(): Array<{ node: string; channels: number; bridges: number; draining: boolean }> {
    return this.membership.list().map((member) => ({ node: member.node, channels: member.load.channels, bridges: member.load.bridges, draining: member.draining }));
  }

  /** Tells the other members this one's state now (a graceful stop began or was cancelled). */
  announce(): void {
    this.membership.announce();
  }

  status(): ClusterStatus {
    const now = performance.now();
    return {
      cluster: this.name,
      node: this.node,
      nats_connected: this.connected,
      nats_server: this.nc.getServer(),
      members: this.membership.list().map((member) => ({
        node: member.node,
        asterisk_id: member.asteriskId,
        ari: member.ari,
        channels: member.load.channels,
        bridges: member.load.bridges,
        draining: member.draining,
        self: member.node === this.node,
        last_seen_ms: Math.round(now - member.seenAt),
      })),
      home_applications: this.events.homeApplications(),
      owned_resources: this.ownership.owned,
      forwarded_requests: this.forwarder.forwarded,
      gathered_listings: this.forwarder.gathered,
      contacts: { shared: this.contacts.shared, withdrawn: this.contacts.withdrawn, known_elsewhere: this.contacts.known },
      shared_state: {
        globals_sent: this.globals.sent,
        globals_applied: this.globals.applied,
        astdb_sent: this.astdb.sent,
        astdb_applied: this.astdb.applied,
        device_states_sent: this.sharedConfig?.deviceStates.sent ?? 0,
        device_states_applied: this.sharedConfig?.deviceStates.applied ?? 0,
        config_sent: this.sharedConfig?.dynamicConfig.sent ?? 0,
        config_applied: this.sharedConfig?.dynamicConfig.applied ?? 0,
        // Read-your-writes (kv-seen.ts): ARI writes that waited for the others, and members that did not confirm one in time.
        writes_confirmed: this.kvSeen?.waited ?? 0,
        writes_unconfirmed: this.kvSeen?.unconfirmed ?? 0,
      },
      media_legs: { held: this.legs?.size ?? 0, opened: this.legs?.opened ?? 0, closed: this.legs?.closedCount ?? 0 },
      relayed_dialogs: { lent: this.sipFlows?.counts.lent ?? 0, through_others: this.sipFlows?.counts.flows ?? 0 },
    };
  }

  /** Which member holds each channel of the cluster (`GET /admin/cluster/channels`, the console's member column). */
  channelPlaces(): Promise<ChannelPlacesAnswer> {
    return this.places.gather();
  }

  /** Bridges across members (bridge-legs.ts): their leg messages, and addChannel/removeChannel routed to them. */
  private startBridgeLegs(options: { nc: NatsConnection; prefix: string; node: string; core: Core; config: PatchbayConfig; requestTimeoutMs: number; log: Logger; membership: Membership }): void {
    const { membership, ...rest } = options;
    const legs = new ClusterBridgeLegs({ ...rest, isLiveMember: (node) => membership.others().some((member) => member.node === node) });
    legs.start();
    this.legs = legs;
    this.forwarder.crossBridges = new CrossMemberBridges(options.nc, options.prefix, options.node, legs, options.requestTimeoutMs);
    this.forwarder.videoSources = new CrossMemberVideoSource(rest.core, legs);
    const dialIdentity = new DialIdentity(options.nc, options.prefix, options.node, options.core, options.requestTimeoutMs, options.log);
    dialIdentity.start();
    this.dialIdentity = dialIdentity;
    this.forwarder.dialIdentity = dialIdentity;
  }

  /** Writes of the dynamic configuration and device states wait for every member to have them (kv-seen.ts). */
  private startKvSeen(nc: NatsConnection, prefix: string, membership: Membership, shared: SharedConfig): void {
    const kvSeen = new KvSeen({ nc, prefix, node: this.node, mirrors: { config: shared.dynamicConfig, devstates: shared.deviceStates }, others: () => membership.others(), log: this.log });
    kvSeen.start();
    this.kvSeen = kvSeen;
    this.forwarder.readYourWrites = kvSeen;
  }

  /** Dialogs over another member's connection to a phone (sip-flows.ts): the contacts shared carry this member's address on each connection. */
  private startSipFlows(options: SipFlowsOptions): void {
    const flows = new ClusterSipFlows(options);
    flows.start();
    this.contacts.advertisedFor = (binding) => flows.advertisedFor(binding);
    this.sipFlows = flows;
  }

  async stop(): Promise<void> {
    this.sipFlows?.stop();
    this.heldCalls?.stop();
    this.legs?.stop();
    this.dialIdentity?.stop();
    this.membership.stop();
    this.events.stop();
    this.contacts.stop();
    this.places.stop();
    this.globals.stop();
    this.astdb.stop();
    this.kvSeen?.stop();
    this.sharedConfig?.deviceStates.stop();
    this.sharedConfig?.dynamicConfig.stop();
    this.ownership.stop();
    // Drain: what was published (events, the last KV writes) reaches the server first; but a stop
    // never waits long for a NATS that is gone (a drain waits for a reconnection that may not come).
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_DRAIN_MS);
    });
    await Promise.race([this.nc.drain().catch(() => undefined), gaveUp]);
    clearTimeout(timer);
    if (!this.nc.isClosed()) await this.nc.close().catch(() => undefined);
  }

  private memberDown(member: Member): void {
    const flowsEnded = this.sipFlows?.memberDown(member.node) ?? 0;
    if (flowsEnded > 0) this.log.warn({ gone: member.node, callsEnded: flowsEnded }, 'cluster member gone: calls here over its connections to phones failed');
    const legsEnded = this.legs?.memberDown(member.node) ?? 0;
    if (legsEnded > 0) this.log.warn({ gone: member.node, legsEnded }, 'cluster member gone: its bridge legs here ended');
    const ended = this.events.memberDown(member.asteriskId);
    this.log.warn({ gone: member.node, channelsEnded: ended }, 'cluster member gone: its channels in the applications here were ended (cause 38)');
  }

  /** Loud on loss, and again on return; the client reconnects by itself without end. */
  private watchConnection(): void {
    void (async () => {
      for await (const status of this.nc.status()) {
        if (status.type === 'disconnect') {
          this.connected = false;
          this.forwarder.connected = false;
          this.membership.setConnected(false);
          this.log.error({ server: status.server }, 'cluster: NATS connection lost; reconnecting (requests for other members answer 503 meanwhile)');
        } else if (status.type === 'reconnect') {
          this.connected = true;
          this.forwarder.connected = true;
          this.membership.setConnected(true);
          this.log.warn({ server: status.server }, 'cluster: NATS connection back');
        }
      }
    })().catch(() => undefined);
  }
}

function connectionOptions(config: PatchbayConfig, node: string): ConnectionOptions {
  const settings = config.cluster;
  const tls = settings.tlsCaFile !== null || settings.tlsCertFile !== null
    ? {
        ...(settings.tlsCaFile !== null ? { caFile: settings.tlsCaFile } : {}),
        ...(settings.tlsCertFile !== null ? { certFile: settings.tlsCertFile } : {}),
        ...(settings.tlsKeyFile !== null ? { keyFile: settings.tlsKeyFile } : {}),
      }
    : undefined;
  return {
    servers: settings.natsUrl.split(',').map((url) => url.trim()),
    name: `patchbay ${node}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    ...(settings.user !== '' ? { user: settings.user, pass: settings.password } : {}),
    ...(settings.token !== '' ? { token: settings.token } : {}),
    ...(tls ? { tls } : {}),
  };
}
