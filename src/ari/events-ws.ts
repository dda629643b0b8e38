// The event WebSocket (`GET /ari/events`): registers the connection's applications, delivers
// their events with a bounded send queue, keeps the connection alive, and answers REST requests
// sent over the socket.
import { mayNameSecret, redactSecrets } from './read-only-views.ts';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import type { AriUser } from '../config/config.ts';
import type { ApplicationSink, CoreEvent } from '../core/applications.ts';
import type { LoggedMessage } from '../core/application-sink.ts';
import type { Core } from '../control/core.ts';
import type { EventLog } from '../core/event-log.ts';
import { formatAriDate } from '../util/ari-date.ts';
import { splicedTextFrame, textFrame } from '../util/websocket-text-frame.ts';
import type { AuthResult } from './auth.ts';
import type { Dispatcher } from './dispatcher.ts';
import { EventStreams, parseResumeRequest, type ResumeRequest, type StreamOutput } from './event-resume.ts';
import { ARI_PREFIX, originOf, rejectUpgrade, type RequestTarget, type UpgradeHandler } from './http-server.ts';
import { checkValue } from './model-check.ts';
import { WebSocketRequestQueue } from './ws-request-queue.ts';
import { BINARY_ANSWER_REASON, readRestFrame, websocketOnlyAnswer, type RestEcho, type RestRefusal } from './ws-rest-request.ts';

const PROTOCOL = 'ari';
const MAX_APP_NAME = 73;
const TRUE_WORDS = new Set(['yes', 'true', 'y', 't', '1', 'on']);
/** What an answer to no readable request echoes (a failure, a request refused for a flood). */
const NO_ECHO: RestEcho = { transaction_id: '', request_id: '', uri: '' };
/** The ids an acknowledgement's error answer echoes. */
const echoOf = (fields: Record<string, unknown>): RestEcho => ({
  transaction_id: typeof fields.transaction_id === 'string' ? fields.transaction_id : '',
  request_id: typeof fields.request_id === 'string' ? fields.request_id : '',
  uri: '',
});
const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized',
  403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable', 409: 'Conflict',
  412: 'Precondition Failed', 413: 'Payload Too Large', 422: 'Unprocessable Entity', 426: 'Upgrade Required',
  500: 'Internal Server Error', 501: 'Not Implemented', 503: 'Service Unavailable',
};

export interface EventsWebSocketOptions {
  readonly core: Core;
  readonly log: Logger;
  readonly dispatcher: Dispatcher;
  readonly developerMode: boolean;
  readonly pingIntervalSeconds: number;
  readonly maxQueuedMessages: number;
  readonly maxQueuedBytes: number;
  /** Largest message a client may send (REST over WebSocket). */
  readonly maxPayloadBytes: number;
  /** Told of each REST request over the WebSocket once answered (metrics). */
  readonly onRequest?: (operation: string | undefined, method: string, status: number, seconds: number) => void;
  /**
   * The user of this name as the configuration has it now: each REST request over a WebSocket is
   * judged by the user's rights at that moment, not those it had when the socket opened (a reload
   * may have removed or demoted it). Absent: the rights at connect time stand.
   */
  readonly currentUser?: (name: string) => AriUser | undefined;
}

/**
 * A socket REST requests arrive on (an inbound event connection or an outbound WebSocket): the
 * user's rights apply to them, and the answers go back through `send`.
 */
export interface RestOverWebSocketPeer {
  readonly apps: readonly string[];
  readonly user: AriUser;
  readonly origin: string | undefined;
  /** Acknowledgements of numbered events (inbound connections that resume); absent elsewhere. */
  readonly streams?: Pick<EventStreams, 'acknowledge'>;
  send(message: Record<string, unknown>): void;
}

class EventConnection implements ApplicationSink, StreamOutput, RestOverWebSocketPeer {
  /** Messages handed to the WebSocket whose bytes the kernel has not taken yet. */
  private untaken = 0;
  private alive = true;
  private isClosed = false;
  /** The TCP socket under the WebSocket is corked until the next check phase of the event loop. */
  private corked = false;
  private readonly onTaken = (): void => {
    this.untaken--;
  };
  /** Each application's cursor on the event log (resume, replay, acknowledgements). */
  readonly streams: EventStreams;

