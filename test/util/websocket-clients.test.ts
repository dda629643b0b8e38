// Outgoing WebSocket connections of src/util/websocket-clients/ against real servers: the
// handshake Asterisk sends, the retries, refusals (a non-101 status, an extension or a protocol
// not offered), TLS with a CA file or without verification, abandoning an attempt, the CONNECT
// proxy, frames sent with the 101 answer, and PING keep-alive.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { clientUrl, connectOnce, connectWebSocketClient, hostHeader, onClientMessage, WebSocketClients, WebSocketConnectError, type WebSocketClientConfig } from '../../src/util/websocket-clients/index.ts';
import { startConnectProxy } from '../helpers/connect-proxy.ts';

const dir = mkdtempSync(join(tmpdir(), 'patchbay-wsc-'));
const certFile = join(dir, 'cert.pem');
const keyFile = join(dir, 'key.pem');
/** A certificate for another name (media.test) only. */
const misnamedCertFile = join(dir, 'misnamed-cert.pem');
const misnamedKeyFile = join(dir, 'misnamed-key.pem');

function client(fields: Partial<WebSocketClientConfig> & { uri: string }): WebSocketClientConfig {
  return {
    name: 'c',
    connectionType: 'per_call_config',
    protocols: '',
    username: '',
    password: '',
    connectionTimeout: 500,
    reconnectInterval: 20,
    reconnectAttempts: 1,
    tlsEnabled: false,
    caListFile: null,
    certFile: null,
    privKeyFile: null,
    verifyServerCert: true,
    verifyServerHostname: true,
    caListPath: null,
    proxyHost: '',
    proxyUsername: '',
    proxyPassword: '',
    enableTcpKeepalives: false,
    tcpKeepaliveTime: 20,
    tcpKeepaliveInterval: 20,
    tcpKeepaliveProbes: 3,
    enablePingpongs: false,
    pingpongInterval: 20,
    pingpongProbes: 3,
    ...fields,
  };
}

