/**
 * The connections of one stream transport (RFC 3261 §18 over TCP, or over TLS: the framing is the
 * same, RFC 3261 §18.3), in and out, keyed by remote address and port so that a request to a peer
 * reuses the connection it came on (a phone behind NAT can only be reached that way; RFC 5626's
 * flow reuse is what pjsip effectively does). Everything a peer controls is bounded: connections
 * in total and per source address (those still in their TLS handshake included), bytes buffered
 * in the framer and unsent, idle time, and the time until a whole first message.
 */
import net from 'node:net';
import { StreamFramer, type ParserLimits } from './parser.ts';
import type { Source, TcpConnection } from './transport-types.ts';

export type StreamProtocol = 'TCP' | 'TLS';

/** What a keep-alive writes: a double CRLF, as Asterisk's transport management sends. */
const KEEP_ALIVE = Buffer.from('\r\n\r\n');

export interface StreamLimits {
  maxConnections: number;
  maxConnectionsPerSource: number;
  idleTimeoutMs: number;
  firstMessageTimeoutMs: number;
  maxWriteBuffer: number;
}

export interface StreamEvents {
  /** One framed message (or a frame the parser will reject) from a connection. */
  frame(data: Buffer, source: Source): void;
  drop(reason: string, source: Source): void;
  closed(connection: TcpConnection): void;
}