  constructor(
    readonly socket: WebSocket,
    /** The upgraded connection the WebSocket writes its frames to. */
    private readonly transport: Duplex,
    readonly apps: readonly string[],
    /** Replaced when a reload changes the user's entry (usersReplaced). */
    public user: AriUser,
    readonly origin: string | undefined,
    private readonly owner: EventsWebSocket,
  ) {
    this.streams = new EventStreams(owner.eventLog, this);
    socket.on('pong', () => {
      this.alive = true;
    });
  }

  get serverId(): string {
    return this.owner.serverId;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Replay pauses at half the slow-consumer budget: a replay never gets a reader cut off. */
  mustPause(): boolean {
    return this.untaken * 2 >= this.owner.maxQueuedMessages || this.untakenBytes * 2 >= this.owner.maxQueuedBytes;
  }

  waitForRoom(resume: () => void): void {
    if (this.transport.writableNeedDrain) this.transport.once('drain', resume);
    else setImmediate(resume);
  }

  sendLogged(json: string): void {
    if (this.owner.developerMode) return this.send(JSON.parse(json) as Record<string, unknown>);
    this.sendText(this.visible(json));
  }

  sendMessage(message: Record<string, unknown>): void {
    this.send(message);
  }

  /**
   * One core action raises a burst of events (a hangup raises ChannelHangupRequest, StasisEnd and
   * ChannelDestroyed for both halves of a pair). Without corking, every frame is its own write
   * system call and its own TCP segment; corked, the burst leaves in one writev when the event loop
   * reaches its check phase (within the same loop iteration when raised from I/O callbacks). Order
   * is unchanged.
   */
  private cork(): void {
    if (this.corked) return;
    // A new burst starts: what the previous bursts left untaken, after the kernel had its chance
    // to take it, is the measure of a reader that does not keep up.
    if (this.tooSlow()) return;
    this.corked = true;
    this.transport.cork();
    setImmediate(this.uncork);
  }

  private readonly uncork = (): void => {
    if (!this.corked) return;
    this.corked = false;
    // A persisted event reaches the database before the frame that carries it leaves.
    this.owner.eventLog.flushSafely();
    this.transport.uncork();
  };

  /** Messages handed to the socket that the kernel has not taken yet (EventsWebSocket.queued). */
  get queuedMessages(): number {
    return this.untaken;
  }

  get queuedBytes(): number {
    return this.untakenBytes;
  }

  /** Bytes the socket holds in user space (corked, or refused by a full kernel buffer). */
  private get untakenBytes(): number {
    return this.transport.writableLength;
  }

  private tooSlow(): boolean {
    const bytes = this.untakenBytes;
    if (this.untaken < this.owner.maxQueuedMessages && bytes < this.owner.maxQueuedBytes) return false;
    this.owner.log.warn({ apps: this.apps, queued: this.untaken, queuedBytes: bytes }, 'event consumer too slow; closing its WebSocket');
    this.owner.eventsDropped += this.untaken;
    this.close();
    return true;
  }

  deliver(application: string, event: CoreEvent, json?: string, sequence?: number): void {
    // A numbered event goes out only when its stream is live and expects it (see event-resume.ts).
    if (sequence !== undefined && !this.streams.accepts(application, sequence)) return;
    if (json !== undefined && !this.owner.developerMode) return this.sendText(this.visible(json));
    // An event relayed from another cluster member keeps its owner's asterisk_id.
    const asteriskId = (event as { asterisk_id?: unknown }).asterisk_id ?? this.owner.serverId;
    this.send(sequence === undefined ? { ...event, application, asterisk_id: asteriskId } : { ...event, application, asterisk_id: asteriskId, sequence });
  }

  /**
   * A numbered event in parts: written straight into its frame, the event's shared text and this
   * application's fields, without joining them into a string first (see LoggedMessage).
   */
  deliverMessage(application: string, event: CoreEvent, message: LoggedMessage): void {
    // Developer mode checks the message against its model, a read-only user's is redacted: as text.
    if (this.owner.developerMode || this.user.readOnly || message.fields === '') return this.deliver(application, event, message.text(), message.sequence);
    if (!this.streams.accepts(application, message.sequence)) return;
    this.sendFrame(splicedTextFrame(message.body, message.tail, message.bodyBytes, message.fields, message.fieldsBytes, message.sequence));
  }

  send(message: Record<string, unknown>): void {
    this.sendText(this.visible(JSON.stringify(this.owner.developerMode ? this.owner.checked(message) : message)));
  }

  /** What this connection's user may see of a serialised message: a read-only user no secret variable. */
  private visible(json: string): string {
    if (!this.user.readOnly || !mayNameSecret(json)) return json;
    return JSON.stringify(redactSecrets(JSON.parse(json)));
  }

  private sendText(text: string): void {
    if (this.isClosed) return void this.owner.eventsDropped++;
    this.sendFrame(textFrame(text));
  }

  private sendFrame(frame: Buffer): void {
    if (this.isClosed) return void this.owner.eventsDropped++;
    this.cork();
    if (this.isClosed) return void this.owner.eventsDropped++;
    // Closing (a close frame crossed): nothing more may follow it on the wire.
    if (this.socket.readyState !== WebSocket.OPEN) return void this.owner.eventsDropped++;
    this.untaken++;
    this.owner.eventsSent++;
    // Written under ws, straight to its socket, as one frame: ws writes synchronously too (no
    // compression is negotiated), so frames keep their order with its pings and close frame.
    this.transport.write(frame, this.onTaken);
    // A burst larger than the byte budget is handed to the kernel at once rather than held: memory
    // stays bounded by the budget plus one message, and a reader that keeps up takes it.
    if (this.corked && this.untakenBytes >= this.owner.maxQueuedBytes) {
      this.uncork();
      this.tooSlow();
    }
  }

  /** Called by the keep-alive timer; a connection that missed the previous ping is dropped. */
  ping(): void {
    if (!this.alive) {
      this.owner.log.info({ apps: this.apps }, 'event WebSocket missed a keep-alive; closing it');
      this.close();
      return;
    }
    this.alive = false;
    this.socket.ping();
  }

  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.socket.terminate();
  }

