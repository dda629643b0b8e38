// What a connection to a websocket_client entry needs to know, declared here so the connecting code
// depends on no configuration format: src/config/settings.ts derives its `websocket_clients` type
// from the schema and checks there that it provides every field below.

/** One websocket_client entry (Asterisk's websocket_client.conf object), as the connecting code reads it. */
export interface WebSocketClientConfig {
  readonly name: string;
  /** `ws://` or `wss://host[:port][/path][?query]`, without user info. */
  readonly uri: string;
  readonly connectionType: 'per_call_config' | 'persistent';
  /** Comma-separated `Sec-WebSocket-Protocol` list; '' for none. */
  readonly protocols: string;
  /** With `password`: HTTP Basic credentials of the handshake; '' for none. */
  readonly username: string;
  readonly password: string;
  /** Milliseconds one attempt may take (the whole handshake gets twice this). */
  readonly connectionTimeout: number;
  /** Milliseconds between attempts. */
  readonly reconnectInterval: number;
  readonly reconnectAttempts: number;
  readonly tlsEnabled: boolean;
  readonly caListFile: string | null;
  readonly certFile: string | null;
  readonly privKeyFile: string | null;
  readonly verifyServerCert: boolean;
  readonly verifyServerHostname: boolean;
  readonly caListPath: string | null;
  /** HTTP proxy `host:port` to tunnel through with CONNECT; '' for none. */
  readonly proxyHost: string;
  readonly proxyUsername: string;
  readonly proxyPassword: string;
  readonly enableTcpKeepalives: boolean;
  /** Seconds of idleness before the first keepalive probe. */
  readonly tcpKeepaliveTime: number;
  readonly tcpKeepaliveInterval: number;
  readonly tcpKeepaliveProbes: number;
  readonly enablePingpongs: boolean;
  /** Seconds between PINGs. */
  readonly pingpongInterval: number;
  /** Unanswered PINGs before the connection counts as dead. */
  readonly pingpongProbes: number;
}
