// The SIP WebSocket transport on its own (an HTTP server handing it upgrades): a connection that
// stops answering pings is closed (keep-alive), the total number of connections is bounded, a
// message without a connection to its destination cannot be sent (a browser takes none), and a
// request's Via gets received/rport for its `.invalid` host.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { parseMessage } from '../../src/sip/parser.ts';
import type { SipMessage } from '../../src/sip/message.ts';
import type { Source } from '../../src/sip/transport.ts';
import { SipWebSocketTransport } from '../../src/sip/websocket-transport.ts';
import { waitUntil } from './helpers.ts';

let server: http.Server;
let port: number;
const received: Array<{ message: SipMessage; source: Source }> = [];
let closed = 0;
const transport = new SipWebSocketTransport(
  { host: '192.0.2.1', port: 8088, pingIntervalSeconds: 1, maxConnections: 2, maxConnectionsPerSource: 10 },
  { onMessage: (message, source) => received.push({ message, source }), onConnectionClosed: () => void (closed += 1) },
);

before(async () => {
  server = http.createServer((_request, response) => response.writeHead(404).end());
  server.on('upgrade', (request, socket, head) => transport.handleUpgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as net.AddressInfo).port;
});

after(async () => {
  await transport.close();
  server.close();
});

/** An upgrade done by hand, so that pings are never answered. */
async function silentClient(): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: sip\r\n\r\n`);
  const head = await new Promise<string>((resolve) => socket.once('data', (data) => resolve(data.toString('latin1'))));
  assert.match(head, /^HTTP\/1\.1 101 /);
  assert.match(head, /Sec-WebSocket-Protocol: sip/i);
  return socket;
}

test('a connection that does not answer pings is closed; one that does stays', { timeout: 20_000 }, async () => {
  const silent = await silentClient();
  const ended = new Promise<void>((resolve) => silent.once('close', () => resolve()));
  const polite = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['sip']);
  await new Promise<void>((resolve) => polite.once('open', () => resolve()));
  await ended;
  assert.equal(polite.readyState, WebSocket.OPEN);
  await waitUntil(() => transport.connectionCount === 1, 5000, 'one connection left');
  polite.close();
  await waitUntil(() => transport.connectionCount === 0, 5000, 'none left');
});

test('connections in total are bounded; a request gets received and rport; nothing is sent without a connection', { timeout: 20_000 }, async () => {
  const open = async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['sip']);
    return new Promise<WebSocket>((resolve, reject) => {
      socket.once('open', () => resolve(socket));
      socket.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    });
  };
  const [first, second] = [await open(), await open()];
  await assert.rejects(open(), /HTTP 503/);
  first.send('OPTIONS sip:192.0.2.1 SIP/2.0\r\nVia: SIP/2.0/WS abc.invalid;branch=z9hG4bK-1;rport\r\nMax-Forwards: 70\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:a@b>\r\nCall-ID: ws-1\r\nCSeq: 1 OPTIONS\r\n\r\n');
  await waitUntil(() => received.length === 1, 5000, 'the request');
  const { message, source } = received[0]!;
  assert.equal(source.transport, 'WS');
  const via = message.topVia()!;
  assert.equal(via.received, '127.0.0.1');
  assert.equal(via.rport, source.port);
  const request = parseMessage('OPTIONS sip:x@abc.invalid SIP/2.0\r\nVia: SIP/2.0/WS 192.0.2.1;branch=z9hG4bK-2\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:a@b>\r\nCall-ID: ws-2\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n');
  assert.ok(request.ok);
  await assert.rejects(transport.send(request.message, { transport: 'WS', host: '127.0.0.1', port: 1 }), /no WebSocket connection/);
  const heard = new Promise<string>((resolve) => first.once('message', (data) => resolve(data.toString())));
  await transport.send(request.message, { transport: 'WS', host: '127.0.0.1', port: source.port });
  assert.match(await heard, /^OPTIONS sip:x@abc\.invalid SIP\/2\.0/);
  first.close();
  second.close();
  await waitUntil(() => transport.connectionCount === 0, 5000, 'none left');
  assert.ok(closed >= 3);
});
