/**
 * Several listening transports as one (Asterisk's pjsip.conf `type=transport` sections: UDP on
 * 5060 and TCP on 5061, or two addresses). Each listener is a SipTransport of its own; what
 * arrives is tagged with the listener's name, answers leave from the listener that received the
 * request, and a request goes out from the listener its Destination names (an endpoint's
 * `transport=`), else from the first one of its protocol. SIP over WebSocket (WS, WSS) has no
 * listener of its own — the HTTP server hands its upgrades to `webSocket` — but is sent and
 * answered through the set like the others.
 */
import { isForeignFlow } from './foreign-flow.ts';
import type { SipMessage, SipResponse } from './message.ts';
import type { OutboundNat } from './outbound-nat.ts';
import type { TlsSettings } from './tls-material.ts';
import { SipWebSocketTransport, type WebSocketTransportOptions } from './websocket-transport.ts';
import { SipTransport, type Destination, type SipSender, type Source, type TcpConnection, type TransportHandlers, type TransportOptions, type TransportProtocol } from './transport.ts';

export interface ListenerSettings {
  /** Unique among the listeners (the transport section's name). */
  readonly name: string;
  /** UDP, TCP or both (then TCP listens on the port UDP got, as phones expect of one address), or TLS alone. */
  readonly protocols: readonly TransportProtocol[];
  readonly host: string;
  /** 0 for an ephemeral port. */
  readonly port: number;
  /** Host written in Via and Contact (NAT), else the bind address. */
  readonly publicHost?: string;
  /** External addresses per destination (outbound-nat.ts), when the transport is behind NAT with local networks or an external port. */
  readonly nat?: OutboundNat;
  /** A TLS listener's certificates and policy (also used for the TLS connections it opens). */
  readonly tls?: TlsSettings;
  /** TCP keep-alive idle time of the listener's connections in milliseconds (transport tcp_keepalive_*). */
  readonly tcpKeepAliveMs?: number;
}

export class SipTransportSet implements SipSender {
  readonly #listeners: { readonly settings: ListenerSettings; readonly transport: SipTransport }[];
  /** SIP over WebSocket, when a ws/wss transport is configured. */
  readonly webSocket: SipWebSocketTransport | undefined;

