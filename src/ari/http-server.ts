// The HTTP front door: authentication, CORS, body limits, then the dispatcher.
import http, { ServerResponse, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
// Imported rather than read from the global object: there `performance` and `Buffer` are accessors
// (a getter call per use), and the request path uses both on every request.
import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { AriUser, PatchbayConfig } from '../config/config.ts';
import { Authenticator, type AuthResult } from './auth.ts';
import { NO_HEADERS, type AriResponse, type Dispatcher } from './dispatcher.ts';
import { LogThrottle } from '../util/log-throttle.ts';
import { ConnectionGuard, type TrackedConnection } from './connection-guard.ts';

export const ARI_PREFIX = '/ari';
const ARI_PATH = `${ARI_PREFIX}/`;

/** An upgrade request's target, split by hand: `new URL()` throws on targets a client controls. */
export interface RequestTarget {
  readonly pathname: string;
  readonly query: URLSearchParams;
}

export interface UpgradeHandler {
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, auth: AuthResult & { kind: 'ok' }, target: RequestTarget): void;
}

/**
 * Splits a request target into path and query without interpreting it. Only origin-form targets
 * (`/path?query`) name an ARI resource; anything else (`//x`, `http://[`, `*`) is answered 404 by
 * the callers because its path does not start with `/ari`. Never throws.
 */
export function splitTarget(target: string): RequestTarget {
  const queryStart = target.indexOf('?');
  const pathname = queryStart < 0 ? target : target.slice(0, queryStart);
  const query = new URLSearchParams(queryStart < 0 ? '' : target.slice(queryStart + 1));
  return { pathname, query };
}

/**
 * Media WebSocket upgrades (`/media/<connection id>`, chan_websocket's server mode). The secret
 * connection id alone is not enough: the upgrade carries the credentials of an ARI user who may
 * write (a read-only user could read the id, and the socket carries the call's audio both ways).
 */
export interface MediaUpgradeHandler {
  handleMediaUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, connectionId: string): void;
}

export const MEDIA_PREFIX = '/media/';

/**
 * SIP over WebSocket (`/ws`, subprotocol `sip`: Asterisk's res_pjsip_transport_websocket). No ARI
 * credentials: SIP authenticates its own requests (digest). The SIP technology decides the rest.
 */
export interface SipWebSocketUpgrade {
  /** False when no ws/wss transport is configured (then the path is unknown). */
  handleWebSocketUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
}

export const SIP_WEBSOCKET_PATH = '/ws';

/** The operational routes outside /ari (src/ops/): the server only routes to them. */
export interface OpsRoutes {
  /** Whether GET /metrics needs ARI credentials. */
  readonly metricsRequireAuth: boolean;
  metrics(): Promise<{ contentType: string; text: string }>;
  health(): { status: number; body: unknown };
  /** Told of each ARI request once answered. */
  observeRequest(operation: string | undefined, method: string, status: number, seconds: number): void;
  /** `/admin/...` (src/ops/admin.ts): what the CLI asks that ARI has no operation for. Always needs credentials. */
  admin?(method: string, pathname: string, query: URLSearchParams): Promise<{ status: number; body: unknown }>;
}

const ADMIN_PATH = '/admin/';

/**
 * Static files served beside /ari without credentials: the web console (src/console/). Its
 * folder sits on the same floor as ari/, so server.ts hands it in and neither imports the other.
 */
export interface StaticFiles {
  /** Whether a request path (after the prefix) is one of these files'. */
  owns(pathname: string): boolean;
  /** Answers a request whose path `owns()` accepted. */
  serve(request: IncomingMessage, response: ServerResponse, pathname: string): void;
}

export interface HttpServerOptions {
  readonly config: PatchbayConfig;
  readonly log: Logger;
  readonly dispatcher: Dispatcher;
  readonly authenticator: Authenticator;
  readonly upgrade: UpgradeHandler;
  readonly ops?: OpsRoutes;
  readonly media?: MediaUpgradeHandler;
  readonly sipWebSocket?: SipWebSocketUpgrade;
  /** The web console's static files at `/console` (src/console/), when `http.console` is on. */
  readonly console?: StaticFiles;
}

