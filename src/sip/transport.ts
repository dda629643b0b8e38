/**
 * SIP transports (RFC 3261 §18): UDP (node:dgram), TCP (node:net) and TLS (node:tls) on one bind
 * address, with parsed messages delivered to a callback together with where they came from. On
 * receipt of a request the top Via gets `received` (and `rport`, RFC 3581); responses are routed
 * back per §18.2.2: over the request's connection for TCP and TLS, to the source address and port
 * for UDP. Everything a peer controls is bounded: message size, connections (TLS handshakes in
 * progress included), buffered bytes, idle time; the stream side is in stream-connections.ts.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import tls from 'node:tls';
import { applyOutboundNat, type OutboundNat } from './outbound-nat.ts';
import { createResponse, type SipMessage, type SipResponse, type Via } from './message.ts';
import { DEFAULT_LIMITS, parseMessage, type ParserLimits } from './parser.ts';
import { Connection, StreamConnections, type StreamProtocol } from './stream-connections.ts';
import { TlsMaterial, type TlsSettings } from './tls-material.ts';

export type { Destination, Source, TcpConnection, TransportProtocol } from './transport-types.ts';
import type { Destination, Source, TcpConnection, TransportProtocol } from './transport-types.ts';

/** TCP and TLS: connection-oriented, reliable (no retransmissions, responses over the request's connection). */
export function isStreamProtocol(protocol: TransportProtocol): protocol is StreamProtocol {
  return protocol === 'TCP' || protocol === 'TLS';
}

/** A browser's WebSocket (WS, or WS over TLS): the same transport to Patchbay, whatever a Via or Contact names. */
export function isWebSocketProtocol(protocol: TransportProtocol): protocol is 'WS' | 'WSS' {
  return protocol === 'WS' || protocol === 'WSS';
}

/** Whether a request over `transport` may go over this open connection (a browser's WS connection serves WS and WSS alike). */
export function connectionServes(connection: TcpConnection | undefined, transport: TransportProtocol): connection is TcpConnection {
  if (!connection || connection.closed) return false;
  return connection.protocol === transport || (isWebSocketProtocol(transport) && isWebSocketProtocol(connection.protocol));
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
  /** TLS port (default false: no TLS; 0 for an ephemeral port). Needs `tls`. */
  tlsPort?: number | false;
  /** Certificates and policy of the TLS side (listening needs a certificate; sending TLS needs this). */
  tls?: TlsSettings;
  /** TLS handshakes in progress at once on the listener (default 64); a connection beyond them is closed at once. */
  maxTlsHandshakes?: number;
  /** Host written in Via and Contact (default: the bind address; set for NAT). */
  publicHost?: string;
  /**
   * External addresses written in what is sent to destinations outside the local networks
   * (outbound-nat.ts; pjsip.conf `local_net`, `external_*`): messages are written with the local
   * addresses and rewritten per destination when they leave.
   */
  nat?: OutboundNat;
  /** Write the compact header names (pjsip.conf system `compact_headers`), RFC 3261 §7.3.3. */
  compactHeaders?: boolean;
  limits?: Partial<ParserLimits>;
  /**
   * Live connections per stream protocol, in and out (default 1024). At the limit a new incoming connection takes the
   * place of the oldest incoming one that has not sent a whole message yet; with none, it is refused.
   */
  maxConnections?: number;
  /** Incoming connections at once from one address, per stream protocol (default 32): one host cannot take them all. */
  maxConnectionsPerSource?: number;
  /** A TCP or TLS connection idle this long is closed (default 120 s). */
  idleTimeoutMs?: number;
  /** TCP keep-alive probes on every TCP and TLS connection after this idle time (tcp_keepalive_enable; Node sets no interval or count). */
  tcpKeepAliveMs?: number;
  /** An incoming connection that has not sent a whole SIP message in this time (TLS handshake included) is closed (default 10 s). */
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
  /** A TCP or TLS connection closed (the transaction layer may fail transactions bound to it). */
  onConnectionClosed?(connection: TcpConnection): void;
}