  constructor(
    listeners: readonly ListenerSettings[],
    handlers: TransportHandlers = {},
    options: Pick<TransportOptions, 'limits' | 'forceRport' | 'maxConnections' | 'maxConnectionsPerSource' | 'idleTimeoutMs' | 'firstMessageTimeoutMs' | 'compactHeaders'> = {},
    webSocket?: WebSocketTransportOptions,
  ) {
    if (listeners.length === 0) throw new Error('no SIP listener');
    this.webSocket = webSocket ? new SipWebSocketTransport({ limits: options.limits, ...(options.compactHeaders ? { compactHeaders: true } : {}), ...webSocket }, handlers) : undefined;
    this.#listeners = listeners.map((settings) => ({
      settings,
      transport: new SipTransport(
        {
          ...options,
          name: settings.name,
          host: settings.host,
          udpPort: settings.protocols.includes('UDP') ? settings.port : false,
          ...(settings.protocols.includes('TCP') ? (settings.protocols.includes('UDP') ? {} : { tcpPort: settings.port }) : { tcpPort: false as const }),
          ...(settings.publicHost ? { publicHost: settings.publicHost } : {}),
          ...(settings.protocols.includes('TLS') ? { tlsPort: settings.port } : {}),
          ...(settings.tls ? { tls: settings.tls } : {}),
          ...(settings.nat ? { nat: settings.nat } : {}),
          ...(settings.tcpKeepAliveMs ? { tcpKeepAliveMs: settings.tcpKeepAliveMs } : {}),
        },
        handlers,
      ),
    }));
  }

  /** Binds every listener; when one cannot, those already bound are closed and the error thrown. */
  async start(): Promise<void> {
    try {
      for (const { transport } of this.#listeners) await transport.start();
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** The listeners with their bound ports (after start). */
  listeners(): { name: string; protocol: TransportProtocol; host: string; port: number | undefined }[] {
    return this.#listeners.flatMap(({ settings, transport }) =>
      settings.protocols.map((protocol) => ({ name: settings.name, protocol, host: settings.host, port: transport.port(protocol) })),
    );
  }

  /** The bound port of a listener of this protocol (the named one, else the first). */
  port(protocol: TransportProtocol, listener?: string): number | undefined {
    if (isWebSocket(protocol)) return this.webSocket?.localAddress().port;
    const found = this.#pick(protocol, listener);
    return found?.transport.port(protocol);
  }

  /** Whether a listener of the protocol exists. */
  has(protocol: TransportProtocol): boolean {
    return this.#listeners.some(({ settings }) => settings.protocols.includes(protocol));
  }

  localAddress(protocol: TransportProtocol, listener?: string): { host: string; port: number } {
    if (this.webSocket && isWebSocket(protocol)) return this.webSocket.localAddress();
    const found = this.#pick(protocol, listener);
    if (found) return found.transport.localAddress(protocol);
    const first = this.#listeners[0]!;
    return first.transport.localAddress(first.settings.protocols[0] ?? protocol);
  }

  get connectionCount(): number {
    return this.#listeners.reduce((sum, { transport }) => sum + transport.connectionCount, this.webSocket?.connectionCount ?? 0);
  }

  async send(message: SipMessage, dest: Destination): Promise<TcpConnection | undefined> {
    // Another server's connection (foreign-flow.ts): written there, never from a socket of ours.
    if (isForeignFlow(dest.connection)) {
      await dest.connection.write(message);
      return dest.connection;
    }
    if (isWebSocket(dest.transport)) {
      if (!this.webSocket) throw new Error(`no ${dest.transport} transport`);
      return this.webSocket.send(message, dest);
    }
    const found = this.#pick(dest.transport, dest.listener);
    if (!found) throw new Error(`no ${dest.transport} transport`);
    return found.transport.send(message, dest);
  }

  async sendResponse(response: SipResponse, source?: Source): Promise<void> {
    if (isForeignFlow(source?.connection)) return source.connection.write(response);
    if (source && isWebSocket(source.transport) && this.webSocket) return this.webSocket.sendResponse(response, source);
    const found = this.#pick(source?.transport ?? 'UDP', source?.listener) ?? this.#listeners[0]!;
    return found.transport.sendResponse(response, source);
  }

  /**
   * The open connection to a peer's address and port (TCP, TLS: of the named listener, else of
   * any; WS, WSS: the browser's), or undefined: never opens one. A flow relayed for another server
   * must go over the phone's own connection (a new one would not reach a phone behind NAT).
   */
  openConnection(transport: TransportProtocol, host: string, port: number, listener?: string): TcpConnection | undefined {
    if (isWebSocket(transport)) return this.webSocket?.openConnection(host, port);
    const named = listener === undefined ? undefined : this.#pick(transport, listener);
    for (const { transport: candidate } of named ? [named] : this.#listeners) {
      const found = candidate.openConnection(transport, host, port);
      if (found) return found;
    }
    return undefined;
  }

  /**
   * Reads every TLS listener's certificates again. Each that cannot be used keeps its old ones and
   * is reported in the returned list (name and why); the others use the new ones for new connections.
   */
  reloadTls(): { name: string; error: string }[] {
    const failures: { name: string; error: string }[] = [];
    for (const { settings, transport } of this.#listeners) {
      if (!settings.tls) continue;
      try {
        transport.reloadTls();
      } catch (error) {
        failures.push({ name: settings.name, error: error instanceof Error ? error.message : String(error) });
      }
    }
    return failures;
  }

  /** CRLF keep-alives on every listener's TCP and TLS connections every `seconds` (0: none). */
  setKeepAliveInterval(seconds: number): void {
    for (const { transport } of this.#listeners) transport.setKeepAliveInterval(seconds);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#listeners.map(({ transport }) => transport.close()), this.webSocket?.close()]);
  }

  /** The named listener when it serves the protocol, else the first listener of the protocol. */
  #pick(protocol: TransportProtocol, name: string | undefined) {
    const serves = (settings: ListenerSettings) => settings.protocols.includes(protocol);
    const named = name === undefined ? undefined : this.#listeners.find(({ settings }) => settings.name === name && serves(settings));
    return named ?? this.#listeners.find(({ settings }) => serves(settings));
  }
}

function isWebSocket(protocol: TransportProtocol): boolean {
  return protocol === 'WS' || protocol === 'WSS';
}
