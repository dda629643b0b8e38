// Where a SIP message comes from and goes to, and the connection it travels on: the shapes every
// transport (UDP, the stream transports, WebSocket) and the layers above share. Apart from
// transport.ts so that the stream connections, which transport.ts holds, need not import it.

/** WS and WSS: SIP over WebSocket (RFC 7118, websocket-transport.ts), over connections browsers open. */
export type TransportProtocol = 'UDP' | 'TCP' | 'TLS' | 'WS' | 'WSS';

/** A connection of a stream transport (TCP or TLS), or a browser's WebSocket (WS, WSS). */
export interface TcpConnection {
  readonly id: number;
  /** The transport it belongs to. */
  readonly protocol: 'TCP' | 'TLS' | 'WS' | 'WSS';
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
  /** The TCP or TLS connection it arrived on. */
  connection?: TcpConnection;
  /** The name of the listening transport that received it (several may listen: SipTransportSet). */
  listener?: string;
}

/** Where to send. With a connection (TCP, TLS), that connection is used while it is open. */
export interface Destination {
  transport: TransportProtocol;
  host: string;
  port: number;
  connection?: TcpConnection;
  /** The listening transport to send from (its socket, its address in Via); default: the first of the protocol. */
  listener?: string;
}