/** What is known of a request by the time it is answered, for its log line and metrics. */
interface RequestMeta {
  operation?: string;
  user?: string;
}

/**
 * The server's responses carry what is known of their request for its log line and metrics, so
 * timing a request costs no object of its own: before, each request made a meta object, a
 * 'finish' closure and the wrapper `once` adds.
 */
class TrackedResponse extends ServerResponse implements RequestMeta {
  operation?: string;
  user?: string;
  /** performance.now() when tracking began; 0 when the request is not tracked. */
  started = 0;
  method = '';
  pathname = '';
  /** The connection guard's record of its socket (looked up once, when the request header arrived). */
  guardRecord: TrackedConnection | undefined = undefined;
}

const JSON_TYPE = 'application/json';
/**
 * The headers of an answer without a body (204 of a hang-up, a DELETE…), handed to writeHead as they
 * are: setHeader validated and stored each header per answer. Only read by Node.js, never changed.
 */
const NO_BODY_HEADERS: Readonly<Record<string, number>> = Object.freeze({ 'Content-Length': 0 });

/** The `http.prefix` a request came through (`/asterisk`), once the server has taken it off the URL. */
const prefixOfRequest = new WeakMap<IncomingMessage, string>();

/**
 * The server's own origin as the client addressed it, for Swagger basePath and Location headers
 * (with the `http.prefix`, so the URLs lead back through it).
 */
export function originOf(request: IncomingMessage): string | undefined {
  const host = request.headers.host;
  return host ? `http://${host}${prefixOfRequest.get(request) ?? ''}` : undefined;
}

/**
 * Takes `prefix` (`/asterisk`) off the request's URL, as Asterisk serves everything under http.conf's
 * `prefix`; false when the URL does not start with it (the caller answers 404).
 */
function takePrefix(request: IncomingMessage, prefix: string): boolean {
  if (prefix === '') return true;
  const url = request.url ?? '/';
  if (!url.startsWith(prefix)) return false;
  const rest = url.slice(prefix.length);
  if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') return false;
  request.url = rest === '' || rest[0] === '?' ? `/${rest}` : rest;
  prefixOfRequest.set(request, prefix);
  return true;
}

function hasNone(headers: Record<string, string>): boolean {
  for (const _name in headers) return false;
  return true;
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  const declared = headers['content-length'];
  return declared !== undefined ? declared !== '0' : headers['transfer-encoding'] !== undefined;
}

/**
 * The query of a request target without one. Never changed: nothing on the request path writes to a
 * request's query (REST over WebSocket builds its own), and a request without a query made one per
 * request. Its writers throw, so a change meant for one request cannot reach the next.
 */
const EMPTY_QUERY: URLSearchParams = new URLSearchParams('');
for (const name of ['append', 'delete', 'set', 'sort'] as const) {
  Object.defineProperty(EMPTY_QUERY, name, {
    value: () => {
      throw new TypeError('the shared empty query of a request is read-only');
    },
  });
}

export class AriHttpServer {
  readonly server: http.Server<typeof IncomingMessage, typeof TrackedResponse>;
  private readonly options: HttpServerOptions;
  private readonly allowedOrigins: ReadonlySet<string>;
  private readonly indent: number | undefined;
  private readonly realmHeader: string;
  /** Connections counted and capped below the file-descriptor limit (`http.max_connections` …). */
  readonly connections: ConnectionGuard;
  private readonly refusalLog = new LogThrottle(10_000);
  private lastOrigin: { readonly host: string; readonly origin: string } = { host: '', origin: '' };