export class Connection implements TcpConnection {
  private static next = 1;
  readonly id = Connection.next++;
  readonly framer: StreamFramer;
  closed = false;
  /** Accepted here (not connected out). */
  inbound = false;
  /** A whole SIP message arrived on it: no longer a silent connection that may be evicted. */
  heard = false;
  firstMessageTimer: NodeJS.Timeout | undefined;
  /** When bytes last arrived: the idle limit counts from it (our keep-alives are no sign of life from the peer). */
  lastReceivedAt = Date.now();
  constructor(
    readonly protocol: StreamProtocol,
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

/** An incoming socket let in by the bounds, before it carries SIP (a TLS one still shaking hands). */
export interface Admission {
  /** The accepted TCP socket. */
  readonly socket: net.Socket;
  readonly remote: string;
  readonly timer: NodeJS.Timeout;
  /**
   * Closes the connection through its outermost socket: the TLS socket once one wraps `socket`
   * (destroying a socket from under its TLS wrapper can crash node), else `socket`.
   */
  close: () => void;
}

export class StreamConnections {
  readonly #connections = new Map<string, Connection>();
  readonly #connecting = new Map<string, Promise<Connection>>();
  /** Incoming sockets by remote address (admitted, handshaking or carrying SIP), for maxConnectionsPerSource. */
  readonly #inboundPerSource = new Map<string, number>();
  /** Admitted sockets not adopted yet (a TLS handshake in progress): they count toward maxConnections. */
  readonly #pending = new Set<Admission>();
  /** Every connection made here, open or not: a Destination may only name one of these. */
  readonly #made = new WeakSet<Connection>();
  #closing = false;

  constructor(
    readonly protocol: StreamProtocol,
    private readonly limits: StreamLimits,
    private readonly parserLimits: ParserLimits,
    private readonly events: StreamEvents,
    private readonly listener: string | undefined,
  ) {}

  get size(): number {
    return this.#connections.size;
  }

  /** Whether the connection is one of this transport's (not another protocol's or listener's). */
  owns(connection: Connection): boolean {
    return this.#made.has(connection);
  }

  /** Admitted sockets that have not become connections yet (TLS handshakes in flight). */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /**
   * Lets an incoming socket in, or refuses it (destroyed, undefined) when its address has too many
   * or all are taken and no silent one can be evicted. The first-message timer starts now, so a
   * slow TLS handshake is bounded by it too.
   */
  admit(socket: net.Socket): Admission | undefined {
    socket.on('error', () => undefined);
    const remote = normalizeAddress(socket.remoteAddress ?? '');
    const fromSource = this.#inboundPerSource.get(remote) ?? 0;
    const refusal = this.#closing
      ? undefined
      : fromSource >= this.limits.maxConnectionsPerSource
        ? `too many ${this.protocol} connections from this address`
        : this.#connections.size + this.#pending.size >= this.limits.maxConnections && !this.#evictSilentConnection()
          ? `too many ${this.protocol} connections`
          : undefined;
    if (this.#closing || refusal) {
      if (refusal) this.events.drop(refusal, this.#source(remote, socket.remotePort ?? 0));
      socket.destroy();
      return undefined;
    }
    this.#inboundPerSource.set(remote, fromSource + 1);
    const timer = setTimeout(() => admission.close(), this.limits.firstMessageTimeoutMs);
    timer.unref();
    const admission: Admission = { socket, remote, timer, close: () => socket.destroy() };
    this.#pending.add(admission);
    socket.once('close', () => {
      clearTimeout(timer);
      this.#pending.delete(admission);
      const left = (this.#inboundPerSource.get(remote) ?? 1) - 1;
      if (left <= 0) this.#inboundPerSource.delete(remote);
      else this.#inboundPerSource.set(remote, left);
    });
    return admission;
  }

  /** An admitted socket now carries SIP: over `stream` (the socket itself for TCP, its TLS socket). */
  adopt(admission: Admission, stream: net.Socket): Connection | undefined {
    this.#pending.delete(admission);
    if (this.#closing || admission.socket.destroyed) {
      admission.close();
      return undefined;
    }
    const raw = admission.socket;
    const conn = new Connection(this.protocol, stream, admission.remote, raw.remotePort ?? 0, normalizeAddress(raw.localAddress ?? ''), raw.localPort ?? 0, this.parserLimits);
    conn.inbound = true;
    conn.firstMessageTimer = admission.timer;
    this.#attach(conn);
    return conn;
  }

  /** Forgets an admitted socket that will not be adopted (a failed handshake, a refused certificate); it is closed. */
  reject(admission: Admission, reason: string): void {
    this.#pending.delete(admission);
    this.events.drop(reason, this.#source(admission.remote, admission.socket.remotePort ?? 0));
    admission.close();
  }

  /** The open connection to host:port, if there is one. */
  find(host: string, port: number): Connection | undefined {
    const found = this.#connections.get(`${normalizeAddress(host)}:${port}`);
    return found && !found.closed ? found : undefined;
  }

  /** An open connection to host:port, or a new one through `dial` (which resolves once it can carry SIP). */
  async connect(host: string, port: number, dial: () => Promise<net.Socket>): Promise<Connection> {
    const address = normalizeAddress(host);
    const key = `${address}:${port}`;
    const existing = this.#connections.get(key);
    if (existing && !existing.closed) return existing;
    const pending = this.#connecting.get(key);
    if (pending) return pending;
    if (this.#connections.size + this.#connecting.size + this.#pending.size >= this.limits.maxConnections) throw new Error('too many connections');
    const promise = dial().then((socket) => {
      if (this.#closing) {
        socket.destroy();
        throw new Error('transport closed');
      }
      const conn = new Connection(this.protocol, socket, normalizeAddress(socket.remoteAddress ?? address), socket.remotePort ?? port, normalizeAddress(socket.localAddress ?? ''), socket.localPort ?? 0, this.parserLimits);
      this.#attach(conn);
      return conn;
    });
    this.#connecting.set(key, promise);
    try {
      return await promise;
    } finally {
      this.#connecting.delete(key);
    }
  }

  write(conn: Connection, data: Buffer): void {
    if (conn.closed) throw new Error('connection closed');
    if (conn.socket.writableLength + data.length > this.limits.maxWriteBuffer) {
      conn.socket.destroy();
      throw new Error('connection write buffer full');
    }
    conn.socket.write(data);
  }

  /**
   * A CRLF keep-alive (RFC 5626 §3.5.1's ping, what pjsip sends) on every connection that carries
   * SIP: ours, and incoming ones that have sent a whole message — a silent connection is never
   * kept open by it (the first-message timer still closes it). A connection whose peer has sent
   * nothing for the idle limit is closed instead: keep-alives are no sign of life from the peer.
   */
  keepAlive(): void {
    const now = Date.now();
    for (const conn of this.#connections.values()) {
      if (conn.closed || (conn.inbound && !conn.heard)) continue;
      // Our writes hold the socket's own idle timer off: the peer's silence is judged here.
      if (now - conn.lastReceivedAt >= this.limits.idleTimeoutMs) {
        conn.socket.destroy();
        continue;
      }
      try {
        this.write(conn, KEEP_ALIVE);
      } catch {
        // closed for a full write buffer: its close event cleans up
      }
    }
  }

  closeAll(): void {
    this.#closing = true;
    for (const conn of this.#connections.values()) conn.socket.destroy();
    this.#connections.clear();
    for (const admission of this.#pending) admission.close();
    this.#pending.clear();
  }

  /** Closes the oldest incoming connection that has not sent a whole message; false when there is none. */
  #evictSilentConnection(): boolean {
    for (const [key, conn] of this.#connections) {
      if (!conn.inbound || conn.heard) continue;
      this.#connections.delete(key);
      conn.socket.destroy();
      return true;
    }
    return false;
  }

  #source(address: string, port: number, connection?: Connection): Source {
    return { transport: this.protocol, address, port, ...(connection ? { connection } : {}), ...(this.listener === undefined ? {} : { listener: this.listener }) };
  }

  #attach(conn: Connection): void {
    this.#made.add(conn);
    const key = `${conn.remoteAddress}:${conn.remotePort}`;
    const previous = this.#connections.get(key);
    if (previous && previous !== conn) previous.socket.destroy();
    this.#connections.set(key, conn);
    const socket = conn.socket;
    socket.setNoDelay(true);
    // Idle: nothing in or out for the limit. Our keep-alives hold this timer off, so keepAlive()
    // closes a connection whose peer has sent nothing for the limit itself.
    socket.setTimeout(this.limits.idleTimeoutMs, () => socket.destroy());
    const source = this.#source(conn.remoteAddress, conn.remotePort, conn);
    socket.on('data', (chunk: Buffer) => {
      conn.lastReceivedAt = Date.now();
      const { frames, pings, error } = conn.framer.push(chunk);
      for (let p = 0; p < pings; p++) {
        try {
          this.write(conn, Buffer.from('\r\n'));
        } catch {
          return; // closed for a full write buffer
        }
      }
      if (frames.length > 0 && !conn.heard) {
        conn.heard = true;
        clearTimeout(conn.firstMessageTimer);
      }
      for (const frame of frames) {
        if (conn.closed) return;
        this.events.frame(frame, source);
      }
      if (error) {
        this.events.drop(`${this.protocol} stream: ${error}`, source);
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      conn.closed = true;
      clearTimeout(conn.firstMessageTimer);
      if (this.#connections.get(key) === conn) this.#connections.delete(key);
      this.events.closed(conn);
    });
  }
}

function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}
