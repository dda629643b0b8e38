// What cluster members say to each other about cross-member bridges (docs/cluster.md, "A bridge
// across members"), on `pb.<c>.node.<node>.legs`. Anything allowed to publish on the cluster's
// subjects may send anything here: every message is checked field by field, and a bad one is
// answered 400, never acted on.
import { isIP } from 'node:net';
import { MAX_CHANNEL_ID_LENGTH } from '../core/channels/channels.ts';
import { parseJsonObject } from '../util/json-object.ts';

/** The codec a leg carries: 16 kHz linear audio, so a wideband call keeps its band across members. */
export const LEG_FORMAT = 'slin16';

/** Most channels one add or remove names (ARI's own lists are as long as a query string allows). */
export const MAX_LISTED_CHANNELS = 64;

/** Bridge owner → channel owner: put the channel in a hidden bridge with a leg sending to `address:port`. */
export interface OpenLeg {
  readonly op: 'open';
  readonly leg: string;
  readonly channel: string;
  /** The member asking (the bridge's owner): it must be a live member. */
  readonly peer: string;
  readonly address: string;
  readonly port: number;
  /** The bridge the channel joins: the hidden bridge takes its id, so the channel's bridge is that one on its own member too. */
  readonly bridge?: string;
  /** That bridge as it will be with the channel, and the applications hearing of it: the first description (leg-events.ts). */
  readonly described?: { readonly bridge: Record<string, unknown>; readonly apps: readonly string[] };
}

/**
 * Either side: the leg is gone here; `snapshot` is the channel's last one (from its owner).
 * `announced`: the channel's member raised the ChannelLeftBridge itself (the channel left by its
 * own doing), so the bridge's member takes the stand-in out without a second one.
 */
export interface CloseLeg {
  readonly op: 'close';
  readonly leg: string;
  readonly snapshot?: Record<string, unknown>;
  readonly announced?: boolean;
  /** With `announced`: the applications it was raised to (the copy may predate a later listener). */
  readonly announcedTo?: readonly string[];
}

/**
 * Bridge side → channel side: the bridge the stand-in is in, as its events show it now, and the
 * applications that hear of that bridge on its member: what the channel's member needs to raise
 * the ChannelLeftBridge itself when the channel leaves.
 */
export interface LegBridge {
  readonly op: 'bridge';
  readonly leg: string;
  readonly bridge: Record<string, unknown>;
  readonly apps: readonly string[];
}

/** Channel side → bridge side: the channel's snapshot changed; the stand-in shows it from now on. */
export interface LegSnapshot {
  readonly op: 'snapshot';
  readonly leg: string;
  readonly snapshot: Record<string, unknown>;
}

/** Either side: a DTMF digit the end's bridge passed to it, for the other end's bridge. */
export interface LegDigit {
  readonly op: 'digit';
  readonly leg: string;
  readonly digit: string;
  readonly durationMs: number;
}

/** Either side: a hold or unhold the end's bridge passed to it, for the other end's bridge. */
export interface LegHold {
  readonly op: 'hold' | 'unhold';
  readonly leg: string;
}

/** Bridge side → channel side: the bridge made this the channel's connected line. */
export interface LegConnected {
  readonly op: 'connected';
  readonly leg: string;
  readonly name: string;
  readonly number: string;
}

/** Any member → bridge owner: add channels (some of other members) to a bridge of the owner's. */
export interface AddToBridge {
  readonly op: 'add';
  readonly bridge: string;
  readonly channels: ReadonlyArray<{ readonly id: string; readonly node: string }>;
  readonly roles: readonly string[];
  readonly mute?: boolean;
  readonly absorbDtmf?: boolean;
  readonly inhibitConnectedLineUpdates?: boolean;
}

/** Any member → bridge owner: take channels out of a bridge, if any of them is another member's. */
export interface RemoveFromBridge {
  readonly op: 'remove';
  readonly bridge: string;
  readonly channels: ReadonlyArray<{ readonly id: string; readonly node: string }>;
}

export type LegMessage = OpenLeg | CloseLeg | LegDigit | LegHold | LegConnected | LegBridge | LegSnapshot | AddToBridge | RemoveFromBridge;

/**
 * The answer to any of them: an HTTP status (ARI's for add and remove, 200 for an open or close
 * that worked), a message when it failed; an open's answer carries the channel owner's RTP
 * address and the channel's snapshot and application. Status 0 on a remove: none of the channels
 * is another member's, so the request goes its ordinary way.
 */
export interface LegReply {
  readonly status: number;
  readonly message?: string;
  readonly address?: string;
  readonly port?: number;
  readonly snapshot?: Record<string, unknown>;
  readonly app?: string;
}

