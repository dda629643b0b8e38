// @ts-check
// The web console's shared state and limits: what the page knows of the server (channels,
// bridges, the event log …) and this tab's own helpers. Every module of the page reads and
// updates this one object; console.js renders it.

export const STORAGE_KEY = 'patchbay-console-credentials';
/** Events kept in the global log that timelines are cut from. */
export const MAX_EVENTS = 5000;
/** Channels that have gone, kept (greyed out) so their timelines can still be read. */
export const MAX_GONE_CHANNELS = 50;
/** Rows shown per table (the rest is counted). */
export const MAX_ROWS = 500;
/** Listen-in audio format (media over WebSocket): 16-bit signed linear at 8 kHz, little-endian. */
export const LISTEN_FORMAT = 'slin';
export const LISTEN_RATE = 8000;
/** A sample above this magnitude counts as sound (about -54 dBFS). */
export const SILENCE_THRESHOLD = 64;

export function randomId() {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export const state = {
  user: '',
  password: '',
  canWrite: false,
  /** This tab's own ARI application: it subscribes to everything and owns listen-in helpers. */
  app: `patchbay-console-${randomId()}`,
  /** @type {WebSocket | null} */
  events: null,
  /** id → { channel, app, gone, talking, codec } */
  channels: new Map(),
  /** ids of channels that are gone, oldest first */
  goneOrder: [],
  /** id → bridge model */
  bridges: new Map(),
  /** `tech/resource` → endpoint model */
  endpoints: new Map(),
  /** name → application model */
  applications: new Map(),
  /** id → playback model */
  playbacks: new Map(),
  /** name → live recording model */
  recordings: new Map(),
  /** stored recordings, newest first: { name, format, modified?, duration_seconds?, size_bytes? } */
  stored: [],
  /** @type {{ version: string, startedAt: number } | null} the server's version and when it started */
  server: null,
  /** Channels and bridges this page created to listen in: not shown. */
  own: new Set(),
  /** Global event log: { seq, at, type, channels: string[], bridges: string[], event } */
  log: [],
  seq: 0,
  /** Events received so far: an event newer than a REST answer wins over it. */
  eventCount: 0,
  /** bridge id → eventCount when an event last updated it */
  bridgeUpdatedAt: new Map(),
  /** Dial peers and Local pairs: channel id → Set of related channel ids */
  related: new Map(),
  selected: '',
  /** target key (`channel:<id>`, `bridge:<id>`) → Listen */
  listens: new Map(),
  /** name of the recording this page started, per channel id */
  recordingOf: new Map(),
  /** recording name → the name of the channel or bridge it recorded (seen by this page) */
  recordingCalls: new Map(),
  /** channel id → resolve() of callers waiting for its StasisStart */
  stasisWaiters: new Map(),
  dirty: false,
};

// Names rather than raw ids wherever the page knows them (applications, recording and playback
// targets). In the applications table the id follows the name: it is what an ARI call takes.

/** A channel's name (its id while it is unknown to the page). */
export function channelName(id) {
  return state.channels.get(id)?.channel?.name ?? id;
}

/** A bridge's name, else its id. */
export function bridgeName(id) {
  return state.bridges.get(id)?.name || id;
}

/** `channel:<id>` / `bridge:<id>` as the channel's or bridge's name. */
export function targetName(uri) {
  const [kind, id] = String(uri ?? '').split(':');
  if (kind === 'channel') return channelName(id);
  if (kind === 'bridge') return `bridge ${bridgeName(id)}`;
  return String(uri ?? '');
}

/** `name (id)` for the applications table; the id alone while the name is unknown. */
export function labelled(name, id) {
  return name === id ? id : `${name} (${id})`;
}
