// Subscribe-all fan-out (issue 21 item 15): N applications connect with subscribeAll=true (100 per
// WebSocket), then one call is made and ended (originate Local/echo into the app `bench`, DELETE).
// Prints how many applications were accepted, the messages the call produced across all sockets,
// and the worst /ari/asterisk/ping latency while it ran. In-process; bounded (20 s per phase).
// Usage: npx tsx bench/subscribe-all.ts [--apps 8000] [--limit 0]   (--limit: ari.max_subscribe_all_apps)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { loadConfig } from '../src/config/config.ts';
import { startServer } from '../src/server.ts';

const { values } = parseArgs({ options: { apps: { type: 'string', default: '8000' }, limit: { type: 'string', default: '100' } } });
const apps = Math.min(Math.max(Number(values.apps) || 1, 1), 20_000);
const limit = Math.max(0, Number(values.limit) || 0);
const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-fanout-'));
const config = loadConfig({
  path: null,
  env: {},
  overrides: { http: { port: 0, bind: '127.0.0.1' }, sip: { port: 0 }, dirs: { data: dataDir }, ari: { developer_mode: false, max_subscribe_all_apps: limit }, logging: { console: false, level: 'warn' } },
});
const server = await startServer(config, { logDestination: new Writable({ write: (_c, _e, done) => done() }) });
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const wsUrl = server.url.replace('http', 'ws');
let messages = 0;
let accepted = 0;
const sockets: WebSocket[] = [];
const open = (query: string): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = new WebSocket(`${wsUrl}/ari/events?${query}`, { headers: { authorization: AUTH } });
    sockets.push(socket);
    socket.on('message', () => messages++);
    socket.once('open', () => resolve(true));
    socket.once('unexpected-response', (_r, response) => {
      response.resume();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
const deadline = Date.now() + 20_000;
for (let first = 0; first < apps && Date.now() < deadline; first += 100) {
  const names = Array.from({ length: Math.min(100, apps - first) }, (_, i) => `all${first + i}`);
  if (await open(`app=${names.join(',')}&subscribeAll=true`)) accepted += names.length;
}
await open('app=bench');
await new Promise((resolve) => setTimeout(resolve, 300));
messages = 0;
let worstPing = 0;
let pinging = true;
const pinger = (async () => {
  while (pinging) {
    const began = performance.now();
    await fetch(`${server.url}/ari/asterisk/ping`, { headers: { authorization: AUTH } }).then((r) => r.text());
    worstPing = Math.max(worstPing, performance.now() - began);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
})();
const began = performance.now();
const created = await fetch(`${server.url}/ari/channels?endpoint=Local/echo@default&app=bench&channelId=fanout`, { method: 'POST', headers: { authorization: AUTH } });
await created.text();
await new Promise((resolve) => setTimeout(resolve, 200));
await fetch(`${server.url}/ari/channels/fanout`, { method: 'DELETE', headers: { authorization: AUTH } }).then((r) => r.text());
while (server.core.channels.size > 0 && performance.now() - began < 20_000) await new Promise((resolve) => setTimeout(resolve, 20));
await new Promise((resolve) => setTimeout(resolve, 500));
pinging = false;
await pinger;
console.log(`limit ${limit || 'off'}: ${accepted}/${apps} subscribe-all apps accepted; one call → ${messages} messages; worst ping ${worstPing.toFixed(0)} ms; call took ${(performance.now() - began).toFixed(0)} ms`);
for (const socket of sockets) socket.terminate();
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
