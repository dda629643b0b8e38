// Outbound WebSocket benchmark: events per second from the core to an application Patchbay
// connected to (persistent outbound WebSocket), live and flushed from the queue after a
// reconnection. Patchbay runs in this process; the application is a `ws` server in this process.
// Usage: npm run bench:outbound-ws [-- --events 100000]
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';
import { loadConfig } from '../src/config/config.ts';
import { formatAriDate } from '../src/util/ari-date.ts';
import { startServer } from '../src/server.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '100000' } } });
const count = Math.min(Math.max(Number(values.events) || 100_000, 1), 1_000_000);

const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, handleProtocols: () => 'ari' });
await new Promise((resolve) => wss.once('listening', resolve));
const port = (wss.address() as AddressInfo).port;
let received = 0;
let onCount: (() => void) | undefined;
let target = 0;
let current: WebSocket | undefined;
let refuse = false;
wss.on('connection', (ws) => {
  if (refuse) return ws.terminate();
  current = ws;
  ws.on('message', () => {
    received++;
    if (received >= target) onCount?.();
  });
});

const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-owc-'));
const config = loadConfig({
  path: null,
  env: {},
  overrides: {
    http: { port: 0 },
    sip: { port: 0 },
    dirs: { data: dataDir },
    ari: {
      developer_mode: false,
      outbound_websockets: [{ name: 'bench', websocket_client_id: 'app', apps: ['bench'], local_ari_user: 'asterisk', queue_max_bytes: 1024 * 1024 * 1024 }],
    },
    websocket_clients: [{ name: 'app', uri: `ws://127.0.0.1:${port}/`, protocols: 'ari', connection_type: 'persistent', reconnect_interval: 20 }],
    logging: { console: false, level: 'warn' },
  },
});
const server = await startServer(config, { logDestination: new Writable({ write: (_c, _e, done) => done() }) });

function waitFor(n: number): Promise<void> {
  target = n;
  return received >= n ? Promise.resolve() : new Promise((resolve) => (onCount = resolve));
}

function raise(n: number): void {
  for (let i = 0; i < n; i++) {
    server.core.applications.sendTo('bench', { type: 'ChannelUserevent', timestamp: formatAriDate(), eventname: `e${i}`, userevent: { eventname: `e${i}` } });
  }
}

await waitFor(1); // ApplicationRegistered
received = 0;
let started = performance.now();
raise(count);
await waitFor(count);
let seconds = (performance.now() - started) / 1000;
console.log(`live: ${count} events in ${seconds.toFixed(2)} s = ${Math.round(count / seconds)} events/s`);

// Down: the events wait in the queue; on reconnection they are flushed in order.
refuse = true;
current?.terminate();
await new Promise((resolve) => setTimeout(resolve, 100));
raise(count);
received = 0;
refuse = false;
started = performance.now();
await waitFor(count + 1);
seconds = (performance.now() - started) / 1000;
console.log(`queued while down, flushed on reconnection: ${count} in ${seconds.toFixed(2)} s = ${Math.round(count / seconds)} events/s`);

await server.stop();
wss.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