/** An HTTP(S) server whose upgrades a test answers itself, or hands to a ws server. */
async function listen(server: http.Server | https.Server): Promise<number> {
  // Upgraded sockets are not the server's any more: destroyed by hand at the end.
  server.on('connection', (socket) => sockets.add(socket));
  server.on('secureConnection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const servers: (http.Server | https.Server)[] = [];
const sockets = new Set<Socket>();

before(async () => {
  const make = (names: string, key: string, cert: string) =>
    promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=patchbay-test', '-addext', `subjectAltName=${names}`, '-keyout', key, '-out', cert]);
  await Promise.all([make('IP:127.0.0.1', keyFile, certFile), make('DNS:media.test', misnamedKeyFile, misnamedCertFile)]);
});

after(async () => {
  for (const socket of sockets) socket.destroy();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the handshake', () => {
  test("Asterisk's request: path and query with extra parameters, Host with port, Basic auth, protocols, no Origin or extensions", async () => {
    const server = http.createServer();
    servers.push(server);
    const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => (offered.has('media') ? 'media' : false) });
    let seen: http.IncomingMessage | undefined;
    server.on('upgrade', (request, socket, head) => {
      seen = request;
      wss.handleUpgrade(request, socket, head, (ws) => ws.send('hi'));
    });
    const port = await listen(server);
    const ws = await connectWebSocketClient(client({ uri: `ws://127.0.0.1:${port}/a/b?x=1`, protocols: 'media, other', username: 'u', password: 'p:w' }), { params: ['y=2', 'z=a%20b'] });
    assert.equal(ws.protocol, 'media');
    assert.equal(seen!.url, '/a/b?x=1&y=2&z=a%20b');
    assert.equal(seen!.headers.host, `127.0.0.1:${port}`);
    assert.equal(seen!.headers.authorization, `Basic ${Buffer.from('u:p:w').toString('base64')}`);
    assert.equal(seen!.headers['sec-websocket-protocol'], 'media,other', 'the configured list, comma-joined');
    assert.equal(seen!.headers['sec-websocket-extensions'], undefined);
    assert.equal(seen!.headers.origin, undefined);
    ws.terminate();
  });

  test('a non-101 answer, an extension or a protocol not offered fail every attempt; attempts are retried as configured', async () => {
    const server = http.createServer();
    servers.push(server);
    let mode: 'status' | 'extension' | 'protocol' = 'status';
    let upgrades = 0;
    server.on('upgrade', (request, socket) => {
      upgrades += 1;
      const accept = (extra: string): void => {
        const key = String(request.headers['sec-websocket-key']);
        const digest = crypto.createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${digest}\r\n${extra}\r\n`);
      };
      if (mode === 'status') socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
      else if (mode === 'extension') accept('Sec-WebSocket-Extensions: permessage-deflate\r\n');
      else accept('Sec-WebSocket-Protocol: chat\r\n');
    });
    const port = await listen(server);
    for (const which of ['status', 'extension', 'protocol'] as const) {
      mode = which;
      upgrades = 0;
      const failures: number[] = [];
      await assert.rejects(
        connectWebSocketClient(client({ uri: `ws://127.0.0.1:${port}/`, protocols: 'media', reconnectAttempts: 3 }), { onAttemptFailed: (attempt) => failures.push(attempt) }),
        (error: Error) => error instanceof WebSocketConnectError && /after 3 attempt/.test(error.message),
        which,
      );
      assert.deepEqual(failures, [1, 2, 3], which);
      assert.equal(upgrades, 3, which);
    }
  });

  test('nothing listening fails; abandoning stops the attempts at once', async () => {
    const server = http.createServer();
    const port = await listen(server);
    await new Promise((resolve) => server.close(resolve));
    await assert.rejects(connectWebSocketClient(client({ uri: `ws://127.0.0.1:${port}/`, reconnectAttempts: 2 })), WebSocketConnectError);
    const controller = new AbortController();
    const started = Date.now();
    const attempt = connectWebSocketClient(client({ uri: `ws://127.0.0.1:${port}/`, reconnectAttempts: 50, reconnectInterval: 200 }), { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(attempt, WebSocketConnectError);
    assert.ok(Date.now() - started < 1000, 'abandoned quickly');
  });
});

describe('TLS', () => {
  test('wss with the CA file connects; without it the certificate is refused unless verification is off; tls_enabled turns ws:// into TLS', async () => {
    const server = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) });
    servers.push(server);
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.send('secure'));
    const port = await listen(server);
    const trusted = await connectWebSocketClient(client({ uri: `wss://127.0.0.1:${port}/`, caListFile: certFile }));
    trusted.terminate();
    await assert.rejects(connectWebSocketClient(client({ uri: `wss://127.0.0.1:${port}/` })), WebSocketConnectError);
    const unverified = await connectWebSocketClient(client({ uri: `wss://127.0.0.1:${port}/`, verifyServerCert: false }));
    unverified.terminate();
    // A certificate for another name: refused unless host names go unchecked.
    const misnamed = https.createServer({ cert: readFileSync(misnamedCertFile), key: readFileSync(misnamedKeyFile) });
    servers.push(misnamed);
    new WebSocketServer({ server: misnamed });
    const misnamedPort = await listen(misnamed);
    await assert.rejects(connectWebSocketClient(client({ uri: `wss://127.0.0.1:${misnamedPort}/`, caListFile: misnamedCertFile })), WebSocketConnectError);
    const anyName = await connectWebSocketClient(client({ uri: `wss://127.0.0.1:${misnamedPort}/`, caListFile: misnamedCertFile, verifyServerHostname: false }));
    anyName.terminate();
    const viaFlag = await connectWebSocketClient(client({ uri: `ws://127.0.0.1:${port}/`, tlsEnabled: true, caListFile: certFile }));
    viaFlag.terminate();
    assert.equal(clientUrl(client({ uri: 'ws://example.com/x', tlsEnabled: true })).href, 'wss://example.com:80/x');
    assert.equal(hostHeader(clientUrl(client({ uri: 'wss://example.com/x' }))), 'example.com:443');
    assert.equal(hostHeader(clientUrl(client({ uri: 'ws://[::1]/x' }))), '[::1]:80');
  });
});