  markClosed(): void {
    this.isClosed = true;
  }
}

export class EventsWebSocket implements UpgradeHandler {
  readonly log: Logger;
  readonly developerMode: boolean;
  readonly maxQueuedMessages: number;
  readonly maxQueuedBytes: number;
  private readonly options: EventsWebSocketOptions;
  private readonly server: WebSocketServer;
  private readonly connections = new Set<EventConnection>();
  private readonly keepAlive: NodeJS.Timeout;
  /** Messages handed to a WebSocket, and messages not sent because it was closed or too slow (metrics). */
  eventsSent = 0;
  eventsDropped = 0;
  /**
   * Runs before a connection for these applications is accepted (a cluster member takes over an
   * application's numbering from the member that held it, so that `resumeAfter` finds its events).
   */
  beforeAccept: ((apps: readonly string[]) => Promise<void>) | undefined;

  get clientCount(): number {
    return this.connections.size;
  }

  /**
   * What the event connections hold now in their send queues (bench, metrics): messages handed to
   * a socket that the kernel has not taken, and their bytes. Each is bounded per connection by
   * `max_queued_messages` / `max_queued_bytes` (a reader past them is closed).
   */
  queued(): { connections: number; messages: number; bytes: number } {
    let messages = 0;
    let bytes = 0;
    for (const connection of this.connections) {
      messages += connection.queuedMessages;
      bytes += connection.queuedBytes;
    }
    return { connections: this.connections.size, messages, bytes };
  }

