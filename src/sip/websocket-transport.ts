/**
 * SIP over WebSocket (RFC 7118), the transport browsers use (JsSIP, SIP.js): the HTTP server hands
 * over upgrades of its `/ws` path that offer the `sip` subprotocol, as Asterisk's
 * res_http_websocket + res_pjsip_transport_websocket do. Each WebSocket message carries exactly one
 * SIP message (§5.1), so no Content-Length framing is needed and none is trusted beyond the frame.
 *
 * A browser cannot accept connections: every request to it must go over a connection it opened.
 * So each connection is remembered under the remote address and port (what a registration's
 * source records), requests find it there, and when it closes the listeners of `onClosed` drop
 * what was bound to it (registrations). Its Via and Contact name `<random>.invalid` hosts (§5.2):
 * only `received`/`rport` and the connection say where it is.
 *
 * Bounds: connections in total and per source address, message size (the parser's limit, also the
 * WebSocket's maxPayload so an oversized frame is refused before it is buffered), unsent bytes per
 * connection, and a keep-alive ping: a connection that did not answer the previous ping is closed.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { createResponse, type SipMessage, type SipResponse } from './message.ts';
import { DEFAULT_LIMITS, parseMessage, type ParserLimits } from './parser.ts';
import { responseDestination, stampVia, type Destination, type Source, type TcpConnection, type TransportHandlers } from './transport.ts';

/** The WebSocket subprotocol of SIP (RFC 7118 §4). */
export const SIP_WEBSOCKET_PROTOCOL = 'sip';

export interface WebSocketTransportOptions {
  /** Host written in Via and Contact (the HTTP server's public address). */
  readonly host: string;
  /** Port written in Via and Contact (the HTTP server's). */
  readonly port: number;
  /** Name written into the Source of what arrives (the pjsip.conf transport section's). */
  readonly name?: string;
  readonly limits?: Partial<ParserLimits>;
  /** Write the compact header names (pjsip.conf system `compact_headers`). */
  readonly compactHeaders?: boolean;
  /** Connections at once, all sources together (default 1024). */
  readonly maxConnections?: number;
  /** Connections at once from one address (default 32). */
  readonly maxConnectionsPerSource?: number;
  /** Seconds between keep-alive pings (default 30; 0: none). */
  readonly pingIntervalSeconds?: number;
  /** Browsers reach it over TLS (a `wss` transport: HTTPS, or a TLS-terminating proxy in front): Via says WSS. */
  readonly secure?: boolean;
  /** Unsent bytes beyond which a connection is closed (default 1 MiB). */
  readonly maxWriteBuffer?: number;
}

/** One browser's connection: what a Source and Destination carry to reach it again. */
class WebSocketConnection implements TcpConnection {
  private static next = 1;
  readonly id = WebSocketConnection.next++;
  closed = false;
  /** Answered the last ping (or has not been pinged yet). */
  alive = true;
  readonly protocol: 'WS' | 'WSS';
  constructor(
    readonly socket: WebSocket,
    readonly remoteAddress: string,
    readonly remotePort: number,
    readonly localAddress: string,
    readonly localPort: number,
    /** Arrived over TLS (HTTPS, or a TLS proxy in front): its Via says WSS. */
    readonly secure: boolean,
  ) {
    this.protocol = secure ? 'WSS' : 'WS';
  }
}

export class SipWebSocketTransport {
  readonly limits: ParserLimits;
  readonly #options: Required<Omit<WebSocketTransportOptions, 'limits' | 'name' | 'host' | 'port'>> & { name?: string };
  #advertised: { host: string; port: number };
  readonly #handlers: TransportHandlers;
  readonly #server: WebSocketServer;
  readonly #connections = new Map<string, WebSocketConnection>();
  readonly #perSource = new Map<string, number>();
  readonly #closedListeners = new Set<(connection: TcpConnection) => void>();
  readonly #pinger: NodeJS.Timeout | undefined;
  #closing = false;

