// ARI outbound WebSockets (Asterisk's ari.conf `type=outbound_websocket`): persistent sessions
// started with the configuration and kept connected, per-call sessions opened by Stasis() for an
// application a per_call_config entry serves, and the reload that applies a changed configuration
// to the running sessions field by field.
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../../config/config.ts';
import type { WebSocketClientSettings } from '../../config/settings.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { Core } from '../../control/core.ts';
import type { PerCallApplication, PerCallApplications } from '../../core/per-call-applications.ts';
import type { RestOverWebSocketPeer } from '../events-ws.ts';
import { OutboundSession, type OutboundContext, type SessionSettings } from './outbound-session.ts';

/** Asterisk's limit on application names (AST_MAX_CONTEXT 80 − `stasis-`); the per-call name must fit too. */
const MAX_APP_NAME = 73;
export const WEBSOCKET_CLIENT_MODULE = 'res_websocket_client.so';
const ARI_MODULE = 'res_ari.so';

/** Client fields only read when (re)connecting: a change is kept for the next connection, the socket stays. */
const STORED_ONLY_FIELDS: ReadonlySet<string> = new Set(['connectionTimeout', 'reconnectInterval', 'reconnectAttempts', 'connectionType']);

export interface OutboundWebSocketsOptions {
  readonly core: Core;
  readonly log: Logger;
  /** REST over WebSocket and developer-mode checks, shared with the inbound event socket. */
  readonly rest: {
    restRequest(peer: RestOverWebSocketPeer, text: string): Promise<void>;
    checked(message: Record<string, unknown>): Record<string, unknown>;
  };
  readonly developerMode: boolean;
  readonly maxPayloadBytes: number;
  /** Reads the configuration again (reload); throws a ConfigError when it is wrong. */
  readonly readConfig: () => PatchbayConfig;
}

type Resolved = SessionSettings & { readonly type: 'persistent' | 'per_call_config' };

export class OutboundWebSockets implements PerCallApplications {
  readonly #options: OutboundWebSocketsOptions;
  readonly #context: OutboundContext;
  readonly #persistent = new Map<string, OutboundSession>();
  /** Per-call configurations by the application they serve. */
  #perCallByApp = new Map<string, Resolved>();
  readonly #perCallSessions = new Set<OutboundSession>();
  #closed = false;
  /** Messages handed to outbound sockets, and messages dropped (queue bounds, closed sessions). */
  eventsSent = 0;
  eventsDropped = 0;

