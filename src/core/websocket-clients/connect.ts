// Opening a connection for a websocket_client entry the way Asterisk's res_websocket_client does:
// Basic auth from the URI or username/password, the configured subprotocols verbatim, no
// extensions offered (a server that answers with one is refused), a Host header that always
// carries the port, TLS with the configured CAs and verification switches, and an optional HTTP
// CONNECT tunnel through a proxy. DNS is resolved on every attempt (round-robin fail-over works).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import WebSocket from 'ws';
import type { WebSocketClientSettings } from '../../config/settings.ts';

/** The ASCII payload of keep-alive PINGs; a PONG counts only when it echoes it (RFC 6455 §5.5.3). */
export const PING_PAYLOAD = Buffer.from('WS_CLIENT_PING');
/** A proxy's answer to CONNECT is read up to this many bytes (status line and headers). */
const MAX_PROXY_RESPONSE = 16 * 1024;
/** CA files read from `ca_list_path` at most (a directory is not an unbounded read). */
const MAX_CA_FILES = 1000;

export interface ConnectOptions {
  /** Largest message accepted from the server. */
  readonly maxPayload: number;
  /** Extra query parameters appended to the URI (per-call `v()` style options). */
  readonly query?: ReadonlyMap<string, string>;
}

/** Where a client connects: the parsed URI with the port made explicit. */
export interface ClientTarget {
  readonly secure: boolean;
  readonly host: string;
  readonly port: number;
  /** `ws(s)://host:port/path?query` without user info. */
  readonly url: string;
  readonly auth: string | undefined;
}

export class WebSocketClientError extends Error {
  override readonly name = 'WebSocketClientError';
}

export function clientTarget(client: WebSocketClientSettings, query?: ReadonlyMap<string, string>): ClientTarget {
  const uri = new URL(client.uri);
  // The URI's scheme sets the default port; TLS is used for wss:// or tls_enabled.
  const port = uri.port !== '' ? Number(uri.port) : uri.protocol === 'wss:' ? 443 : 80;
  const secure = uri.protocol === 'wss:' || client.tlsEnabled;
  const host = uri.hostname.startsWith('[') ? uri.hostname.slice(1, -1) : uri.hostname;
  let auth: string | undefined;
  if (uri.username !== '' || uri.password !== '') auth = `${decodeURIComponent(uri.username)}:${decodeURIComponent(uri.password)}`;
  else if (client.username !== '' && client.password !== '') auth = `${client.username}:${client.password}`;
  const search = new URLSearchParams(uri.search);
  for (const [name, value] of query ?? []) search.append(name, value);
  const qs = search.toString();
  const hostPart = net.isIPv6(host) ? `[${host}]` : host;
  const url = `${secure ? 'wss' : 'ws'}://${hostPart}:${port}${uri.pathname}${qs ? `?${qs}` : ''}`;
  return { secure, host, port, url, auth };
}

/** The TLS material of a client, read from its files (at each attempt: renewed certificates are picked up). */
function tlsOptions(client: WebSocketClientSettings, host: string): tls.ConnectionOptions {
  const ca: Buffer[] = [];
  if (client.caListFile) ca.push(fs.readFileSync(client.caListFile));
  if (client.caListPath) {
    const names = fs.readdirSync(client.caListPath).filter((name) => /\.(pem|crt)$/i.test(name)).sort().slice(0, MAX_CA_FILES);
    for (const name of names) ca.push(fs.readFileSync(path.join(client.caListPath, name)));
  }
  return {
    ...(ca.length > 0 ? { ca } : {}),
    ...(client.certFile ? { cert: fs.readFileSync(client.certFile) } : {}),
    ...(client.privKeyFile ? { key: fs.readFileSync(client.privKeyFile) } : {}),
    rejectUnauthorized: client.verifyServerCert,
    ...(client.verifyServerHostname ? {} : { checkServerIdentity: () => undefined }),
    ...(net.isIP(host) ? {} : { servername: host }),
  };
}

interface EarlyMessage {
  readonly data: WebSocket.RawData;
  readonly isBinary: boolean;
}
/** Frames kept between 'open' and the caller's listener; more than this is a misbehaving server. */
const MAX_EARLY_MESSAGES = 64;
const earlyMessages = new WeakMap<WebSocket, { early: EarlyMessage[]; keep: (data: WebSocket.RawData, isBinary: boolean) => void }>();

/**
 * Installs the caller's message listener on a socket from connectOnce and replays
 * the frames that arrived before it, in order.
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
 * One connection attempt: resolves with the open WebSocket, rejects with the reason. The TCP (and
 * TLS) connect is bounded by `connection_timeout`, the HTTP upgrade by twice that again.
 */
