/**
 * SIP transports (RFC 3261 §18): UDP (node:dgram) and TCP (node:net) on one bind address, with
 * parsed messages delivered to a callback together with where they came from. On receipt of a
 * request the top Via gets `received` (and `rport`, RFC 3581); responses are routed back per
 * §18.2.2: over the request's connection for TCP, to the source address and port for UDP.
 * Everything a peer controls is bounded: message size, connections, buffered bytes, idle time.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { createResponse, type SipMessage, type SipResponse, type Via } from './message.ts';
import { DEFAULT_LIMITS, StreamFramer, parseMessage, type ParserLimits } from './parser.ts';

export type TransportProtocol = 'UDP' | 'TCP';

export interface TcpConnection {
  readonly id: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localAddress: string;
  readonly localPort: number;
  /** True once the socket is closed; sending on it then fails. */
  readonly closed: boolean;
}

/** Where a message came from. */
export interface Source {
  transport: TransportProtocol;
  address: string;
  port: number;
  /** The TCP connection it arrived on. */
  connection?: TcpConnection;
  /** The name of the listening transport that received it (several may listen: SipTransportSet). */
  listener?: string;
}

/** Where to send. With a connection (TCP), that connection is used while it is open. */
export interface Destination {
  transport: TransportProtocol;
  host: string;
  port: number;
  connection?: TcpConnection;
  /** The listening transport to send from (its socket, its address in Via); default: the first of the protocol. */
  listener?: string;
}

/** What the transaction layer needs of a transport: one listener (SipTransport) or several (SipTransportSet). */
export interface SipSender {
  send(message: SipMessage, dest: Destination): Promise<TcpConnection | undefined>;
  sendResponse(response: SipResponse, source?: Source): Promise<void>;
  /** Host and port to write in a Via or Contact for this protocol (from this listener, when named). */
  localAddress(transport: TransportProtocol, listener?: string): { host: string; port: number };
}

export interface TransportOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** UDP port (default 5060; 0 for an ephemeral port; false for no UDP). */
  udpPort?: number | false;
  /** TCP port (default: the port UDP is bound to; 0 for an ephemeral port of its own; false for no TCP). */
  tcpPort?: number | false;
  /** Host written in Via and Contact (default: the bind address; set for NAT). */
  publicHost?: string;
  limits?: Partial<ParserLimits>;
  /**
   * Live TCP connections, in and out (default 1024). At the limit a new incoming connection takes the
   * place of the oldest incoming one that has not sent a whole message yet; with none, it is refused.
   */
  maxConnections?: number;
  /** Incoming TCP connections at once from one address (default 32): one host cannot take them all. */
  maxConnectionsPerSource?: number;
  /** A TCP connection idle this long is closed (default 120 s). */
  idleTimeoutMs?: number;
  /** An incoming TCP connection that has not sent a whole SIP message in this time is closed (default 10 s). */
  firstMessageTimeoutMs?: number;
  /** Unsent bytes on a connection beyond which it is closed (default 1 MiB). */
  maxWriteBuffer?: number;
  /** Act as if every request asked for rport (Asterisk's force_rport, default true). */
  forceRport?: boolean;
  /** Written into the Source of what arrives here, so that answers leave from the same socket. */
  name?: string;
}

export interface TransportHandlers {
  /** A parsed message, requests with their top Via stamped with received/rport. */
  onMessage?(message: SipMessage, source: Source): void;
  /** Something dropped or answered with an error: one log line's worth. */
  onDrop?(reason: string, source: Source, answeredWith?: number): void;
  /** A TCP connection closed (the transaction layer may fail transactions bound to it). */
  onConnectionClosed?(connection: TcpConnection): void;
}

class Connection implements TcpConnection {
  private static next = 1;
  readonly id = Connection.next++;
  readonly framer: StreamFramer;
  closed = false;
  /** Accepted here (not connected out). */
  inbound = false;
  /** A whole SIP message arrived on it: no longer a silent connection that may be evicted. */
  heard = false;
  firstMessageTimer: NodeJS.Timeout | undefined;
  constructor(
    readonly socket: net.Socket,
    readonly remoteAddress: string,
    readonly remotePort: number,
    readonly localAddress: string,
    readonly localPort: number,
    limits: ParserLimits,
  ) {
    this.framer = new StreamFramer(limits);
  }
}

export class SipTransport implements SipSender {
  handlers: TransportHandlers = {};
  readonly limits: ParserLimits;
  private readonly options: Required<Omit<TransportOptions, 'limits' | 'publicHost' | 'name'>> & { publicHost?: string; name?: string };
  private udp?: dgram.Socket;
  private tcp?: net.Server;
  private readonly connections = new Map<string, Connection>();
  private readonly connecting = new Map<string, Promise<Connection>>();
  /** Incoming connections by remote address, for maxConnectionsPerSource. */
  private readonly inboundPerSource = new Map<string, number>();
  private closing = false;