  constructor(options: OutboundWebSocketsOptions) {
    this.#options = options;
    this.#context = {
      applications: options.core.applications,
      log: options.log,
      serverId: options.core.serverId,
      maxPayloadBytes: options.maxPayloadBytes,
      developerMode: options.developerMode,
      restRequest: (peer, text) => options.rest.restRequest(peer, text),
      check: options.developerMode ? (message) => options.rest.checked(message) : (message) => message,
      counted: (sent, dropped) => {
        this.eventsSent += sent;
        this.eventsDropped += dropped;
      },
    };
  }

  /** Starts the configured sessions and hooks into Stasis() and the module reloads. */
  async start(config: PatchbayConfig): Promise<void> {
    const { core } = this.#options;
    this.apply(config);
    core.stasis.perCallApplications = this;
    core.modules.register({
      name: WEBSOCKET_CLIENT_MODULE,
      description: 'WebSocket client support (outbound WebSockets)',
      supportLevel: 'core',
      load: () => undefined,
      unload: () => undefined,
      canUnload: () => false,
      reload: () => this.reload(),
    });
    await core.modules.load(WEBSOCKET_CLIENT_MODULE);
    // Reloading res_ari reloads ari.conf and websocket_client.conf, as in Asterisk.
    core.modules.on('reloaded', ({ name }) => {
      if (name !== ARI_MODULE) return;
      try {
        this.reload();
      } catch (err) {
        this.#options.log.error({ err: (err as Error).message }, 'outbound WebSocket reload failed; the previous configuration stays');
      }
    });
  }

  /** Reads the configuration again and applies it; a wrong configuration leaves everything as it was. */
  reload(): void {
    if (this.#closed) return;
    this.apply(this.#options.readConfig());
  }

  /** Sessions by id (persistent ones), for inspection. */
  get sessions(): ReadonlyMap<string, OutboundSession> {
    return this.#persistent;
  }

  get perCallSessionCount(): number {
    return this.#perCallSessions.size;
  }

  apply(config: PatchbayConfig): void {
    const next = resolve(config);
    for (const [id, session] of this.#persistent) {
      if (next.get(id)?.type !== 'persistent') {
        session.stop(true);
        this.#persistent.delete(id);
      }
    }
    // Running per-call sessions keep the configuration they started with, but not their user's
    // rights: a user demoted by the reload is read-only for them at once, and a session whose user
    // is gone is closed (the configuration checks keep the users of configured sessions).
    for (const session of this.#perCallSessions) {
      const user = config.ari.users.find((u) => u.name === session.settings.user.name);
      if (user) session.settings = { ...session.settings, user };
      else {
        this.#options.log.info({ session: session.id }, 'per-call outbound WebSocket closed: its local_ari_user was removed by a reload');
        session.stop(false);
      }
    }
    this.#perCallByApp = new Map();
    for (const settings of next.values()) {
      if (settings.type === 'per_call_config') for (const app of settings.owc.apps) this.#perCallByApp.set(app, settings);
    }
    for (const [id, settings] of next) {
      if (settings.type !== 'persistent') continue;
      const existing = this.#persistent.get(id);
      if (existing) {
        this.update(existing, settings);
        continue;
      }
      const session = new OutboundSession(id, settings, settings.owc.apps, false, this.#context);
      this.#persistent.set(id, session);
      session.registerApps();
      session.startPersistent();
    }
  }

  /** A reload changed a persistent session's configuration: applies each change as Asterisk does. */
  private update(session: OutboundSession, next: Resolved): void {
    const old = session.settings;
    const reconnect =
      old.owc.websocketClientId !== next.owc.websocketClientId ||
      old.user.name !== next.user.name ||
      old.user.password !== next.user.password ||
      connectionFieldsDiffer(old.client, next.client);
    const oldApps = session.apps;
    const nextApps = next.owc.apps;
    session.settings = next;
    if (old.owc.subscribeAll !== next.owc.subscribeAll) {
      session.unregisterApps(oldApps, true);
      session.apps = nextApps;
      session.registerApps(nextApps);
    } else {
      const removed = oldApps.filter((app) => !nextApps.includes(app));
      const added = nextApps.filter((app) => !oldApps.includes(app));
      session.unregisterApps(removed, true);
      session.apps = nextApps;
      session.registerApps(added);
    }
    if (reconnect) {
      this.#options.log.info({ session: session.id }, 'outbound WebSocket configuration changed; reconnecting');
      session.reconnect();
    }
  }

  serves(app: string): boolean {
    return !this.#closed && this.#perCallByApp.has(app);
  }

  async open(channel: Channel, app: string): Promise<PerCallApplication | null> {
    const settings = this.#perCallByApp.get(app);
    if (!settings || this.#closed) return null;
    const log = this.#options.log;
    const name = `${app}:${channel.name}`;
    if (name.length > MAX_APP_NAME) {
      log.warn({ channel: channel.name, app }, `per-call application name '${name}' is longer than ${MAX_APP_NAME} characters`);
      return null;
    }
    if (this.#options.core.applications.isActive(name)) {
      log.warn({ channel: channel.name, app: name }, 'per-call application name is already registered');
      return null;
    }
    const session = new OutboundSession(`${settings.owc.name}:${channel.name}`, settings, [name], true, this.#context);
    this.#perCallSessions.add(session);
    session.onStopped(() => this.#perCallSessions.delete(session));
    session.registerApps();
    const connected = await session.connectPerCall(() => channel.hangingUp || this.#closed);
    if (!connected) {
      session.stop(false);
      return null;
    }
    return {
      name,
      get failed() {
        return session.failed;
      },
      onFailed: (listener) => session.onFailed(listener),
      finish: () => session.finish(),
    };
  }

  /** Shutdown: every session unregisters its applications and closes with 1000. */
  close(): void {
    this.#closed = true;
    for (const session of this.#persistent.values()) session.stop(true);
    this.#persistent.clear();
    for (const session of this.#perCallSessions) session.stop(false);
    this.#perCallSessions.clear();
  }
}

function resolve(config: PatchbayConfig): Map<string, Resolved> {
  const out = new Map<string, Resolved>();
  for (const owc of config.ari.outboundWebsockets) {
    // The configuration checks guarantee both exist and that a connection type is set.
    const client = config.websocketClients.find((c) => c.name === owc.websocketClientId)!;
    const user = config.ari.users.find((u) => u.name === owc.localAriUser)!;
    const type = (owc.connectionType || client.connectionType) as Resolved['type'];
    out.set(owc.name, { owc, client, user, type });
  }
  return out;
}

function connectionFieldsDiffer(a: WebSocketClientSettings, b: WebSocketClientSettings): boolean {
  for (const key of Object.keys(a) as (keyof WebSocketClientSettings)[]) {
    if (STORED_ONLY_FIELDS.has(key)) continue;
    if (a[key] !== b[key]) return true;
  }
  return false;
}
