// One connection attempt for a websocket_client entry, made the way Asterisk's
// res_websocket_client makes it:
// - `GET <path>?<query>[&<extra params>]` with Sec-WebSocket-Version 13, Upgrade, Connection,
//   `Host: host:port` (the port always written), Basic `Authorization` when a username and
//   password are set, `Sec-WebSocket-Protocol` with the configured protocols, a key; no Origin and
//   no extensions offered. The server must answer 101 with a correct accept key; a protocol it
//   names must be one offered, and any extension it names fails the attempt (the `ws` library
//   checks both).
// - TLS for `wss://` or `tls_enabled`, trusting `ca_list_file` and `ca_list_path` (else the system
//   CAs), with the client certificate and the two verification switches.
// - With `proxy_host`, an HTTP CONNECT tunnel first (plain text to the proxy; TLS runs inside).
// - TCP keepalives and WebSocket PINGs once open, when enabled.
// The whole attempt (proxy, connecting, TLS, the HTTP exchange) is bounded by twice
// `connection_timeout`. DNS is resolved on every attempt, so round-robin DNS gives fail-over.
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import WebSocket from 'ws';
import type { WebSocketClientConfig } from './client-config.ts';
import { startPingPong } from './ping-pong.ts';

/** Largest message a connection made here accepts by default (Asterisk's frame limit). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 65535;
/** A proxy's answer to CONNECT is read up to this many bytes (status line and headers). */
const MAX_PROXY_RESPONSE = 16 * 1024;
/** CA files read from `ca_list_path` at most (a directory is not an unbounded read). */
const MAX_CA_FILES = 1000;
/** Frames kept between 'open' and the caller's listener; more than this is a misbehaving server. */
const MAX_EARLY_MESSAGES = 64;

/** Query parameters appended to a client's URI: already URL-encoded `name=value` pairs. */
export type UriParams = readonly string[];

export interface ConnectOnceOptions {
  /** Extra, already URL-encoded, query parameters (chan_websocket's `v()`). */
  readonly params?: UriParams;
  /** Abandons the attempt (the call went away). */
  readonly signal?: AbortSignal;
  /** Largest message accepted; larger ones close the connection with 1009. */
  readonly maxPayloadBytes?: number;
  /** Told when `enable_pingpongs` finds the server dead, just before the connection is terminated. */
  readonly onPingTimeout?: () => void;
}

export class WebSocketConnectError extends Error {
  override readonly name = 'WebSocketConnectError';
}

/**
 * The URI an attempt connects to: the configured one with `params` appended (with `&` when it has
 * a query already), the scheme following TLS (`tls_enabled` or `wss`), the port kept (a `ws://`
 * URI without one means 80 even over TLS).
 */
export function clientUrl(client: WebSocketClientConfig, params: UriParams = []): URL {
  const url = new URL(client.uri);
  const secure = client.tlsEnabled || url.protocol === 'wss:';
  const port = url.port || (url.protocol === 'wss:' ? '443' : '80');
  url.protocol = secure ? 'wss:' : 'ws:';
  url.port = port;
  if (params.length > 0) url.search = url.search ? `${url.search}&${params.join('&')}` : `?${params.join('&')}`;
  return url;
}