type ResolvedOptions = Required<Omit<TransportOptions, 'limits' | 'publicHost' | 'name' | 'tls' | 'nat' | 'compactHeaders' | 'tcpKeepAliveMs'>> & { publicHost?: string; name?: string };

export class SipTransport implements SipSender {
  handlers: TransportHandlers = {};
  readonly limits: ParserLimits;
  private readonly options: ResolvedOptions;
  private udp?: dgram.Socket;
  private tcp?: net.Server;
  /** Accepts TCP; each connection is wrapped in TLS by #listenTls. */
  private tlsServer?: net.Server;
  /** The TLS certificates in force (replaced by reloadTls). */
  #tls: TlsMaterial | undefined;
  readonly #tlsSettings: TlsSettings | undefined;
  readonly #nat: OutboundNat | undefined;
  readonly #compact: boolean;
  #keepAlive: NodeJS.Timeout | undefined;
  readonly #tcpKeepAliveMs: number | undefined;
  private readonly streams: Record<StreamProtocol, StreamConnections>;
  private closing = false;

  constructor(options: TransportOptions = {}, handlers: TransportHandlers = {}) {
    this.handlers = handlers;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.options = {
      host: options.host ?? '127.0.0.1',
      udpPort: options.udpPort ?? 5060,
      tcpPort: options.tcpPort ?? (options.udpPort === false ? 5060 : -1),
      tlsPort: options.tlsPort ?? false,
      maxTlsHandshakes: options.maxTlsHandshakes ?? 64,
      maxConnections: options.maxConnections ?? 1024,
      maxConnectionsPerSource: options.maxConnectionsPerSource ?? 32,
      idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
      firstMessageTimeoutMs: options.firstMessageTimeoutMs ?? 10_000,
      maxWriteBuffer: options.maxWriteBuffer ?? 1 << 20,
      forceRport: options.forceRport ?? true,
      publicHost: options.publicHost,
      name: options.name,
    };
    this.#tlsSettings = options.tls;
    this.#nat = options.nat;
    this.#compact = options.compactHeaders === true;
    this.#tcpKeepAliveMs = options.tcpKeepAliveMs;
    const events = {
      frame: (data: Buffer, source: Source) => this.receive(data, source, true),
      drop: (reason: string, source: Source) => this.handlers.onDrop?.(reason, source),
      closed: (connection: TcpConnection) => this.handlers.onConnectionClosed?.(connection),
    };
    const make = (protocol: StreamProtocol) => new StreamConnections(protocol, this.options, this.limits, events, this.options.name);
    this.streams = { TCP: make('TCP'), TLS: make('TLS') };
  }