  constructor(options: EventsWebSocketOptions) {
    this.options = options;
    this.log = options.log;
    this.developerMode = options.developerMode;
    this.maxQueuedMessages = options.maxQueuedMessages;
    this.maxQueuedBytes = options.maxQueuedBytes;
    this.server = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxPayloadBytes,
      perMessageDeflate: false,
      handleProtocols: (offered) => (offered.has(PROTOCOL) ? PROTOCOL : false),
    });
    this.keepAlive = setInterval(() => {
      for (const connection of this.connections) connection.ping();
    }, options.pingIntervalSeconds * 1000);
    this.keepAlive.unref();
  }

  get serverId(): string {
    return this.options.core.serverId;
  }

  get eventLog(): EventLog {
    return this.options.core.eventLog;
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, auth: AuthResult & { kind: 'ok' }, target: RequestTarget): void {
    if (target.pathname !== `${ARI_PREFIX}/events`) return rejectUpgrade(socket, 404, 'Resource not found');
    if (!this.options.core.modules.isRunning('res_ari_events.so')) return rejectUpgrade(socket, 404, 'Resource not found');
    const offered = request.headers['sec-websocket-protocol'];
    if (offered !== undefined && !offered.split(',').some((name) => name.trim() === PROTOCOL)) {
      return rejectUpgrade(socket, 400, `WebSocket subprotocol must include "${PROTOCOL}"`);
    }
    const appParam = target.query.get('app');
    if (!appParam) return rejectUpgrade(socket, 400, 'HTTP request is missing param: [app]');
    const apps = appParam.split(',').map((name) => name.trim());
    const badName = apps.find((name) => name.length === 0 || name.length > MAX_APP_NAME);
    if (badName !== undefined) return rejectUpgrade(socket, 400, `Invalid application name: "${badName}" (1 to ${MAX_APP_NAME} characters)`);
    if (auth.user.readOnly) {
      // A read-only user may watch an application nobody else holds, but never takes one away from
      // a user who may act on its calls (its events would go to a client that cannot answer them).
      const held = apps.find((name) => {
        const holder = this.options.core.applications.get(name)?.sink;
        return holder instanceof EventConnection && !holder.user.readOnly;
      });
      if (held !== undefined) return rejectUpgrade(socket, 403, `Application "${held}" is held by a read-write user; a read-only user cannot replace it`);
    }
    const subscribeAllRaw = target.query.get('subscribeAll');
    const subscribeAll = subscribeAllRaw !== null && TRUE_WORDS.has(subscribeAllRaw.trim().toLowerCase());
    const unique = [...new Set(apps)];
    if (subscribeAll) {
      try {
        this.options.core.applications.checkWide(unique);
      } catch (error) {
        return rejectUpgrade(socket, 503, (error as Error).message);
      }
    }
    const resume = parseResumeRequest(target.query, unique);
    if (typeof resume === 'string') return rejectUpgrade(socket, 400, resume);
    const upgrade = (): void => this.server.handleUpgrade(request, socket, head, (ws) => this.accept(ws, socket, unique, subscribeAll, auth.user, originOf(request), resume));
    if (this.beforeAccept === undefined) return upgrade();
    this.beforeAccept(unique).then(upgrade, (err: unknown) => {
      this.log.warn({ err, apps: unique }, 'event WebSocket not accepted: the application could not be taken over');
      if (socket.writable) rejectUpgrade(socket, 503, 'The application could not be taken over from another cluster member');
    });
  }

  private accept(ws: WebSocket, transport: Duplex, apps: string[], subscribeAll: boolean, user: AriUser, origin: string | undefined, resume: ResumeRequest): void {
    const connection = new EventConnection(ws, transport, apps, user, origin, this);
    this.connections.add(connection);
    const registry = this.options.core.applications;
    // Cursors first: what registering raises (StasisStart of channels that waited) comes after them.
    connection.streams.open(apps, resume);
    for (const app of apps) registry.register(app, connection, subscribeAll, { holdCalls: resume.resumable });
    this.log.info({ apps, subscribeAll }, 'event WebSocket connected');
    const requests = new WebSocketRequestQueue(
      ws,
      (text) => this.restRequest(connection, text),
      (err: unknown) => {
        this.log.error({ err }, 'REST request over WebSocket failed');
        this.restReply(connection, NO_ECHO, 500, STATUS_TEXT[500], { message: 'Internal server error' });
      },
      () => this.restReply(connection, NO_ECHO, 503, STATUS_TEXT[503], { message: 'Too many REST requests waiting on this WebSocket' }),
    );
    // Binary frames are ignored, as Asterisk ignores them.
    ws.on('message', (data, isBinary) => {
      if (!isBinary) requests.push(data.toString());
    });
    ws.on('close', () => {
      connection.markClosed();
      this.connections.delete(connection);
      for (const app of apps) registry.deactivate(app, connection);
      this.log.info({ apps }, 'event WebSocket closed');
    });
    ws.on('error', (err) => this.log.warn({ err, apps }, 'event WebSocket error'));
  }

  /** Replaces a message that does not match its model (developer mode). */
  checked(message: Record<string, unknown>): Record<string, unknown> {
    const problem = checkValue('Message', message, String(message.type));
    if (!problem) return message;
    this.log.error({ problem, type: message.type }, 'event does not match its model');
    return { error: 'InvalidMessage', message, details: problem };
  }

  /** Answers one REST request sent over a WebSocket (a RESTRequest message) with a RESTResponse. */
  async restRequest(connection: RestOverWebSocketPeer, text: string): Promise<void> {
    const frame = readRestFrame(text);
    if ('ack' in frame) {
      // Acknowledgements are answered only when they are wrong (they may come once per event).
      const problem = connection.streams ? connection.streams.acknowledge(frame.ack) : 'Acknowledgements are not used on this WebSocket';
      if (problem !== undefined) this.restReply(connection, echoOf(frame.ack), 400, STATUS_TEXT[400], { message: problem });
      return;
    }
    if (!frame.ok) return this.refuse(connection, frame.refusal);
    const request = frame.request;
    const early = websocketOnlyAnswer(request);
    if (early) return this.refuse(connection, early);
    const user = this.options.currentUser ? this.options.currentUser(connection.user.name) : connection.user;
    if (!user) return this.restReply(connection, request.echo, 401, STATUS_TEXT[401], { message: 'Authentication required' });
    if (user.readOnly && request.method !== 'GET' && request.method !== 'OPTIONS') {
      return this.restReply(connection, request.echo, 403, STATUS_TEXT[403], { message: 'Write access denied' });
    }
    const started = performance.now();
    const meta: { operation?: string } = {};
    const response = await this.options.dispatcher.dispatch({
      meta,
      method: request.method,
      path: request.path,
      query: request.query,
      contentType: request.contentType,
      body: request.body,
      user,
      origin: connection.origin,
      transport: 'websocket',
    });
    const ms = performance.now() - started;
    this.options.onRequest?.(meta.operation, request.method, response.status, ms / 1000);
    // The path only: the query (which may carry api_key) and the body are never logged.
    if (this.log.isLevelEnabled('debug')) {
      this.log.debug({ transport: 'websocket', method: request.method, path: `${ARI_PREFIX}${request.path}`, status: response.status, ms: Math.round(ms * 10) / 10, user: connection.user.name }, 'ARI request');
    }
    // A binary answer (406 from the dispatcher) has Asterisk's own reason phrase and no body.
    if (response.status === 406) return this.restReply(connection, request.echo, 406, BINARY_ANSWER_REASON, undefined);
    this.restReply(connection, request.echo, response.status, STATUS_TEXT[response.status] ?? 'Unknown', response.json);
  }

  private refuse(connection: RestOverWebSocketPeer, refusal: RestRefusal): void {
    this.restReply(connection, refusal.echo, refusal.status, refusal.reason, refusal.message === undefined ? undefined : { message: refusal.message });
  }

  private restReply(connection: RestOverWebSocketPeer, echo: RestEcho, status: number, reason: string, json: unknown): void {
    const message: Record<string, unknown> = {
      type: 'RESTResponse',
      transaction_id: echo.transaction_id,
      request_id: echo.request_id,
      status_code: status,
      reason_phrase: reason,
      uri: echo.uri,
      timestamp: formatAriDate(),
      application: connection.apps[0],
      asterisk_id: this.serverId,
    };
    if (json !== undefined) {
      message.content_type = 'application/json';
      message.message_body = JSON.stringify(json);
    }
    connection.send(message);
  }

  /**
   * A reload replaced the users: a connection whose user is gone, or whose password (or its format)
   * changed so that the credentials it opened with no longer hold, is closed; the others take the
   * user's new entry (a demotion to read-only applies at once to events and REST alike).
   */
  usersReplaced(users: readonly AriUser[]): void {
    const byName = new Map(users.map((user) => [user.name, user]));
    for (const connection of this.connections) {
      const current = byName.get(connection.user.name);
      if (!current || current.password !== connection.user.password || current.passwordFormat !== connection.user.passwordFormat) {
        this.log.info({ apps: connection.apps, user: connection.user.name }, 'event WebSocket closed: its user was removed or its password changed by a reload');
        connection.close();
        continue;
      }
      connection.user = current;
    }
  }

  close(): void {
    clearInterval(this.keepAlive);
    for (const connection of this.connections) connection.close();
    this.server.close();
  }
}