/** `host:port` with the port always written, as Asterisk sends Host (URL drops a default port). */
export function hostHeader(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'wss:' ? '443' : '80')}`;
}

/** The host name without IPv6 brackets, as sockets and TLS want it. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The TLS material of a client, read from its files at each attempt (renewed certificates are picked up). */
function tlsOptions(client: WebSocketClientConfig, host: string): tls.ConnectionOptions {
  const ca: Buffer[] = [];
  if (client.caListFile) ca.push(fs.readFileSync(client.caListFile));
  if (client.caListPath) {
    const names = fs.readdirSync(client.caListPath).filter((name) => /\.(pem|crt)$/i.test(name)).sort().slice(0, MAX_CA_FILES);
    for (const name of names) ca.push(fs.readFileSync(path.join(client.caListPath, name)));
  }
  return {
    ...(ca.length > 0 ? { ca } : {}),
    // The settings accept a certificate only together with its key.
    ...(client.certFile && client.privKeyFile ? { cert: fs.readFileSync(client.certFile), key: fs.readFileSync(client.privKeyFile) } : {}),
    rejectUnauthorized: client.verifyServerCert,
    ...(client.verifyServerHostname ? {} : { checkServerIdentity: () => undefined }),
    ...(net.isIP(host) ? {} : { servername: host }),
  };
}

interface EarlyMessage {
  readonly data: WebSocket.RawData;
  readonly isBinary: boolean;
}
const earlyMessages = new WeakMap<WebSocket, { early: EarlyMessage[]; keep: (data: WebSocket.RawData, isBinary: boolean) => void }>();

/**
 * Installs the caller's message listener on a socket from connectOnce and replays the frames that
 * arrived before it, in order. On any other socket it is `ws.on('message', listener)`.
 */
export function onClientMessage(ws: WebSocket, listener: (data: WebSocket.RawData, isBinary: boolean) => void): void {
  const held = earlyMessages.get(ws);
  if (held) {
    earlyMessages.delete(ws);
    ws.off('message', held.keep);
  }
  ws.on('message', listener);
  for (const { data, isBinary } of held?.early ?? []) listener(data, isBinary);
}

/**
 * One connection attempt: resolves with the open WebSocket (read its messages with
 * onClientMessage), rejects with a WebSocketConnectError saying why.
 */
export function connectOnce(client: WebSocketClientConfig, options: ConnectOnceOptions = {}): Promise<WebSocket> {
  const url = clientUrl(client, options.params);
  const secure = url.protocol === 'wss:';
  const limitMs = client.connectionTimeout * 2;
  const protocols = client.protocols
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const headers: Record<string, string> = { Host: hostHeader(url) };
  if (client.username && client.password) headers.Authorization = `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;

  return new Promise((resolve, reject) => {
    let ws: WebSocket | undefined;
    let tunnel: net.Socket | undefined;
    let upgraded: net.Socket | undefined;
    let settled = false;
    const settle = (): void => {
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
    };
    const fail = (cause: unknown): void => {
      if (settled) return;
      settle();
      if (ws) {
        ws.removeAllListeners();
        // A late error of the abandoned attempt must not go unhandled.
        ws.on('error', () => undefined);
        ws.terminate();
      }
      tunnel?.destroy();
      reject(cause instanceof WebSocketConnectError ? cause : new WebSocketConnectError(cause instanceof Error ? cause.message : String(cause), { cause }));
    };
    const abort = (): void => fail(new WebSocketConnectError('connection abandoned'));
    const timer = setTimeout(() => fail(new WebSocketConnectError(`no handshake with ${url.host} within ${limitMs} ms`)), limitMs);
    if (options.signal?.aborted) return abort();
    options.signal?.addEventListener('abort', abort, { once: true });

    let secureOptions: tls.ConnectionOptions = {};
    try {
      if (secure) secureOptions = tlsOptions(client, bareHost(url));
    } catch (error) {
      return fail(error);
    }

    const upgrade = (): void => {
      if (settled) return;
      let socket: WebSocket;
      try {
        socket = new WebSocket(url, protocols, {
          headers,
          perMessageDeflate: false,
          followRedirects: false,
          handshakeTimeout: limitMs,
          maxPayload: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
          skipUTF8Validation: false,
          ...secureOptions,
          ...(tunnel ? { createConnection: tunnelConnector(tunnel, bareHost(url), secure, secureOptions) } : {}),
        });
      } catch (error) {
        // ws refuses some protocol lists the settings let through (a name given twice).
        return fail(error);
      }
      ws = socket;
      socket.once('upgrade', (response: IncomingMessage) => {
        upgraded = response.socket;
      });
      socket.once('unexpected-response', (_request, response: IncomingMessage) => {
        response.resume();
        fail(new WebSocketConnectError(`server answered ${response.statusCode ?? '?'} instead of 101`));
      });
      socket.on('error', fail);
      socket.once('open', () => {
        if (settled) return;
        settle();
        socket.off('error', fail);
        // An error before the caller listens must not go unhandled.
        socket.on('error', () => undefined);
        // Frames that came with the upgrade answer are emitted before the caller's code runs
        // again: they are kept for it (see onClientMessage).
        const early: EarlyMessage[] = [];
        const keep = (data: WebSocket.RawData, isBinary: boolean): void => {
          if (early.length < MAX_EARLY_MESSAGES) early.push({ data, isBinary });
        };
        socket.on('message', keep);
        earlyMessages.set(socket, { early, keep });
        // Through a proxy the keepalives belong on the TCP connection, not on the TLS inside it.
        if (client.enableTcpKeepalives) (tunnel ?? upgraded)?.setKeepAlive(true, client.tcpKeepaliveTime * 1000);
        const stopPing = startPingPong(socket, client, options.onPingTimeout ?? (() => undefined));
        socket.once('close', stopPing);
        resolve(socket);
      });
    };

    if (client.proxyHost === '') return upgrade();
    const proxy = openProxyTunnel(client, hostHeader(url));
    tunnel = proxy.socket;
    proxy.ready.then(upgrade, fail);
  });
}

/** ws calls this for its connection: the tunnel itself, or TLS over it. */
function tunnelConnector(tunnel: net.Socket, host: string, secure: boolean, secureOptions: tls.ConnectionOptions): () => net.Socket {
  // `host` names the server for certificate checks (the tunnel socket has no name of its own).
  return () => (secure ? tls.connect({ ...secureOptions, host, socket: tunnel }) : tunnel);
}

/**
 * `CONNECT host:port` through the proxy. `ready` resolves once the proxy answered 200; the caller
 * bounds the time and destroys `socket` when it gives up.
 */
function openProxyTunnel(client: WebSocketClientConfig, authority: string): { socket: net.Socket; ready: Promise<void> } {
  const colon = client.proxyHost.lastIndexOf(':');
  const proxyHost = client.proxyHost.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const proxyPort = Number(client.proxyHost.slice(colon + 1));
  let request = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n`;
  if (client.proxyUsername !== '' && client.proxyPassword !== '') {
    request += `Proxy-Authorization: Basic ${Buffer.from(`${client.proxyUsername}:${client.proxyPassword}`).toString('base64')}\r\n`;
  }
  request += 'Proxy-Connection: Keep-Alive\r\n\r\n';
  const socket = net.connect({ host: proxyHost, port: proxyPort });
  const ready = new Promise<void>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const fail = (message: string): void => {
      socket.destroy();
      reject(new WebSocketConnectError(`proxy ${client.proxyHost}: ${message}`));
    };
    socket.once('connect', () => socket.write(request));
    socket.on('error', (error) => fail(error.message));
    socket.on('close', () => fail('closed the connection'));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) {
        if (received.length > MAX_PROXY_RESPONSE) fail('sent an oversized answer');
        return;
      }
      const statusLine = received.subarray(0, received.indexOf('\r\n')).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
      if (status !== '200') return fail(`refused CONNECT: ${statusLine.slice(0, 100)}`);
      socket.removeAllListeners('data');
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      // Until the HTTP client takes the socket over, an error must not go unhandled.
      socket.on('error', () => undefined);
      // The server speaks only after our upgrade request, so nothing may follow the proxy's answer.
      if (received.length > end + 4) return fail('sent data after its answer');
      resolve();
    });
  });
  return { socket, ready };
}