  /** Binds the sockets (and reads the TLS material first: a bad certificate fails here). */
  async start(): Promise<void> {
    if (this.#tlsSettings) this.#tls = TlsMaterial.load(this.#tlsSettings);
    if (this.options.tlsPort !== false && !this.#tls?.canServe) throw new Error('a TLS listener needs cert_file and priv_key_file');
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
        this.tcp?.close();
        this.tcp = undefined;
        if (attempt >= retries || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      }
    }
  }

  async #open(): Promise<void> {
    const { host, udpPort, tcpPort, tlsPort } = this.options;
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
      // No server.maxConnections: admit() counts, and may evict a silent connection to make room.
      const server = net.createServer((socket) => {
        this.#tcpKeepAlive(socket);
        const admission = this.streams.TCP.admit(socket);
        if (admission) this.streams.TCP.adopt(admission, socket);
      });
      await listen(server, port, host);
      this.tcp = server;
    }
    if (tlsPort !== false) this.tlsServer = await this.#listenTls(tlsPort, host);
  }

  /**
   * The TLS listener: a TCP server whose sockets are admitted (bounds per source and in total, and
   * on handshakes in flight) and then wrapped in TLS with the material in force at that moment — so
   * a reload's new certificate serves new connections. A handshake that fails (a plaintext client,
   * an unknown CA) or never ends (the first-message timer) closes the TLS socket, and with it the
   * TCP one, and frees its place.
   */
  async #listenTls(port: number, host: string): Promise<net.Server> {
    const pool = this.streams.TLS;
    const server = net.createServer((raw) => {
      this.#tcpKeepAlive(raw);
      const material = this.#tls;
      if (!material || pool.pendingCount >= this.options.maxTlsHandshakes) {
        this.handlers.onDrop?.('too many TLS handshakes in progress', { transport: 'TLS', address: raw.remoteAddress ?? '', port: raw.remotePort ?? 0 });
        raw.on('error', () => undefined);
        raw.destroy();
        return;
      }
      const admission = pool.admit(raw);
      if (!admission) return;
      const secure = new tls.TLSSocket(raw, material.serverSocketOptions());
      admission.close = () => secure.destroy();
      let settled = false;
      secure.on('error', (error: Error) => {
        if (settled) return;
        settled = true;
        pool.reject(admission, `TLS handshake failed: ${error.message}`);
      });
      secure.once('secure', () => {
        if (settled) return;
        settled = true;
        const refusal = material.checkClient(secure);
        if (refusal) pool.reject(admission, `TLS: ${refusal}`);
        else pool.adopt(admission, secure);
      });
    });
    await listen(server, port, host);
    return server;
  }

  /**
   * Reads the TLS files again (certificates renewed on disk): new connections, in and out, use the
   * new material; those open keep theirs. Throws (the old material staying in force) when the new
   * files cannot be used.
   */
  reloadTls(): void {
    if (!this.#tlsSettings) return;
    const material = TlsMaterial.load(this.#tlsSettings);
    if (this.tlsServer && !material.canServe) throw new Error('a TLS listener needs cert_file and priv_key_file');
    this.#tls = material;
  }

  /** The bound port of a transport (undefined when not started). */
  port(transport: TransportProtocol): number | undefined {
    if (transport === 'UDP') return this.udp?.address().port;
    const a = (transport === 'TLS' ? this.tlsServer : this.tcp)?.address();
    return a && typeof a === 'object' ? a.port : undefined;
  }

  /** Host and port to write in a Via or Contact for this transport. */
  localAddress(transport: TransportProtocol): { host: string; port: number } {
    return { host: this.advertisedHost(), port: this.port(transport) ?? (transport === 'TLS' ? 5061 : 5060) };
  }

  get connectionCount(): number {
    return this.streams.TCP.size + this.streams.TLS.size;
  }

  /** The open TCP or TLS connection to host:port, if there is one (never opens one). */
  openConnection(transport: TransportProtocol, host: string, port: number): TcpConnection | undefined {
    return isStreamProtocol(transport) ? this.streams[transport].find(host, port) : undefined;
  }

  /**
   * Sends a message. Resolves with the TCP or TLS connection used (undefined for UDP); rejects when the
   * transport cannot (no socket, connection refused or closed, TLS refused, message too large).
   */
  async send(message: SipMessage, dest: Destination): Promise<TcpConnection | undefined> {
    const data = (this.#nat ? applyOutboundNat(message, dest.host, this.#nat) : message).serialize(this.#compact);
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
    // WebSocket destinations go to the set's SIP WebSocket transport (transport-set.ts), never here.
    if (!isStreamProtocol(dest.transport)) throw new Error(`no ${dest.transport} transport on this listener`);
    const pool = this.streams[dest.transport];
    let conn = dest.connection instanceof Connection && !dest.connection.closed && pool.owns(dest.connection) ? dest.connection : undefined;
    conn ??= await pool.connect(dest.host, dest.port, () => (dest.transport === 'TLS' ? this.#dialTls(dest.host, dest.port) : this.#dialTcp(dest.host, dest.port)));
    pool.write(conn, data);
    return conn;
  }

  /**
   * Sends a response where §18.2.2 / RFC 3581 say: for TCP and TLS over the request's connection if still
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

  /**
   * Sends a CRLF keep-alive on the TCP and TLS connections every `seconds` (pjsip.conf global
   * `keep_alive_interval`; 0: none), so that NATs and firewalls on the way keep them open.
   */
  setKeepAliveInterval(seconds: number): void {
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    if (!(seconds > 0) || this.closing) return;
    this.#keepAlive = setInterval(() => {
      this.streams.TCP.keepAlive();
      this.streams.TLS.keepAlive();
    }, seconds * 1000);
    this.#keepAlive.unref();
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    this.streams.TCP.closeAll();
    this.streams.TLS.closeAll();
    const servers = [this.tcp, this.tlsServer];
    const udp = this.udp;
    this.udp = undefined;
    this.tcp = undefined;
    this.tlsServer = undefined;
    await Promise.all([
      udp ? new Promise<void>((resolve) => udp.close(() => resolve())) : undefined,
      ...servers.map((server) => (server ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined)),
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

  // ---- connecting out

  /** The kernel's keep-alive probes on a connection, when the transport asks for them (tcp_keepalive_enable). */
  #tcpKeepAlive(socket: net.Socket): void {
    const ms = this.#tcpKeepAliveMs;
    if (ms !== undefined && ms > 0) socket.setKeepAlive(true, ms);
  }

  /** The local address outgoing connections bind to: the listener's, unless it is a wildcard. */
  #localBind(): string | undefined {
    const host = this.options.host;
    return net.isIP(host) && host !== '0.0.0.0' && host !== '::' ? host : undefined;
  }

  #dialTcp(host: string, port: number): Promise<net.Socket> {
    return new Promise<net.Socket>((resolve, reject) => {
      const localAddress = this.#localBind();
      const socket = net.connect({ host, port, ...(localAddress ? { localAddress } : {}) });
      this.#tcpKeepAlive(socket);
      const timer = setTimeout(() => socket.destroy(new Error('connect timeout')), 10_000);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(socket);
      });
    });
  }

  /** A TLS connection to host:port, verified as verify_server says; the whole attempt is bounded like a TCP connect. */
  #dialTls(host: string, port: number): Promise<net.Socket> {
    const material = this.#tls;
    if (!material) return Promise.reject(new Error('no TLS transport'));
    return new Promise<net.Socket>((resolve, reject) => {
      const localAddress = this.#localBind();
      const socket = tls.connect({ ...material.clientOptions(host, port), ...(localAddress ? { localAddress } : {}) });
      const timer = setTimeout(() => socket.destroy(new Error('TLS connect timeout')), 10_000);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        resolve(socket);
      });
    });
  }
}

function listen(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.on('error', () => undefined);
      resolve();
    });
  });
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
  const transport: TransportProtocol = source?.transport ?? (via.transport === 'TCP' || via.transport === 'TLS' ? via.transport : 'UDP');
  // Answered from the listener that received the request: a phone expects the port it sent to.
  const from = source?.listener === undefined ? {} : { listener: source.listener };
  // Connection-oriented (TCP, TLS, WebSocket): back over the request's connection while it is open.
  if (transport !== 'UDP' && source?.connection && !source.connection.closed) {
    return { transport, host: source.address, port: source.port, connection: source.connection, ...from };
  }
  const defaultPort = via.port ?? (transport === 'TLS' ? 5061 : 5060);
  // rport filled in on receipt (asked for, or forced): back to the source, whatever else the Via says
  if (transport === 'UDP' && typeof via.rport === 'number' && via.received) return { transport, host: via.received, port: via.rport, ...from };
  const maddr = via.params.get('maddr');
  if (maddr) return { transport, host: maddr, port: defaultPort, ...from };
  return { transport, host: via.received ?? via.host, port: defaultPort, ...from };
}