  constructor(options: HttpServerOptions) {
    this.options = options;
    this.allowedOrigins = new Set(options.config.ari.allowedOrigins);
    this.indent = options.config.ari.pretty ? 2 : undefined;
    this.realmHeader = `Basic realm="${options.config.ari.authRealm}"`;
    const trimmed = options.config.http.prefix.replace(/^\/+|\/+$/g, '');
    const prefix = trimmed === '' ? '' : `/${trimmed}`;
    this.server = http.createServer({ ServerResponse: TrackedResponse }, (request, response) => {
      // Here rather than in a listener of its own: with two 'request' listeners Node.js copies the
      // listener list on every request.
      response.guardRecord = this.connections.headerReceived(request.socket);
      try {
        if (!takePrefix(request, prefix)) return this.send(response, { status: 404, headers: {}, json: { message: 'Not found' } });
        this.handle(request, response);
      } catch (err) {
        options.log.error({ err }, 'request handling failed');
        if (!response.headersSent) this.send(response, { status: 500, headers: {}, json: { message: 'Internal server error' } });
      }
    });
    const { max, maxPerAddress, headerTimeoutMs } = options.config.httpConnections;
    this.connections = new ConnectionGuard({ maxConnections: max, maxPerAddress, headerTimeoutMs }, (reason, address) => {
      this.refusalLog.run((suppressed) =>
        options.log.warn({ address, reason, ...(suppressed > 0 ? { suppressed } : {}) }, `HTTP connection refused: too many connections ${reason === 'total' ? 'in all' : 'from one address'}`),
      );
    });
    // Counted before Node.js parses anything; the 'request' handler and 'upgrade' listener run once a header is in.
    this.server.on('connection', (socket: Socket) => this.connections.admit(socket));
    this.server.on('upgrade', (request, socket, head) => {
      this.connections.headerReceived(request.socket);
      if (takePrefix(request, prefix)) return this.handleUpgrade(request, socket, head);
      socket.on('error', () => socket.destroy());
      rejectUpgrade(socket, 404, 'Not found');
    });
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return;
      // A request line and headers past Node.js's 16 KiB are too large, not malformed: 431 (RFC 6585 §5)
      // tells a client that shortening them would help; anything else the parser refused is a 400.
      const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(request: IncomingMessage, response: TrackedResponse, checked?: AuthResult, known?: RequestMeta): void {
    // splitTarget() without its object: this runs for every request.
    const target = request.url ?? '/';
    const queryStart = target.indexOf('?');
    const pathname = queryStart < 0 ? target : target.slice(0, queryStart);
    const query = queryStart < 0 ? EMPTY_QUERY : new URLSearchParams(target.slice(queryStart + 1));
    const method = request.method ?? 'GET';
    // Read once: `request.headers` is a getter on Node.js's side, and this path reads five of them.
    const headers = request.headers;
    if (headers.origin) this.addCors(request, response);
    const isAri = pathname.startsWith(ARI_PATH) || pathname === ARI_PREFIX;
    if (!isAri && this.options.ops && (pathname === '/metrics' || pathname === '/health')) return this.handleOps(request, response, pathname, query, method, checked);
    if (!isAri && this.options.ops?.admin && pathname.startsWith(ADMIN_PATH)) return this.handleAdmin(request, response, pathname, query, method, checked);
    if (!isAri && this.options.console?.owns(pathname)) return this.options.console.serve(request, response, pathname);
    if (!isAri && this.options.media && pathname.startsWith(MEDIA_PREFIX)) {
      // A media WebSocket asked for without an upgrade (as Asterisk's WebSocket server answers).
      request.resume();
      return this.send(response, { status: 426, headers: { Upgrade: 'websocket' }, json: { message: 'Upgrade Required' } });
    }
    if (!isAri && this.options.sipWebSocket && pathname === SIP_WEBSOCKET_PATH) {
      request.resume();
      return this.send(response, { status: 426, headers: { Upgrade: 'websocket' }, json: { message: 'Upgrade Required' } });
    }
    if (!isAri) {
      request.resume();
      return this.send(response, { status: 404, headers: {}, json: { message: 'Resource not found' } });
    }
    const meta = known ?? this.track(response, method, pathname);
    // The address the guard kept when it admitted the connection: the socket's getter per request is
    // one more polymorphic call on Node.js's side (a socket's peer does not change).
    const address = response.guardRecord !== undefined ? response.guardRecord.address : request.socket.remoteAddress;
    const auth = checked ?? this.options.authenticator.authenticate(headers, query, method, address);
    // A crypt hash is being checked off the event loop: carry on with its answer.
    if (auth instanceof Promise) return void auth.then((result) => this.handle(request, response, result, meta)).catch((err: unknown) => this.failed(response, err));
    if (auth.kind !== 'ok') {
      request.resume();
      return this.send(response, this.authFailure(auth));
    }
    if (meta) meta.user = auth.user.name;
    ConnectionGuard.markAuthenticated(response.guardRecord);
    // Most requests carry no body: they are dispatched at once, without a closure to wait for one.
    if (!hasBody(headers)) return this.dispatch(headers, response, method, pathname, query, auth.user, meta, undefined);
    this.readBody(request).then(
      (body) => this.dispatch(headers, response, method, pathname, query, auth.user, meta, body),
      (tooLarge: Error) => this.send(response, { status: 413, headers: { Connection: 'close' }, json: { message: tooLarge.message } }),
    );
  }

  private dispatch(
    headers: IncomingHttpHeaders,
    response: TrackedResponse,
    method: string,
    pathname: string,
    query: URLSearchParams,
    user: AriUser,
    meta: RequestMeta | undefined,
    body: Buffer | undefined,
  ): void {
    const result = this.options.dispatcher.dispatch({
      meta,
      method,
      path: pathname.slice(ARI_PREFIX.length),
      query,
      contentType: headers['content-type'],
      body,
      user,
      origin: this.originOf(headers.host, response.req),
      transport: 'http',
    });
    if (result instanceof Promise) result.then((answer) => this.send(response, answer), (err: unknown) => this.failed(response, err));
    else this.send(response, result);
  }

  /**
   * originOf(), remembered for the last Host header: clients send the same one on every request, and
   * the text was built (and a WeakMap asked for the prefix) per request.
   */
  private originOf(host: string | undefined, request: IncomingMessage): string | undefined {
    if (host === undefined) return undefined;
    if (host !== this.lastOrigin.host) this.lastOrigin = { host, origin: originOf(request)! };
    return this.lastOrigin.origin;
  }

  /**
   * Times an ARI request and, once answered, feeds the metrics and (at debug) logs method, path
   * (never the query: it may carry api_key), status, time and user. Nothing is built when neither
   * wants it.
   */
  private track(response: TrackedResponse, method: string, pathname: string): RequestMeta | undefined {
    if (!this.options.ops && !this.debugLog) return undefined;
    response.started = performance.now();
    response.method = method;
    response.pathname = pathname;
    return response;
  }

  /**
   * An answer was handed to Node.js whole (send()): a tracked request is observed now. A 'finish'
   * listener per response made Node.js's own (resOnFinish) one of two, and an event with two
   * listeners copies its listener list each time it is emitted. Streamed answers still wait for
   * 'finish' (send()), as their time includes the stream's.
   */
  private answered(response: TrackedResponse): void {
    if (response.started === 0) return;
    this.finished(response);
  }

  /** The 'finish' listener of a tracked streamed answer (an emitter calls it with `this` = the response). */
  private readonly onFinish = ((server: AriHttpServer) =>
    function (this: TrackedResponse): void {
      server.finished(this);
    })(this);

  private finished(response: TrackedResponse): void {
    const ms = performance.now() - response.started;
    // Observed once: a later answer on the same response (none is sent) would not count again.
    response.started = 0;
    this.options.ops?.observeRequest(response.operation, response.method, response.statusCode, ms / 1000);
    if (this.debugLog) {
      this.options.log.debug({ method: response.method, path: response.pathname, status: response.statusCode, ms: Math.round(ms * 10) / 10, user: response.user }, 'ARI request');
    }
  }

  /** Whether requests are logged at debug; asked of the logger per request, as its level may change. */
  private get debugLog(): boolean {
    return this.options.log.isLevelEnabled('debug');
  }

  /** GET /health (no credentials) and GET /metrics (ARI credentials when metrics.require_auth). */
  private handleOps(request: IncomingMessage, response: TrackedResponse, pathname: string, query: URLSearchParams, method: string, checked?: AuthResult): void {
    const ops = this.options.ops!;
    request.resume();
    if (method !== 'GET' && method !== 'HEAD') return this.send(response, { status: 405, headers: { Allow: 'GET,HEAD' }, json: { message: 'Invalid method' } });
    if (pathname === '/health') {
      const answer = ops.health();
      return this.send(response, { status: answer.status, headers: { 'Cache-Control': 'no-store' }, json: answer.body });
    }
    if (ops.metricsRequireAuth) {
      const auth = checked ?? this.options.authenticator.authenticate(request.headers, query, method, request.socket.remoteAddress);
      if (auth instanceof Promise) return void auth.then((result) => this.handle(request, response, result)).catch((err: unknown) => this.failed(response, err));
      // Reading metrics is reading: a read-only user may.
      if (auth.kind !== 'ok' && auth.kind !== 'read-only') return this.send(response, this.authFailure(auth));
    }
    ops.metrics().then(
      ({ contentType, text }) => this.send(response, { status: 200, headers: {}, raw: Buffer.from(text), contentType }),
      (err: unknown) => this.failed(response, err),
    );
  }

  /** `/admin/...`: ARI credentials always; reading (GET) is allowed to a read-only user, the rest is not. */
  private handleAdmin(request: IncomingMessage, response: TrackedResponse, pathname: string, query: URLSearchParams, method: string, checked?: AuthResult): void {
    request.resume();
    const auth = checked ?? this.options.authenticator.authenticate(request.headers, query, method, request.socket.remoteAddress);
    if (auth instanceof Promise) return void auth.then((result) => this.handle(request, response, result)).catch((err: unknown) => this.failed(response, err));
    const reading = method === 'GET' || method === 'HEAD';
    if (auth.kind !== 'ok' && !(reading && auth.kind === 'read-only')) return this.send(response, this.authFailure(auth));
    this.options.ops!.admin!(method, pathname, query).then(
      (answer) => this.send(response, { status: answer.status, headers: { 'Cache-Control': 'no-store' }, json: answer.body }),
      (err: unknown) => this.failed(response, err),
    );
  }

  /** Last resort for a handler that threw or rejected: log it, answer 500, keep serving. */
  private failed(response: TrackedResponse, err: unknown): void {
    this.options.log.error({ err }, 'request handling failed');
    if (!response.headersSent) this.send(response, { status: 500, headers: {}, json: { message: 'Internal server error' } });
    else response.destroy();
  }

  authFailure(auth: AuthResult): AriResponse {
    if (auth.kind === 'read-only') return { status: 403, headers: {}, json: { message: 'Write access denied' } };
    if (auth.kind === 'acl-denied') return { status: 403, headers: {}, json: { message: 'Access denied by ACL' } };
    return { status: 401, headers: { 'WWW-Authenticate': this.realmHeader }, json: { message: 'Authentication required' } };
  }

  private readBody(request: IncomingMessage): Promise<Buffer> {
    const declared = request.headers['content-length'];
    const limit = this.options.config.http.bodyLimitBytes;
    if (declared !== undefined && Number(declared) > limit) {
      request.resume();
      return Promise.reject(new Error(`Request body is larger than ${limit} bytes`));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      request.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          request.removeAllListeners('data');
          request.resume();
          reject(new Error(`Request body is larger than ${limit} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      request.on('end', () => resolve(Buffer.concat(chunks)));
      request.on('error', reject);
    });
  }

  private addCors(request: IncomingMessage, response: ServerResponse): void {
    const origin = request.headers.origin;
    if (!origin || (!this.allowedOrigins.has(origin) && !this.allowedOrigins.has('*'))) return;
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Access-Control-Allow-Credentials', 'true');
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
      response.setHeader('Access-Control-Allow-Methods', 'GET,POST,PUT,DELETE,OPTIONS');
      const requested = request.headers['access-control-request-headers'];
      if (requested) response.setHeader('Access-Control-Allow-Headers', requested);
    }
  }

  private send(response: TrackedResponse, result: AriResponse): void {
    const noHeaders = result.headers === NO_HEADERS || hasNone(result.headers);
    if (result.json === undefined && result.raw === undefined && noHeaders) {
      response.writeHead(result.status, NO_BODY_HEADERS);
      response.end();
      return this.answered(response);
    }
    if (result.json !== undefined) {
      const text = this.indent === undefined ? JSON.stringify(result.json) : JSON.stringify(result.json, null, this.indent);
      const length = Buffer.byteLength(text);
      // Most answers carry no headers of their own: then no copy of them is made.
      const headers = noHeaders ? { 'Content-Type': JSON_TYPE, 'Content-Length': length } : { ...result.headers, 'Content-Type': JSON_TYPE, 'Content-Length': length };
      response.writeHead(result.status, headers);
      response.end(text);
      return this.answered(response);
    }
    for (const [name, value] of Object.entries(result.headers)) response.setHeader(name, value);
    response.statusCode = result.status;
    if (result.raw !== undefined) {
      if (result.contentType) response.setHeader('Content-Type', result.contentType);
      if (Buffer.isBuffer(result.raw)) {
        response.setHeader('Content-Length', result.raw.length);
        response.end(result.raw);
        return this.answered(response);
      }
      if (response.started !== 0) response.on('finish', this.onFinish);
      result.raw.on('error', () => response.destroy());
      result.raw.pipe(response);
      return;
    }
    response.setHeader('Content-Length', 0);
    response.end();
    this.answered(response);
  }

  /**
   * Upgrade requests bypass the request handler, and an exception thrown here would end the
   * process: authenticate first, parse nothing that can throw, and answer any failure on the socket.
   */
  private handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, checked?: AuthResult): void {
    if (!checked) socket.on('error', () => socket.destroy());
    try {
      const target = splitTarget(request.url ?? '/');
      if (!checked && this.options.sipWebSocket && target.pathname === SIP_WEBSOCKET_PATH) {
        // Its own bounds apply (connections per source and in all): no eviction by idle newcomers.
        this.connections.authenticated(request.socket);
        if (!this.options.sipWebSocket.handleWebSocketUpgrade(request, socket, head)) rejectUpgrade(socket, 404, 'Resource not found');
        return;
      }
      const auth = checked ?? this.options.authenticator.authenticate(request.headers, target.query, request.method ?? 'GET', request.socket.remoteAddress);
      if (auth instanceof Promise) return void auth.then((result) => this.handleUpgrade(request, socket, head, result), () => socket.destroy());
      if (auth.kind !== 'ok') {
        const failure = this.authFailure(auth);
        return rejectUpgrade(socket, failure.status, (failure.json as { message: string }).message, failure.headers);
      }
      // Credentials checked: a flood of idle sockets can no longer evict it (events and media sockets alike).
      this.connections.authenticated(request.socket);
      if (this.options.media && target.pathname.startsWith(MEDIA_PREFIX)) {
        if (auth.user.readOnly) return rejectUpgrade(socket, 403, 'Write access denied');
        return this.options.media.handleMediaUpgrade(request, socket, head, target.pathname.slice(MEDIA_PREFIX.length));
      }
      if (target.pathname !== ARI_PREFIX && !target.pathname.startsWith(`${ARI_PREFIX}/`)) {
        return rejectUpgrade(socket, 404, 'Resource not found');
      }
      this.options.upgrade.handleUpgrade(request, socket, head, auth, target);
    } catch (err) {
      this.options.log.error({ err }, 'upgrade handling failed');
      if (socket.writable) rejectUpgrade(socket, 500, 'Internal server error');
      else socket.destroy();
    }
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  426: 'Upgrade Required',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Ends an upgrade attempt with a plain HTTP answer carrying the ARI error body. */
export function rejectUpgrade(socket: Duplex, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ message });
  const lines = [`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}`, 'Connection: close', `Content-Type: ${JSON_TYPE}`, `Content-Length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