const LEG_ID = /^[A-Za-z0-9-]{1,64}$/;
const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A snapshot is a channel's JSON: bounded so one message cannot make a member hold megabytes. */
const MAX_SNAPSHOT_BYTES = 32 * 1024;
const MAX_APP_LENGTH = 256;
const MAX_ROLE_LENGTH = 256;
const MAX_CALLER_LENGTH = 256;
/** Most applications a bridge description names (each one hears of the bridge on its member). */
export const MAX_BRIDGE_APPS = 64;
/** Most channels a bridge description lists (ARI's own bridges are far smaller). */
const MAX_BRIDGE_CHANNELS = 1024;

function isChannelId(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= MAX_CHANNEL_ID_LENGTH;
}

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < 65536;
}

/** A snapshot of `channel` (an object whose id is that channel, of bounded size), else undefined. */
export function readSnapshot(value: unknown, channel: string): Record<string, unknown> | undefined | 'bad' {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'bad';
  const snapshot = value as Record<string, unknown>;
  if (snapshot.id !== channel || typeof snapshot.name !== 'string') return 'bad';
  if (JSON.stringify(snapshot).length > MAX_SNAPSHOT_BYTES) return 'bad';
  return snapshot;
}

/** A bridge's event snapshot as its member sent it: an object with an id and a list of channel ids, bounded. */
export function readBridgeSnapshot(value: unknown): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const snapshot = value as Record<string, unknown>;
  if (!isChannelId(snapshot.id) || !Array.isArray(snapshot.channels) || snapshot.channels.length > MAX_BRIDGE_CHANNELS) return undefined;
  if (!snapshot.channels.every(isChannelId)) return undefined;
  if (JSON.stringify(snapshot).length > MAX_SNAPSHOT_BYTES) return undefined;
  return snapshot;
}

function isAppList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length <= MAX_BRIDGE_APPS && value.every((app) => typeof app === 'string' && app !== '' && app.length <= MAX_APP_LENGTH);
}

function optionalBoolean(value: unknown): boolean | undefined | 'bad' {
  return value === undefined ? undefined : typeof value === 'boolean' ? value : 'bad';
}

/** A list of channels with the member holding each: 1 to MAX_LISTED_CHANNELS of them. */
function readOwners(value: unknown): Array<{ id: string; node: string }> | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LISTED_CHANNELS) return undefined;
  const channels: Array<{ id: string; node: string }> = [];
  for (const entry of value as unknown[]) {
    if (entry === null || typeof entry !== 'object') return undefined;
    const { id, node } = entry as Record<string, unknown>;
    if (!isChannelId(id) || typeof node !== 'string' || !NODE_ID.test(node)) return undefined;
    channels.push({ id, node });
  }
  return channels;
}