export async function connectOnce(client: WebSocketClientSettings, options: ConnectOptions): Promise<WebSocket> {
  const target = clientTarget(client, options.query);
  const headers: Record<string, string> = {
    // Asterisk always names the port, default or not.
    Host: `${net.isIPv6(target.host) ? `[${target.host}]` : target.host}:${target.port}`,
  };
  if (target.auth !== undefined) headers.Authorization = `Basic ${Buffer.from(target.auth).toString('base64')}`;
  const protocols = client.protocols.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const secureOptions = target.secure ? tlsOptions(client, target.host) : {};
  let tunnel: net.Socket | undefined;
  if (client.proxyHost !== '') tunnel = await openProxyTunnel(client, target);
  const ws = new WebSocket(target.url, protocols, {
    headers,
    perMessageDeflate: false,
    followRedirects: false,
    maxPayload: options.maxPayload,
    handshakeTimeout: client.connectionTimeout * 3,
    ...secureOptions,
    ...(tunnel ? { createConnection: tunnelConnector(tunnel, target, secureOptions) } : {}),
  });
  return new Promise((resolve, reject) => {
    let settled = false;
    const connectTimer = setTimeout(() => fail(new WebSocketClientError(`connection to ${target.host}:${target.port} timed out`)), client.connectionTimeout * 3);
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      ws.removeAllListeners();
      // A late error of the abandoned attempt must not go unhandled.
      ws.on('error', () => {});
      ws.terminate();
      tunnel?.destroy();
      reject(err);
    };
    ws.once('open', () => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      ws.removeListener('error', fail);
      // Frames that came with the upgrade answer are emitted right after 'open', before the caller
      // can listen: they are kept for it (see takeEarlyMessages).
      const early: EarlyMessage[] = [];
      const keep = (data: WebSocket.RawData, isBinary: boolean): void => {
        if (early.length < MAX_EARLY_MESSAGES) early.push({ data, isBinary });
      };
      ws.on('message', keep);
      earlyMessages.set(ws, { early, keep });
      // An error before the caller listens must not be unhandled.
      ws.on('error', () => {});
      const socket = (ws as unknown as { _socket?: net.Socket })._socket;
      if (client.enableTcpKeepalives) socket?.setKeepAlive(true, client.tcpKeepaliveTime * 1000);
      resolve(ws);
    });
    ws.on('error', fail);
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      fail(new WebSocketClientError(`server answered the upgrade with ${res.statusCode} ${res.statusMessage ?? ''}`.trim()));
    });
  });
}

/** ws calls this for its connection: the tunnel itself, or TLS over it. */
function tunnelConnector(tunnel: net.Socket, target: ClientTarget, secureOptions: tls.ConnectionOptions): () => net.Socket {
  return () => (target.secure ? tls.connect({ ...secureOptions, socket: tunnel }) : tunnel);
}

/** `CONNECT host:port` through the proxy; resolves with the socket once the proxy answered 200. */
function openProxyTunnel(client: WebSocketClientSettings, target: ClientTarget): Promise<net.Socket> {
  const colon = client.proxyHost.lastIndexOf(':');
  const proxyHost = client.proxyHost.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const proxyPort = Number(client.proxyHost.slice(colon + 1));
  const authority = `${net.isIPv6(target.host) ? `[${target.host}]` : target.host}:${target.port}`;
  let request = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n`;
  if (client.proxyUsername !== '' && client.proxyPassword !== '') {
    request += `Proxy-Authorization: Basic ${Buffer.from(`${client.proxyUsername}:${client.proxyPassword}`).toString('base64')}\r\n`;
  }
  request += 'Proxy-Connection: Keep-Alive\r\n\r\n';
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxyHost, port: proxyPort });
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new WebSocketClientError(`proxy ${client.proxyHost} did not answer CONNECT in time`)), client.connectionTimeout * 3);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.once('connect', () => socket.write(request));
    socket.on('error', (err) => fail(new WebSocketClientError(`proxy ${client.proxyHost}: ${err.message}`)));
    socket.on('close', () => fail(new WebSocketClientError(`proxy ${client.proxyHost} closed the connection`)));
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) {
        if (received.length > MAX_PROXY_RESPONSE) fail(new WebSocketClientError(`proxy ${client.proxyHost} sent an oversized answer`));
        return;
      }
      const statusLine = received.subarray(0, received.indexOf('\r\n')).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
      if (status !== '200') return fail(new WebSocketClientError(`proxy ${client.proxyHost} refused CONNECT: ${statusLine.slice(0, 100)}`));
      clearTimeout(timer);
      socket.removeAllListeners('data');
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      // The server speaks only after our upgrade request, so nothing may follow the proxy's answer.
      if (received.length > end + 4) return fail(new WebSocketClientError(`proxy ${client.proxyHost} sent data after its answer`));
      resolve(socket);
    };
    socket.on('data', onData);
  });
}

/**
 * WebSocket PING keep-alive of a client connection: one PING every interval; after `probes`
 * PINGs in a row without the matching PONG the connection is terminated (its close handler
 * reconnects). Returns the function that stops it.
 */
export function startPingPong(ws: WebSocket, client: WebSocketClientSettings, onDead: () => void): () => void {
  if (!client.enablePingpongs) return () => {};
  let missed = 0;
  const onPong = (data: Buffer): void => {
    if (data.equals(PING_PAYLOAD)) missed = 0;
  };
  ws.on('pong', onPong);
  const timer = setInterval(() => {
    if (missed >= client.pingpongProbes) {
      clearInterval(timer);
      onDead();
      ws.terminate();
      return;
    }
    missed++;
    ws.ping(PING_PAYLOAD);
  }, client.pingpongInterval * 1000);
  timer.unref();
  return () => {
    clearInterval(timer);
    ws.off('pong', onPong);
  };
}
