// One ARI outbound WebSocket session: the server connects to the application, registers its Stasis
// applications on the session, delivers their events over the socket and answers the REST
// requests the application sends back (as the outbound WebSocket's local_ari_user).
//
// Messages go through one bounded queue: while the socket is down (or the application reads too
// slowly) they wait there, in order, and are flushed on (re)connection. The queue is bounded by
// bytes and by age (Asterisk's has no bound); what falls out is counted and logged.
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type WebSocket from 'ws';
import type { AriUser } from '../../config/ari-users.ts';
import type { OutboundWebSocketSettings, WebSocketClientSettings } from '../../config/settings.ts';
import type { ApplicationSink, Applications, CoreEvent } from '../../core/applications.ts';
import type { PerCallApplication } from '../../core/per-call-applications.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { connectOnce, onClientMessage } from '../../util/websocket-clients/index.ts';
import type { RestOverWebSocketPeer } from '../events-ws.ts';

/** Bytes handed to the socket and not yet taken by the kernel before further messages wait in the queue. */
const SOCKET_HIGH_WATER = 1024 * 1024;
/** REST requests from one socket waiting for their turn (they are answered one at a time, in order). */
const MAX_PENDING_REQUESTS = 256;
/** A per-call session stays open this long after StasisEnd so trailing events (ChannelDestroyed …) still go out. */
export const PER_CALL_LINGER_MS = 3000;
const NORMAL_CLOSURE = 1000;
/** A peer that does not answer our close frame is cut off after this long. */
const CLOSE_GRACE_MS = 2000;

/** Closes with 1000 and cuts the connection if the peer does not complete the close handshake. */
function closeNormally(ws: WebSocket): void {
  ws.close(NORMAL_CLOSURE);
  setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
}

/** What a session needs from the interface layer. */
export interface OutboundContext {
  readonly applications: Applications;
  readonly log: Logger;
  readonly serverId: string;
  readonly maxPayloadBytes: number;
  /** REST over WebSocket, shared with the inbound event socket. */
  restRequest(peer: RestOverWebSocketPeer, text: string): Promise<void>;
  readonly developerMode: boolean;
  /** Developer mode: the message checked against its model (else unchanged). */
  check(message: Record<string, unknown>): Record<string, unknown>;
  /** Messages sent and dropped (metrics). */
  counted(sent: number, dropped: number): void;
}

export interface SessionSettings {
  readonly owc: OutboundWebSocketSettings;
  readonly client: WebSocketClientSettings;
  readonly user: AriUser;
}

interface Queued {
  readonly text: string;
  readonly bytes: number;
  readonly at: number;
}

type SessionState = 'idle' | 'connecting' | 'open' | 'stopped';

export class OutboundSession implements ApplicationSink, PerCallApplication {
  state: SessionState = 'idle';
  /** Applications registered on the session, in configuration order. */
  apps: readonly string[];
  settings: SessionSettings;
  #ws: WebSocket | undefined;
  #queue: Queued[] = [];
  #queueHead = 0;
  #queueBytes = 0;
  #droppedSinceConnect = 0;
  #everConnected = false;
  /** Bumped when the connection settings change: an attempt under older settings is discarded. */
  #generation = 0;
  #sleep: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  #requests: Promise<void> = Promise.resolve();
  #pendingRequests = 0;
  #failed = false;
  #failedListeners: (() => void)[] = [];
  #lingerTimer: NodeJS.Timeout | undefined;
  #stoppedListeners: (() => void)[] = [];
  #reconnectNow = false;
  /** ApplicationRegistered messages waiting for the first connection, by application. */
  readonly #pendingRegistered = new Map<string, Record<string, unknown>>();
  readonly #peer: RestOverWebSocketPeer;