/** The message, or a sentence saying why it is not one. */
export function decodeLegMessage(data: Uint8Array): LegMessage | string {
  if (data.length > 64 * 1024) return 'too large';
  const m = parseJsonObject(data);
  if (typeof m === 'string') return m;
  switch (m.op) {
    case 'open': {
      if (typeof m.leg !== 'string' || !LEG_ID.test(m.leg)) return 'bad leg';
      if (!isChannelId(m.channel)) return 'bad channel';
      if (typeof m.peer !== 'string' || !NODE_ID.test(m.peer)) return 'bad peer';
      if (typeof m.address !== 'string' || isIP(m.address) === 0) return 'bad address';
      if (!isPort(m.port)) return 'bad port';
      if (m.bridge !== undefined && !isChannelId(m.bridge)) return 'bad bridge';
      let described: OpenLeg['described'];
      if (m.described !== undefined) {
        const { bridge, apps } = (m.described ?? {}) as Record<string, unknown>;
        const snapshot = readBridgeSnapshot(bridge);
        if (snapshot === undefined || !isAppList(apps)) return 'bad description';
        described = { bridge: snapshot, apps };
      }
      return { op: 'open', leg: m.leg, channel: m.channel, peer: m.peer, address: m.address, port: m.port, ...(m.bridge !== undefined ? { bridge: m.bridge } : {}), ...(described ? { described } : {}) };
    }
    case 'close': {
      if (typeof m.leg !== 'string' || !LEG_ID.test(m.leg)) return 'bad leg';
      if (m.snapshot !== undefined && (m.snapshot === null || typeof m.snapshot !== 'object' || Array.isArray(m.snapshot))) return 'bad snapshot';
      const announced = optionalBoolean(m.announced);
      if (announced === 'bad') return 'bad announced';
      if (m.announcedTo !== undefined && !isAppList(m.announcedTo)) return 'bad announcedTo';
      return {
        op: 'close',
        leg: m.leg,
        ...(m.snapshot !== undefined ? { snapshot: m.snapshot as Record<string, unknown> } : {}),
        ...(announced ? { announced } : {}),
        ...(announced && m.announcedTo !== undefined ? { announcedTo: m.announcedTo as readonly string[] } : {}),
      };
    }
    case 'bridge': {
      if (typeof m.leg !== 'string' || !LEG_ID.test(m.leg)) return 'bad leg';
      const bridge = readBridgeSnapshot(m.bridge);
      if (bridge === undefined) return 'bad bridge';
      if (!isAppList(m.apps)) return 'bad apps';
      return { op: 'bridge', leg: m.leg, bridge, apps: m.apps };
    }
    case 'snapshot': {
      if (typeof m.leg !== 'string' || !LEG_ID.test(m.leg)) return 'bad leg';
      if (m.snapshot === null || typeof m.snapshot !== 'object' || Array.isArray(m.snapshot)) return 'bad snapshot';
      return { op: 'snapshot', leg: m.leg, snapshot: m.snapshot as Record<string, unknown> };
    }
    case 'digit': {
      if (typeof m.leg !== 'string' || !LEG_ID.test(m.leg)) return 'bad leg';
      if (typeof m.digit !== 'string' || !/^[0-9A-D*#]$/.test(m.digit)) return 'bad digit';
      if (typeof m.durationMs !== 'number' || !Number.isInteger(m.durationMs) || m.durationMs < 0 || m.durationMs > 10_000) return 'bad durationMs';
      return { op: 'digit', leg: m.leg, digit: m.digit, durationMs: m.durationMs };
    }
    case 'connected': {
      if (typeof m.leg !== 'string' || !LEG_ID.test(m.leg)) return 'bad leg';
      if (typeof m.name !== 'string' || m.name.length > MAX_CALLER_LENGTH || typeof m.number !== 'string' || m.number.length > MAX_CALLER_LENGTH) return 'bad connected line';
      return { op: 'connected', leg: m.leg, name: m.name, number: m.number };
    }
    case 'hold':
    case 'unhold': {
      if (typeof m.leg !== 'string' || !LEG_ID.test(m.leg)) return 'bad leg';
      return { op: m.op, leg: m.leg };
    }
    case 'add': {
      if (!isChannelId(m.bridge)) return 'bad bridge';
      const channels = readOwners(m.channels);
      if (channels === undefined) return 'bad channels';
      if (!Array.isArray(m.roles) || m.roles.length > 1 || !m.roles.every((role) => typeof role === 'string' && role.length <= MAX_ROLE_LENGTH)) return 'bad roles';
      const mute = optionalBoolean(m.mute);
      const absorbDtmf = optionalBoolean(m.absorbDtmf);
      const inhibit = optionalBoolean(m.inhibitConnectedLineUpdates);
      if (mute === 'bad' || absorbDtmf === 'bad' || inhibit === 'bad') return 'bad options';
      return {
        op: 'add',
        bridge: m.bridge,
        channels,
        roles: m.roles as string[],
        ...(mute !== undefined ? { mute } : {}),
        ...(absorbDtmf !== undefined ? { absorbDtmf } : {}),
        ...(inhibit !== undefined ? { inhibitConnectedLineUpdates: inhibit } : {}),
      };
    }
    case 'remove': {
      if (!isChannelId(m.bridge)) return 'bad bridge';
      const channels = readOwners(m.channels);
      if (channels === undefined) return 'bad channels';
      return { op: 'remove', bridge: m.bridge, channels };
    }
    default:
      return 'unknown op';
  }
}

/** An answer from another member, checked; a malformed one is that member's failure (502). */
export function decodeLegReply(data: Uint8Array): LegReply {
  const malformed: LegReply = { status: 502, message: 'A cluster member gave a malformed answer about a bridge leg' };
  if (data.length > 64 * 1024) return malformed;
  const r = parseJsonObject(data);
  if (typeof r === 'string') return malformed;
  if (typeof r.status !== 'number' || !Number.isInteger(r.status) || r.status < 0 || r.status > 599) return malformed;
  if (r.message !== undefined && (typeof r.message !== 'string' || r.message.length > 1024)) return malformed;
  if (r.address !== undefined && (typeof r.address !== 'string' || isIP(r.address) === 0)) return malformed;
  if (r.port !== undefined && !isPort(r.port)) return malformed;
  if (r.app !== undefined && (typeof r.app !== 'string' || r.app.length > MAX_APP_LENGTH)) return malformed;
  if (r.snapshot !== undefined && (r.snapshot === null || typeof r.snapshot !== 'object' || Array.isArray(r.snapshot))) return malformed;
  return {
    status: r.status,
    ...(typeof r.message === 'string' ? { message: r.message } : {}),
    ...(typeof r.address === 'string' ? { address: r.address } : {}),
    ...(typeof r.port === 'number' ? { port: r.port } : {}),
    ...(typeof r.app === 'string' ? { app: r.app } : {}),
    ...(r.snapshot !== undefined ? { snapshot: r.snapshot as Record<string, unknown> } : {}),
  };
}

export function encodeLeg(message: LegMessage | LegReply): Uint8Array {
  return Buffer.from(JSON.stringify(message));
}
