// Outgoing WebSocket connections to the servers named in `websocket_clients` (Asterisk's
// websocket_client.conf objects). Whoever needs to dial out over WebSocket (media channels in
// client mode, ARI outbound connections) looks a client up by name and connects with it here.
//
// The handshake is Asterisk's: `GET <path>?<query>` with Sec-WebSocket-Version 13, Upgrade,
// Connection, `Host: host:port` (the port always written), Basic `Authorization` when a username
// and password are set, `Sec-WebSocket-Protocol` with the configured protocols, a key, no Origin
// and no extensions offered. The server must answer 101 with a correct accept key; a protocol it
// names must be one offered, and any extension it names fails the attempt (the `ws` library
// checks both). A failed attempt is retried `reconnect_attempts` times in all, `reconnect_interval`
// apart; each attempt, connecting included, is bounded by twice `connection_timeout`.
import fs from 'node:fs';
import type { ClientRequest } from 'node:http';
import WebSocket from 'ws';
import type { WebSocketClientConfig } from '../../config/settings.ts';

export type { WebSocketClientConfig } from '../../config/settings.ts';

/** Largest message a connection made here accepts by default (Asterisk's frame limit). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 65535;

/** The configured clients, by name. */
export class WebSocketClients {
  readonly #byName: ReadonlyMap<string, WebSocketClientConfig>;

  constructor(clients: readonly WebSocketClientConfig[]) {
    this.#byName = new Map(clients.map((client) => [client.name, client]));
  }

  get(name: string): WebSocketClientConfig | undefined {
    return this.#byName.get(name);
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }
}

/** Query parameters appended to a client's URI: already URL-encoded `name=value` pairs. */
export type UriParams = readonly string[];

/**
 * The URI an attempt connects to: the configured one with `params` appended (with `&` when it has
 * a query already), the scheme following TLS (`tls_enabled` or `wss`), the port kept (a `ws://`
 * URI without one means 80 even over TLS).
 */
export function clientUrl(client: WebSocketClientConfig, params: UriParams = []): URL {
  const url = new URL(client.uri);
  const tls = client.tlsEnabled || url.protocol === 'wss:';
  const port = url.port || (url.protocol === 'wss:' ? '443' : '80');
  url.protocol = tls ? 'wss:' : 'ws:';
  url.port = port;
  if (params.length > 0) url.search = url.search ? `${url.search}&${params.join('&')}` : `?${params.join('&')}`;
  return url;
}

/** `host:port` with the port always written, as Asterisk sends Host (URL drops a default port). */
export function hostHeader(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'wss:' ? '443' : '80')}`;
}

export interface ConnectOptions {
  /** Extra, already URL-encoded, query parameters (chan_websocket's `v()`). */
  readonly params?: UriParams;
  /** Aborts the attempts in progress and those to come (the call went away). */
  readonly signal?: AbortSignal;
  /** Largest message accepted; larger ones close the connection with 1009. */
  readonly maxPayloadBytes?: number;
  /** Told of each failed attempt (for the log). */
  readonly onAttemptFailed?: (attempt: number, error: Error) => void;
}

export class WebSocketConnectError extends Error {
  override readonly name = 'WebSocketConnectError';
}

/**
 * Connects to the client's server, retrying as configured. Resolves with the open socket; rejects
 * with WebSocketConnectError once every attempt failed or `signal` aborted.
 */
export async function connectWebSocketClient(client: WebSocketClientConfig, options: ConnectOptions = {}): Promise<WebSocket> {
  const url = clientUrl(client, options.params);
  const tls = url.protocol === 'wss:';
  let lastError: Error = new Error('no attempt made');
  for (let attempt = 1; attempt <= client.reconnectAttempts; attempt++) {
    if (options.signal?.aborted) throw new WebSocketConnectError('connection abandoned');
    try {
      return await attemptConnect(client, url, tls, options);
    } catch (error) {
      lastError = error instanceof Error ? error : new Error(String(error));
      options.onAttemptFailed?.(attempt, lastError);
    }
    if (attempt < client.reconnectAttempts && client.reconnectInterval > 0) await pause(client.reconnectInterval, options.signal);
  }
  throw new WebSocketConnectError(`cannot connect to ${url.host}${url.pathname} after ${client.reconnectAttempts} attempt(s): ${lastError.message}`, { cause: lastError });
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function attemptConnect(client: WebSocketClientConfig, url: URL, tls: boolean, options: ConnectOptions): Promise<WebSocket> {
  const headers: Record<string, string> = { Host: hostHeader(url) };
  if (client.username && client.password) headers.Authorization = `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;
  const wsOptions: WebSocket.ClientOptions = {
    headers,
    perMessageDeflate: false,
    followRedirects: false,
    // The whole handshake, connecting included.
    handshakeTimeout: client.connectionTimeout * 2,
    maxPayload: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
    skipUTF8Validation: false,
  };
  if (tls) {
    wsOptions.rejectUnauthorized = client.verifyServerCert;
    // Node's TLS takes undefined as "the name matches" (ws's typing says boolean).
    if (!client.verifyServerHostname) wsOptions.checkServerIdentity = (() => undefined) as unknown as WebSocket.ClientOptions['checkServerIdentity'];
    if (client.caListFile) wsOptions.ca = fs.readFileSync(client.caListFile);
    if (client.certFile && client.privKeyFile) {
      wsOptions.cert = fs.readFileSync(client.certFile);
      wsOptions.key = fs.readFileSync(client.privKeyFile);
    }
  }
  const protocols = client.protocols
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, wsOptions);
    let settled = false;
    const finish = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      options.signal?.removeEventListener('abort', abort);
      socket.off('open', opened);
      socket.off('error', failed);
      socket.off('unexpected-response', unexpected);
      if (!error) return resolve(socket);
      // A late error of the abandoned socket must not go unhandled.
      socket.on('error', () => undefined);
      socket.terminate();
      reject(error);
    };
    const opened = (): void => finish(undefined);
    const failed = (error: Error): void => finish(error);
    const unexpected = (_request: ClientRequest, response: { statusCode?: number; resume(): void }): void => {
      response.resume();
      finish(new Error(`server answered ${response.statusCode ?? '?'} instead of 101`));
    };
    const abort = (): void => finish(new WebSocketConnectError('connection abandoned'));
    // The whole attempt (connecting, TLS, the HTTP exchange) is bounded, whatever trickles in.
    const connectTimer = setTimeout(() => finish(new Error(`no handshake within ${client.connectionTimeout * 2} ms`)), client.connectionTimeout * 2);
    socket.once('open', opened);
    socket.once('error', failed);
    socket.once('unexpected-response', unexpected);
    options.signal?.addEventListener('abort', abort, { once: true });
  });
}