  constructor(
    /** The session id: the outbound_websocket id, with `:<channel name>` for a per-call session. */
    readonly id: string,
    settings: SessionSettings,
    apps: readonly string[],
    private readonly perCall: boolean,
    private readonly context: OutboundContext,
  ) {
    this.settings = settings;
    this.apps = apps;
    const session = this;
    this.#peer = {
      get apps() {
        return session.apps;
      },
      get user() {
        return session.settings.user;
      },
      origin: undefined,
      send: (message) => this.send(message),
    };
  }

  /** The ephemeral application of a per-call session. */
  get name(): string {
    return this.apps[0]!;
  }

  get failed(): boolean {
    return this.#failed;
  }

  get queuedMessages(): number {
    return this.#queue.length - this.#queueHead;
  }

  get log(): Logger {
    return this.context.log;
  }

  // ---- Applications ---------------------------------------------------------------------------

  /** Registers the applications and queues one ApplicationRegistered each (sent first on connect). */
  registerApps(apps: readonly string[] = this.apps): void {
    for (const app of apps) {
      this.context.applications.register(app, this, this.settings.owc.subscribeAll);
      this.sendAppEvent('ApplicationRegistered', app);
    }
  }

  /** Unregisters applications, telling the application first (Asterisk sends it over the still-open socket). */
  unregisterApps(apps: readonly string[], tell: boolean): void {
    for (const app of apps) {
      if (tell && this.holds(app)) this.sendAppEvent('ApplicationUnregistered', app);
      this.context.applications.deactivate(app, this);
    }
  }

  holds(app: string): boolean {
    return this.context.applications.get(app)?.sink === this;
  }

  /** Application events bypass the application's event filter, as in Asterisk. */
  private sendAppEvent(type: 'ApplicationRegistered' | 'ApplicationUnregistered', app: string): void {
    const message = { type, timestamp: formatAriDate(), application: app, asterisk_id: this.context.serverId };
    if (this.state !== 'open' && !this.#everConnected) {
      // Before the first connection, registrations are kept apart from the queue: its bounds
      // must never cost the application the ApplicationRegistered it starts from.
      if (type === 'ApplicationRegistered') this.#pendingRegistered.set(app, message);
      else if (!this.#pendingRegistered.delete(app)) this.send(message);
      return;
    }
    this.send(message);
  }

  deliver(application: string, event: CoreEvent, json?: string, sequence?: number): void {
    // With the event log the event arrives numbered and already serialised.
    if (json !== undefined && !this.context.developerMode) return this.sendText(json);
    this.send(sequence === undefined ? { ...event, application, asterisk_id: this.context.serverId } : { ...event, application, asterisk_id: this.context.serverId, sequence });
  }

  // ---- The queue ------------------------------------------------------------------------------

  send(message: Record<string, unknown>): void {
    if (this.state === 'stopped') {
      this.context.counted(0, 1);
      return;
    }
    this.sendText(JSON.stringify(this.context.check(message)));
  }

  private sendText(text: string): void {
    if (this.state === 'stopped') {
      this.context.counted(0, 1);
      return;
    }
    const ws = this.#ws;
    if (ws && this.state === 'open' && this.queuedMessages === 0 && ws.bufferedAmount < SOCKET_HIGH_WATER) {
      this.write(ws, text);
      return;
    }
    const bytes = Buffer.byteLength(text);
    this.#queue.push({ text, bytes, at: Date.now() });
    this.#queueBytes += bytes;
    this.trimQueue();
  }

  private write(ws: WebSocket, text: string): void {
    this.context.counted(1, 0);
    // A burst of events (one hangup raises several) leaves in one write when the event loop
    // reaches its check phase, rather than one system call and TCP segment per frame.
    if (!this.#corked) {
      const socket = (ws as unknown as { _socket?: Duplex })._socket;
      if (socket) {
        this.#corked = socket;
        socket.cork();
        setImmediate(this.uncork);
      }
    }
    ws.send(text, this.onTaken);
  }

  #corked: Duplex | undefined;
  private readonly uncork = (): void => {
    const socket = this.#corked;
    this.#corked = undefined;
    socket?.uncork();
  };

  /** The kernel took a message: room for the next ones. */
  private readonly onTaken = (): void => {
    if (this.queuedMessages > 0) this.pump();
  };

  /** Hands queued messages to the socket while it keeps up (all of them when `all`). */
  private pump(all = false): void {
    const ws = this.#ws;
    if (!ws || this.state !== 'open') return;
    this.trimQueue();
    while (this.#queueHead < this.#queue.length && (all || ws.bufferedAmount < SOCKET_HIGH_WATER)) {
      const entry = this.#queue[this.#queueHead]!;
      this.#queue[this.#queueHead++] = undefined as unknown as Queued;
      this.#queueBytes -= entry.bytes;
      this.write(ws, entry.text);
    }
    if (this.#queueHead === this.#queue.length) {
      this.#queue = [];
      this.#queueHead = 0;
    } else if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead);
      this.#queueHead = 0;
    }
  }

  /** Drops the oldest messages beyond the byte budget or the age limit. */
  private trimQueue(): void {
    const { queueMaxBytes, queueMaxAgeSeconds } = this.settings.owc;
    const oldest = Date.now() - queueMaxAgeSeconds * 1000;
    let dropped = 0;
    while (this.#queueHead < this.#queue.length) {
      const entry = this.#queue[this.#queueHead]!;
      if (this.#queueBytes <= queueMaxBytes && entry.at >= oldest) break;
      this.#queue[this.#queueHead++] = undefined as unknown as Queued;
      this.#queueBytes -= entry.bytes;
      dropped++;
    }
    if (dropped === 0) return;
    if (this.#droppedSinceConnect === 0) {
      this.log.warn({ session: this.id, apps: this.apps }, 'outbound WebSocket queue full or too old; dropping the oldest messages');
    }
    this.#droppedSinceConnect += dropped;
    this.context.counted(0, dropped);
  }

  // ---- Connection -----------------------------------------------------------------------------

  /** Persistent: connects, and reconnects for ever until stopped. */
  startPersistent(delayFirst = false): void {
    void this.connectLoop(Infinity, undefined, delayFirst);
  }

  /** Per-call: up to reconnect_attempts attempts; true once connected. */
  async connectPerCall(giveUp: () => boolean): Promise<boolean> {
    return this.connectLoop(this.settings.client.reconnectAttempts, giveUp);
  }

  private async connectLoop(maxAttempts: number, giveUp: () => boolean = () => false, delayFirst = false): Promise<boolean> {
    if (this.state === 'connecting' || this.state === 'open' || this.state === 'stopped') return this.state === 'open';
    this.state = 'connecting';
    let failures = 0;
    // A server that accepts and drops at once must not get a tight reconnection loop.
    if (delayFirst) await this.sleep(this.settings.client.reconnectInterval);
    while ((this.state as SessionState) === 'connecting' && !giveUp()) {
      const generation = this.#generation;
      const client = this.settings.client;
      try {
        const ws = await connectOnce(client, {
          maxPayloadBytes: this.context.maxPayloadBytes,
          onPingTimeout: () => this.log.warn({ session: this.id }, 'outbound WebSocket missed its PONGs; reconnecting'),
        });
        if ((this.state as SessionState) !== 'connecting' || generation !== this.#generation || giveUp()) {
          closeNormally(ws);
          if ((this.state as SessionState) !== 'connecting' || giveUp()) break;
          continue;
        }
        this.attach(ws);
        return true;
      } catch (err) {
        failures++;
        this.log.debug({ session: this.id, uri: client.uri, err: (err as Error).message }, 'outbound WebSocket connection attempt failed');
        if (failures % client.reconnectAttempts === 0) {
          this.log.warn({ session: this.id, uri: client.uri, attempts: failures, reason: (err as Error).message }, 'outbound WebSocket cannot connect');
        }
        if (failures >= maxAttempts) break;
      }
      await this.sleep(client.reconnectInterval);
    }
    if (this.state === 'connecting') this.state = 'idle';
    return false;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#sleep = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#sleep = { timer, wake };
    });
  }

  private attach(ws: WebSocket): void {
    this.#ws = ws;
    this.state = 'open';
    const reconnected = this.#everConnected;
    this.#everConnected = true;
    this.log.info({ session: this.id, apps: this.apps, uri: this.settings.client.uri, dropped: this.#droppedSinceConnect || undefined }, 'outbound WebSocket connected');
    this.#droppedSinceConnect = 0;
    // After a reconnection the queued messages go first, then one ApplicationRegistered per application (sorted).
    if (reconnected) {
      for (const app of [...this.apps].sort()) if (this.holds(app)) this.sendAppEvent('ApplicationRegistered', app);
    } else {
      // First connection: the ApplicationRegistered of each application, in order, then the queue.
      for (const message of this.#pendingRegistered.values()) this.write(ws, JSON.stringify(this.context.check(message)));
      this.#pendingRegistered.clear();
    }
    this.pump();
    onClientMessage(ws, (data, isBinary) => {
      // Binary frames are ignored, as in Asterisk.
      if (isBinary) return;
      this.request(String(data));
    });
    ws.on('error', (err) => this.log.warn({ session: this.id, err: err.message }, 'outbound WebSocket error'));
    ws.on('close', (code) => this.onClose(ws, code));
  }

  private request(text: string): void {
    if (this.#pendingRequests >= MAX_PENDING_REQUESTS) {
      this.send({
        type: 'RESTResponse', transaction_id: '', request_id: '', status_code: 503, reason_phrase: 'Service Unavailable', uri: '',
        timestamp: formatAriDate(), application: this.apps[0], asterisk_id: this.context.serverId,
        content_type: 'application/json', message_body: JSON.stringify({ message: 'Too many REST requests waiting on this WebSocket' }),
      });
      return;
    }
    this.#pendingRequests++;
    this.#requests = this.#requests
      .then(() => this.context.restRequest(this.#peer, text))
      .catch((err: unknown) => this.log.error({ err, session: this.id }, 'REST request over outbound WebSocket failed'))
      .finally(() => {
        this.#pendingRequests--;
      });
  }

  private onClose(ws: WebSocket, code: number): void {
    if (ws !== this.#ws) return;
    this.#ws = undefined;
    if (this.state === 'stopped') return;
    this.state = 'idle';
    this.log.info({ session: this.id, apps: this.apps, code }, 'outbound WebSocket closed; reconnecting');
    // A close we asked for (new settings) reconnects at once; a drop waits one reconnect_interval.
    const delay = !this.#reconnectNow;
    this.#reconnectNow = false;
    if (!this.perCall) {
      this.startPersistent(delay);
      return;
    }
    if (this.#lingerTimer) {
      // Closed by the application while we were finishing: nothing left to do.
      this.stop(false);
      return;
    }
    void this.connectLoop(this.settings.client.reconnectAttempts, () => this.state === 'stopped', delay).then((connected) => {
      if (connected || this.state === 'stopped') return;
      this.#failed = true;
      this.log.warn({ session: this.id }, 'per-call outbound WebSocket lost; the channel leaves the application');
      for (const listener of this.#failedListeners.splice(0)) listener();
      this.stop(false);
    });
  }

  /** Settings changed that the connection depends on: close (1000) and connect again with the new ones. */
  reconnect(): void {
    this.#generation++;
    const ws = this.#ws;
    this.#reconnectNow = ws !== undefined;
    if (ws) closeNormally(ws);
    else this.#sleep?.wake();
  }

  /**
   * Ends the session: the applications are unregistered (told with ApplicationUnregistered when
   * `tell`), what is queued is handed over, and the socket closes with 1000. No reconnection.
   */
  stop(tell: boolean): void {
    if (this.state === 'stopped') return;
    clearTimeout(this.#lingerTimer);
    this.unregisterApps(this.apps, tell);
    this.pump(true);
    this.state = 'stopped';
    this.#sleep?.wake();
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws) closeNormally(ws);
    const left = this.queuedMessages;
    if (left > 0) this.context.counted(0, left);
    this.#queue = [];
    this.#queueHead = 0;
    this.#queueBytes = 0;
    this.log.info({ session: this.id, apps: this.apps }, 'outbound WebSocket session ended');
    for (const listener of this.#stoppedListeners.splice(0)) listener();
  }

  onStopped(listener: () => void): void {
    if (this.state === 'stopped') listener();
    else this.#stoppedListeners.push(listener);
  }

  // ---- Per call -------------------------------------------------------------------------------

  onFailed(listener: () => void): void {
    if (this.#failed) listener();
    else this.#failedListeners.push(listener);
  }

  finish(): void {
    if (this.state === 'stopped' || this.#lingerTimer) return;
    // StasisEnd has been handed over (or queued); trailing events still go out for a while.
    this.#lingerTimer = setTimeout(() => this.stop(false), PER_CALL_LINGER_MS);
    this.#lingerTimer.unref();
  }
}