  constructor(options: TransportOptions = {}, handlers: TransportHandlers = {}) {
    this.handlers = handlers;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.options = {
      host: options.host ?? '127.0.0.1',
      udpPort: options.udpPort ?? 5060,
      tcpPort: options.tcpPort ?? (options.udpPort === false ? 5060 : -1),
      maxConnections: options.maxConnections ?? 1024,
      maxConnectionsPerSource: options.maxConnectionsPerSource ?? 32,
      idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
      firstMessageTimeoutMs: options.firstMessageTimeoutMs ?? 10_000,
      maxWriteBuffer: options.maxWriteBuffer ?? 1 << 20,
      forceRport: options.forceRport ?? true,
      publicHost: options.publicHost,
      name: options.name,
    };
  }

  /** Binds the sockets. */
  async start(): Promise<void> {
    const { udpPort, tcpPort } = this.options;
    // Port 0 with TCP following UDP: the port the system chose for UDP may be taken for TCP (a busy
    // machine); choosing again is what "any free port" means, so a few tries before failing.
    const retries = udpPort === 0 && tcpPort === -1 ? 4 : 0;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#open();
        return;
      } catch (error) {
        this.udp?.close();
        this.udp = undefined;
        if (attempt >= retries || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      }
    }
  }

  async #open(): Promise<void> {
    const { host, udpPort, tcpPort } = this.options;
    if (udpPort !== false) {
      const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
      socket.on('message', (data, rinfo) => this.receiveDatagram(data, rinfo));
      socket.on('error', () => {
        /* ICMP errors and the like: datagram sends report their own failure */
      });
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(udpPort, host, () => {
          socket.off('error', reject);
          resolve();
        });
      });
      this.udp = socket;
    }
    if (tcpPort !== false) {
      // unset: the port UDP got (5060, or the ephemeral port chosen for UDP)
      const port = tcpPort === -1 ? (this.udp?.address().port ?? 5060) : tcpPort;
      // No server.maxConnections: accept() counts, and may evict a silent connection to make room.
      const server = net.createServer((socket) => this.accept(socket));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', () => undefined);
      this.tcp = server;
    }
  }

  /** The bound port of a transport (undefined when not started). */
  port(transport: TransportProtocol): number | undefined {
    if (transport === 'UDP') return this.udp?.address().port;
    const a = this.tcp?.address();
    return a && typeof a === 'object' ? a.port : undefined;
  }

  /** Host and port to write in a Via or Contact for this transport. */
  localAddress(transport: TransportProtocol): { host: string; port: number } {
    return { host: this.advertisedHost(), port: this.port(transport) ?? 5060 };
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /**
   * Sends a message. Resolves with the TCP connection used (undefined for UDP); rejects when the
   * transport cannot (no socket, connection refused or closed, message too large).
   */
  async send(message: SipMessage, dest: Destination): Promise<TcpConnection | undefined> {
    const data = message.serialize();
    if (data.length > this.limits.maxMessageSize) throw new Error('message too large to send');
    return this.sendRaw(data, dest);
  }

  async sendRaw(data: Buffer, dest: Destination): Promise<TcpConnection | undefined> {
    if (this.closing) throw new Error('transport closed');
    if (dest.transport === 'UDP') {
      const udp = this.udp;
      if (!udp) throw new Error('no UDP transport');
      await new Promise<void>((resolve, reject) => udp.send(data, dest.port, dest.host, (err) => (err ? reject(err) : resolve())));
      return undefined;
    }
    let conn = dest.connection instanceof Connection && !dest.connection.closed ? dest.connection : undefined;
    conn ??= await this.connect(dest.host, dest.port);
    this.write(conn, data);
    return conn;
  }

  /**
   * Sends a response where §18.2.2 / RFC 3581 say: for TCP over the request's connection if still
   * open (else a new one to received / sent-by); for UDP to `received`:`rport` (or the sent-by port).
   */
  async sendResponse(response: SipResponse, source?: Source): Promise<void> {
    const via = response.topVia();
    if (!via) throw new Error('response without Via');
    await this.send(response, responseDestination(via, source));
  }

  /** The host for Via and Contact: publicHost, else the bind address, else (wildcard bind) a local interface address. */
  private advertisedHost(): string {
    if (this.options.publicHost) return this.options.publicHost;
    const host = this.options.host;
    if (host !== '0.0.0.0' && host !== '::') return host;
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) if (!a.internal && a.family === 'IPv4') return a.address;
    }
    return '127.0.0.1';
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const conn of this.connections.values()) conn.socket.destroy();
    this.connections.clear();
    const udp = this.udp;
    const tcp = this.tcp;
    this.udp = undefined;
    this.tcp = undefined;
    await Promise.all([
      udp ? new Promise<void>((resolve) => udp.close(() => resolve())) : undefined,
      tcp ? new Promise<void>((resolve) => tcp.close(() => resolve())) : undefined,
    ]);
  }

  // ---- receiving

  private receiveDatagram(data: Buffer, rinfo: dgram.RemoteInfo): void {
    const source: Source = { transport: 'UDP', address: rinfo.address, port: rinfo.port, ...(this.options.name === undefined ? {} : { listener: this.options.name }) };
    // keep-alive: a datagram of CRLFs only (RFC 5626 §4.4.1 uses STUN; CRLF is common practice)
    let i = 0;
    while (i < data.length && (data[i] === 0x0d || data[i] === 0x0a || data[i] === 0x00)) i++;
    if (i === data.length) return;
    this.receive(data, source, false);
  }

  private receive(data: Buffer, source: Source, stream: boolean): void {
    const result = parseMessage(data, this.limits, stream);
    if (!result.ok) {
      if (result.canRespond && result.request && result.request.method !== 'ACK') {
        const status = result.status ?? 400;
        const response = createResponse(result.request, status, status === 400 ? `Bad Request (${result.reason})` : undefined);
        stampVia(response, source, this.options.forceRport, true);
        this.sendResponse(response, source).catch(() => undefined);
        this.handlers.onDrop?.(result.reason, source, status);
      } else this.handlers.onDrop?.(result.reason, source);
      return;
    }
    const message = result.message;
    if (message.isRequest()) stampVia(message, source, this.options.forceRport, false);
    try {
      this.handlers.onMessage?.(message, source);
    } catch (err) {
      this.handlers.onDrop?.(`handler error: ${(err as Error).message}`, source);
    }
  }

  // ---- TCP

  private accept(socket: net.Socket): void {
    socket.on('error', () => undefined);
    const remote = normalizeAddress(socket.remoteAddress ?? '');
    const fromSource = this.inboundPerSource.get(remote) ?? 0;
    const refusal = this.closing
      ? undefined
      : fromSource >= this.options.maxConnectionsPerSource
        ? 'too many TCP connections from this address'
        : this.connections.size >= this.options.maxConnections && !this.evictSilentConnection()
          ? 'too many TCP connections'
          : undefined;
    if (this.closing || refusal) {
      if (refusal) this.handlers.onDrop?.(refusal, { transport: 'TCP', address: remote, port: socket.remotePort ?? 0 });
      socket.destroy();
      return;
    }
    const conn = new Connection(socket, remote, socket.remotePort ?? 0, normalizeAddress(socket.localAddress ?? ''), socket.localPort ?? 0, this.limits);
    conn.inbound = true;
    this.inboundPerSource.set(remote, fromSource + 1);
    conn.firstMessageTimer = setTimeout(() => socket.destroy(), this.options.firstMessageTimeoutMs);
    conn.firstMessageTimer.unref();
    socket.once('close', () => {
      clearTimeout(conn.firstMessageTimer);
      const left = (this.inboundPerSource.get(remote) ?? 1) - 1;
      if (left <= 0) this.inboundPerSource.delete(remote);
      else this.inboundPerSource.set(remote, left);
    });
    this.attach(conn);
  }

  /** Closes the oldest incoming connection that has not sent a whole message; false when there is none. */
  private evictSilentConnection(): boolean {
    for (const [key, conn] of this.connections) {
      if (!conn.inbound || conn.heard) continue;
      this.connections.delete(key);
      conn.socket.destroy();
      return true;
    }
    return false;
  }

  private attach(conn: Connection): void {
    const key = `${conn.remoteAddress}:${conn.remotePort}`;
    const previous = this.connections.get(key);
    if (previous && previous !== conn) previous.socket.destroy();
    this.connections.set(key, conn);
    const socket = conn.socket;
    socket.setNoDelay(true);
    socket.setTimeout(this.options.idleTimeoutMs, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      const { frames, pings, error } = conn.framer.push(chunk);
      const source: Source = { transport: 'TCP', address: conn.remoteAddress, port: conn.remotePort, connection: conn, ...(this.options.name === undefined ? {} : { listener: this.options.name }) };
      for (let p = 0; p < pings; p++) this.write(conn, Buffer.from('\r\n'));
      if (frames.length > 0 && !conn.heard) {
        conn.heard = true;
        clearTimeout(conn.firstMessageTimer);
      }
      for (const frame of frames) {
        if (conn.closed) return;
        this.receive(frame, source, true);
      }
      if (error) {
        this.handlers.onDrop?.(`TCP stream: ${error}`, source);
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      conn.closed = true;
      if (this.connections.get(key) === conn) this.connections.delete(key);
      this.handlers.onConnectionClosed?.(conn);
    });
  }

  private write(conn: Connection, data: Buffer): void {
    if (conn.closed) throw new Error('connection closed');
    if (conn.socket.writableLength + data.length > this.options.maxWriteBuffer) {
      conn.socket.destroy();
      throw new Error('connection write buffer full');
    }
    conn.socket.write(data);
  }

  private async connect(host: string, port: number): Promise<Connection> {
    const address = normalizeAddress(host);
    const existing = this.connections.get(`${address}:${port}`);
    if (existing && !existing.closed) return existing;
    const key = `${address}:${port}`;
    const pending = this.connecting.get(key);
    if (pending) return pending;
    if (this.connections.size + this.connecting.size >= this.options.maxConnections) throw new Error('too many connections');
    const promise = new Promise<Connection>((resolve, reject) => {
      const socket = net.connect({ host, port, localAddress: net.isIP(this.options.host) && this.options.host !== '0.0.0.0' && this.options.host !== '::' ? this.options.host : undefined });
      const timer = setTimeout(() => socket.destroy(new Error('connect timeout')), 10_000);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        if (this.closing) {
          socket.destroy();
          reject(new Error('transport closed'));
          return;
        }
        const conn = new Connection(socket, normalizeAddress(socket.remoteAddress ?? address), socket.remotePort ?? port, normalizeAddress(socket.localAddress ?? ''), socket.localPort ?? 0, this.limits);
        this.attach(conn);
        resolve(conn);
      });
    });
    this.connecting.set(key, promise);
    try {
      return await promise;
    } finally {
      this.connecting.delete(key);
    }
  }
}