  constructor(options: WebSocketTransportOptions, handlers: TransportHandlers) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#handlers = handlers;
    this.#advertised = { host: options.host, port: options.port };
    this.#options = {
      name: options.name,
      maxConnections: options.maxConnections ?? 1024,
      maxConnectionsPerSource: options.maxConnectionsPerSource ?? 32,
      pingIntervalSeconds: options.pingIntervalSeconds ?? 30,
      secure: options.secure ?? false,
      maxWriteBuffer: options.maxWriteBuffer ?? 1 << 20,
      compactHeaders: options.compactHeaders ?? false,
    };
    this.#server = new WebSocketServer({
      noServer: true,
      maxPayload: this.limits.maxMessageSize,
      perMessageDeflate: false,
      // RFC 7118 §4: the server must pick `sip` or refuse (ws answers 400 without a Sec-WebSocket-Protocol it accepts).
      handleProtocols: (offered) => (offered.has(SIP_WEBSOCKET_PROTOCOL) ? SIP_WEBSOCKET_PROTOCOL : false),
    });
    if (this.#options.pingIntervalSeconds > 0) {
      this.#pinger = setInterval(() => this.#ping(), this.#options.pingIntervalSeconds * 1000);
      this.#pinger.unref();
    }
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Told of each connection that closed (after the transaction layer): drop what was bound to it. */
  onClosed(listener: (connection: TcpConnection) => void): () => void {
    this.#closedListeners.add(listener);
    return () => this.#closedListeners.delete(listener);
  }

  /** The browser's open connection from host:port, if there is one. */
  openConnection(host: string, port: number): TcpConnection | undefined {
    const found = this.#connections.get(`${normalizeAddress(host)}:${port}`);
    return found && !found.closed ? found : undefined;
  }

  /** Host and port for a Via or Contact sent over a WebSocket. */
  localAddress(): { host: string; port: number } {
    return { ...this.#advertised };
  }

  /** The HTTP server's address, once it listens (it starts after SIP): what Via and Contact name. */
  advertise(host: string, port: number): void {
    this.#advertised = { host, port };
  }

  /**
   * An HTTP upgrade for the SIP path. Refused with an HTTP answer when the client offers no `sip`
   * subprotocol or a bound is reached; never throws (the caller is an 'upgrade' listener).
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const remote = normalizeAddress(request.socket.remoteAddress ?? '');
    const offered = String(request.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((item) => item.trim().toLowerCase());
    const refusal = this.#closing
      ? [503, 'Service Unavailable']
      : !offered.includes(SIP_WEBSOCKET_PROTOCOL)
        ? [400, 'Bad Request']
        : this.#connections.size >= this.#options.maxConnections || (this.#perSource.get(remote) ?? 0) >= this.#options.maxConnectionsPerSource
          ? [503, 'Service Unavailable']
          : undefined;
    if (refusal) {
      this.#handlers.onDrop?.(refusal[0] === 400 ? 'WebSocket upgrade without the sip subprotocol' : 'too many SIP WebSocket connections', { transport: 'WS', address: remote, port: request.socket.remotePort ?? 0 }, Number(refusal[0]));
      socket.end(`HTTP/1.1 ${refusal[0]} ${refusal[1]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    this.#perSource.set(remote, (this.#perSource.get(remote) ?? 0) + 1);
    try {
      this.#server.handleUpgrade(request, socket, head, (ws) => this.#accept(ws, request, remote));
    } catch {
      this.#release(remote);
      socket.destroy();
    }
  }

  /** Sends a request or response over the connection the destination names, else the one open to its address and port. */
  async send(message: SipMessage, dest: Destination): Promise<TcpConnection | undefined> {
    const data = message.serialize(this.#options.compactHeaders);
    if (data.length > this.limits.maxMessageSize) throw new Error('message too large to send');
    const named = dest.connection instanceof WebSocketConnection && !dest.connection.closed ? dest.connection : undefined;
    const connection = named ?? this.#connections.get(`${normalizeAddress(dest.host)}:${dest.port}`);
    // A browser takes no connections: without its own, it cannot be reached.
    if (!connection || connection.closed) throw new Error(`no WebSocket connection to ${dest.host}:${dest.port}`);
    if (connection.socket.bufferedAmount + data.length > this.#options.maxWriteBuffer) {
      connection.socket.terminate();
      throw new Error('WebSocket write buffer full');
    }
    // Text frames: SIP is UTF-8 text and browsers' clients expect strings (RFC 7118 §5.1 allows either).
    await new Promise<void>((resolve, reject) => connection.socket.send(data.toString('utf8'), { binary: false }, (err) => (err ? reject(err) : resolve())));
    return connection;
  }

  async sendResponse(response: SipResponse, source?: Source): Promise<void> {
    const via = response.topVia();
    if (!via) throw new Error('response without Via');
    await this.send(response, responseDestination(via, source));
  }

  async close(): Promise<void> {
    this.#closing = true;
    if (this.#pinger) clearInterval(this.#pinger);
    for (const connection of this.#connections.values()) connection.socket.terminate();
    this.#connections.clear();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(ws: WebSocket, request: IncomingMessage, remote: string): void {
    const raw = request.socket;
    const secure = this.#options.secure || ('encrypted' in raw && raw.encrypted === true);
    const connection = new WebSocketConnection(ws, remote, raw.remotePort ?? 0, normalizeAddress(raw.localAddress ?? ''), raw.localPort ?? 0, secure);
    const key = `${connection.remoteAddress}:${connection.remotePort}`;
    this.#connections.get(key)?.socket.terminate();
    this.#connections.set(key, connection);
    const source: Source = { transport: secure ? 'WSS' : 'WS', address: remote, port: connection.remotePort, connection, ...(this.#options.name === undefined ? {} : { listener: this.#options.name }) };
    ws.on('pong', () => (connection.alive = true));
    ws.on('message', (data: RawData, isBinary: boolean) => this.#receive(toBuffer(data), source, isBinary));
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      connection.closed = true;
      if (this.#connections.get(key) === connection) this.#connections.delete(key);
      this.#release(remote);
      this.#handlers.onConnectionClosed?.(connection);
      for (const listener of this.#closedListeners) {
        try {
          listener(connection);
        } catch {
          // One listener's failure must not keep the others from cleaning up.
        }
      }
    });
  }

  #receive(data: Buffer, source: Source, isBinary: boolean): void {
    // Keep-alive some clients send (a CRLF, as on TCP): nothing to parse.
    if (!isBinary && data.length <= 4 && /^[\r\n]*$/.test(data.toString('latin1'))) return;
    const result = parseMessage(data, this.limits, false);
    if (!result.ok) {
      if (result.canRespond && result.request && result.request.method !== 'ACK') {
        const status = result.status ?? 400;
        const response = createResponse(result.request, status, status === 400 ? `Bad Request (${result.reason})` : undefined);
        stampVia(response, source, false, true);
        this.sendResponse(response, source).catch(() => undefined);
        this.#handlers.onDrop?.(result.reason, source, status);
      } else this.#handlers.onDrop?.(result.reason, source);
      return;
    }
    const message = result.message;
    // The Via names a `.invalid` host: received and rport say where the request really came from.
    if (message.isRequest()) stampVia(message, source, false, false);
    try {
      this.#handlers.onMessage?.(message, source);
    } catch (err) {
      this.#handlers.onDrop?.(`handler error: ${(err as Error).message}`, source);
    }
  }

  #ping(): void {
    for (const connection of this.#connections.values()) {
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
  }

  #release(remote: string): void {
    const left = (this.#perSource.get(remote) ?? 1) - 1;
    if (left <= 0) this.#perSource.delete(remote);
    else this.#perSource.set(remote, left);
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && /^\d+\.\d+\.\d+\.\d+$/.test(address.slice(7)) ? address.slice(7) : address;
}