describe('the client table', () => {
  test('looks names up without prototype keys', () => {
    const table = new WebSocketClients([client({ name: 'media', uri: 'ws://127.0.0.1:1/' })]);
    assert.equal(table.get('media')?.uri, 'ws://127.0.0.1:1/');
    assert.equal(table.get('constructor'), undefined);
    assert.equal(table.has('__proto__'), false);
    assert.deepEqual(table.names(), ['media']);
  });
});


describe('proxy, early frames and keep-alive', () => {
  test('the media client tunnels through the CONNECT proxy, with TLS inside checked against ca_list_path; a refusing proxy fails every attempt', async () => {
    const server = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) });
    servers.push(server);
    new WebSocketServer({ server }).on('connection', (ws) => ws.send('through'));
    const port = await listen(server);
    const caDir = join(dir, 'cas');
    mkdirSync(caDir, { recursive: true });
    copyFileSync(certFile, join(caDir, 'server.crt'));
    const proxy = await startConnectProxy();
    try {
      const ws = await connectWebSocketClient(client({ uri: `wss://127.0.0.1:${port}/media`, caListPath: caDir, proxyHost: `127.0.0.1:${proxy.port}`, proxyUsername: 'px', proxyPassword: 'pw', enableTcpKeepalives: true }));
      const first = await new Promise<string>((resolve) => onClientMessage(ws, (data) => resolve(String(data))));
      assert.equal(first, 'through');
      ws.terminate();
      const lines = proxy.heads[0]!.split('\r\n');
      assert.equal(lines[0], `CONNECT 127.0.0.1:${port} HTTP/1.1`);
      assert.ok(lines.includes(`Host: 127.0.0.1:${port}`));
      assert.ok(lines.includes(`Proxy-Authorization: Basic ${Buffer.from('px:pw').toString('base64')}`));
      assert.ok(lines.includes('Proxy-Connection: Keep-Alive'));
    } finally {
      await proxy.close();
    }
    const refusing = await startConnectProxy({ refuse: true });
    try {
      await assert.rejects(
        connectWebSocketClient(client({ uri: `wss://127.0.0.1:${port}/`, caListPath: caDir, proxyHost: `127.0.0.1:${refusing.port}`, reconnectAttempts: 2 })),
        (error: Error) => error instanceof WebSocketConnectError && /403/.test(error.message),
      );
      assert.equal(refusing.heads.length, 2);
    } finally {
      await refusing.close();
    }
  });

  test('frames the server sends with its 101 answer reach the listener installed afterwards, in order', async () => {
    const server = http.createServer();
    servers.push(server);
    new WebSocketServer({ server }).on('connection', (ws) => {
      for (const text of ['one', 'two', 'three']) ws.send(text);
    });
    const port = await listen(server);
    const ws = await connectOnce(client({ uri: `ws://127.0.0.1:${port}/` }));
    // Let every frame arrive before anyone listens.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const seen: string[] = [];
    onClientMessage(ws, (data) => seen.push(String(data)));
    assert.deepEqual(seen, ['one', 'two', 'three']);
    ws.terminate();
  });

  test('enable_pingpongs: WS_CLIENT_PING every interval; a server that never answers is cut off', async () => {
    const server = http.createServer();
    servers.push(server);
    const pings: string[] = [];
    new WebSocketServer({ server, autoPong: false }).on('connection', (ws) => ws.on('ping', (data) => pings.push(String(data))));
    const port = await listen(server);
    let timedOut = false;
    const ws = await connectOnce(client({ uri: `ws://127.0.0.1:${port}/`, enablePingpongs: true, pingpongInterval: 1, pingpongProbes: 1 }), { onPingTimeout: () => (timedOut = true) });
    const closed = await new Promise<number>((resolve) => ws.once('close', resolve));
    assert.equal(closed, 1006, 'terminated, not closed politely');
    assert.ok(timedOut);
    assert.deepEqual(pings, ['WS_CLIENT_PING']);
  });
});
