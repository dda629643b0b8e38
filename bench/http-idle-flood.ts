// Idle-connection flood against the HTTP server (issue 21, item 4): opens up to `--connections` idle
// TCP connections spread over 127.0.0.x source addresses, then measures an authenticated ARI ping on
// a fresh connection while they are held, and how long after the flood stops the server answers
// again. Bounded: at most 15,000 connections and 60 s.
// The target runs with an open-file limit of `--fd-limit` (default 4096), so that the flood can reach it.
// Usage: tsx bench/http-idle-flood.ts [--connections 6000] [--fd-limit 4096] [--target <checkout root>]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '6000' }, 'fd-limit': { type: 'string', default: '4096' }, target: { type: 'string', default: new URL('..', import.meta.url).pathname } } });
const total = Math.min(Number(values.connections), 15_000);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const deadline = Date.now() + 60_000;

const fdLimit = Math.max(256, Math.min(Number(values['fd-limit']), 65_536));
const child = spawn('sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" --import tsx bench/http-target.ts patchbay`, process.execPath], { cwd: values.target, stdio: ['ignore', 'pipe', 'inherit'] });
const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
const port = Number(new URL(String(chunk).trim()).port);

/** Milliseconds for an authenticated ping on a new connection, or the error. */
function ping(): Promise<string> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.1.1' });
    let received = '';
    const timer = setTimeout(() => { socket.destroy(); resolve('no answer in 5 s'); }, 5000);
    socket.on('data', (data) => {
      received += data.toString('latin1');
      if (received.includes('\r\n\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(received.startsWith('HTTP/1.1 200') ? `${(performance.now() - started).toFixed(1)} ms` : received.split('\r\n')[0]!);
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => { clearTimeout(timer); resolve(err.code ?? String(err)); });
    socket.on('close', () => { clearTimeout(timer); resolve(received === '' ? 'closed without answer' : received.split('\r\n')[0]!); });
    socket.write(`GET /ari/asterisk/ping HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nConnection: close\r\n\r\n`);
  });
}

process.stdout.write(`idle ping: ${await ping()}\n`);
const sockets: net.Socket[] = [];
let failed = 0;
let closedByServer = 0;
for (let i = 0; i < total && Date.now() < deadline; i += 100) {
  await Promise.all(Array.from({ length: Math.min(100, total - i) }, (_, k) => new Promise<void>((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: `127.0.${2 + ((i + k) % 250)}.${1 + Math.floor((i + k) / 250) % 250}` });
    socket.once('connect', () => { sockets.push(socket); resolve(); });
    socket.once('close', () => { closedByServer += 1; });
    socket.once('error', () => { failed += 1; resolve(); });
  })));
}
process.stdout.write(`opened ${sockets.length} idle connections (${failed} failed)\n`);
const pings: string[] = [];
for (let i = 0; i < 5; i++) pings.push(await ping());
process.stdout.write(`ping under attack: ${pings.join(', ')}\n`);
await new Promise((resolve) => setTimeout(resolve, 2000));
process.stdout.write(`after 2 s: server closed ${closedByServer} of them; ping ${await ping()}\n`);
const stopped = Date.now();
for (const socket of sockets) socket.destroy();
let answer = '';
while (Date.now() < deadline && !(answer = await ping()).endsWith(' ms')) await new Promise((resolve) => setTimeout(resolve, 100));
process.stdout.write(`flood stopped: answered after ${Date.now() - stopped} ms (${answer})\n`);
child.kill();
process.exit(0);