function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/**
 * RFC 3261 §18.2.1 and RFC 3581 §4: add `received` when the source address differs from the
 * sent-by host (always with rport), and fill `rport` with the source port when asked for.
 */
export function stampVia(message: SipMessage, source: Source, forceRport: boolean, lenient: boolean): void {
  const via = message.topVia();
  if (!via) return;
  const asked = via.rport === null;
  const wantsRport = asked || (forceRport && source.transport === 'UDP');
  if (wantsRport && !asked) forcedRport.add(message);
  let changed = false;
  if (via.host !== source.address || wantsRport) {
    via.params.set('received', source.address);
    via.received = source.address;
    changed = true;
  }
  if (wantsRport) {
    via.params.set('rport', String(source.port));
    via.rport = source.port;
    changed = true;
  }
  if (changed || lenient) message.setTopVia(via);
}

/** Requests whose rport was filled in without the Via asking for it (force_rport). */
const forcedRport = new WeakSet<SipMessage>();

/**
 * Undoes a forced rport (an endpoint with Asterisk's `force_rport=no`): responses then go to the
 * port the Via names (RFC 3261 §18.2.2) unless the sender asked for rport itself. Call before any
 * response to the request is built.
 */
export function unforceRport(message: SipMessage): void {
  if (!forcedRport.has(message)) return;
  forcedRport.delete(message);
  const via = message.topVia();
  if (!via) return;
  via.params.delete('rport');
  delete via.rport;
  message.setTopVia(via);
}

/** Where a response with this top Via goes (RFC 3261 §18.2.2, RFC 3581 §4). */
export function responseDestination(via: Via, source?: Source): Destination {
  // the transport the request came over wins over what its Via claims
  const transport: TransportProtocol = source?.transport ?? (via.transport === 'TCP' ? 'TCP' : 'UDP');
  // Answered from the listener that received the request: a phone expects the port it sent to.
  const from = source?.listener === undefined ? {} : { listener: source.listener };
  if (transport === 'TCP' && source?.connection && !source.connection.closed) {
    return { transport, host: source.address, port: source.port, connection: source.connection, ...from };
  }
  const defaultPort = via.port ?? 5060;
  // rport filled in on receipt (asked for, or forced): back to the source, whatever else the Via says
  if (transport === 'UDP' && typeof via.rport === 'number' && via.received) return { transport, host: via.received, port: via.rport, ...from };
  const maddr = via.params.get('maddr');
  if (maddr) return { transport, host: maddr, port: defaultPort, ...from };
  return { transport, host: via.received ?? via.host, port: defaultPort, ...from };
}

