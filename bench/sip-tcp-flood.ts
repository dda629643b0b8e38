// Idle SIP TCP connections from one host (issue 21, item 5): opens `--connections` idle TCP
// connections from 127.0.0.1 to the SIP port, then times an OPTIONS over TCP from another address
// while they are held, and again once they are gone. Bounded: at most 5,000 connections, 60 s.
// Usage: tsx bench/sip-tcp-flood.ts [--connections 1100] [--target <checkout root>]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '1100' }, target: { type: 'string', default: new URL('..', import.meta.url).pathname } } });
const total = Math.min(Number(values.connections), 5000);
const { loadConfig } = (await import(`${values.target}/src/config/config.ts`)) as typeof import('../src/config/config.ts');
const { startServer } = (await import(`${values.target}/src/server.ts`)) as typeof import('../src/server.ts');
const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-siptcp-'));
const config = loadConfig({ path: null, env: {}, overrides: { http: { port: 0 }, sip: { port: 0 }, dirs: { data: dataDir }, logging: { console: false, level: 'warn' } } });
const server = await startServer(config, { logDestination: new Writable({ write: (_c, _e, done) => done() }) });
const port = server.core.pjsip.port!;

/** An OPTIONS over a new TCP connection from 127.0.0.2: ms to the answer, or what went wrong. */
function options(): Promise<string> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    let text = '';
    const done = (what: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(what);
    };
    const timer = setTimeout(() => done('no answer in 5 s'), 5000);
    socket.on('data', (data) => {
      text += data.toString('latin1');
      if (/^SIP\/2\.0 [2-6]\d\d/m.test(text)) done(`${(performance.now() - started).toFixed(1)} ms`);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? String(err)));
    socket.on('close', () => done(text === '' ? 'closed without answer' : text.split('\r\n')[0]!));
    socket.once('connect', () => {
      const local = socket.localPort;
      socket.write(
        [
          `OPTIONS sip:127.0.0.1:${port} SIP/2.0`,
          `Via: SIP/2.0/TCP 127.0.0.2:${local};branch=z9hG4bK${randomBytes(6).toString('hex')}`,
          'Max-Forwards: 70',
          `From: <sip:probe@127.0.0.2>;tag=${randomBytes(4).toString('hex')}`,
          `To: <sip:127.0.0.1:${port}>`,
          `Call-ID: ${randomBytes(8).toString('hex')}`,
          'CSeq: 1 OPTIONS',
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n'),
      );
    });
  });
}

process.stdout.write(`OPTIONS before: ${await options()}\n`);
const sockets: net.Socket[] = [];
let closedByServer = 0;
for (let i = 0; i < total; i += 100) {
  await Promise.all(Array.from({ length: Math.min(100, total - i) }, () => new Promise<void>((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.1' });
    socket.once('connect', () => { sockets.push(socket); resolve(); });
    socket.once('close', () => { closedByServer += 1; });
    socket.once('error', () => resolve());
  })));
}
await new Promise((resolve) => setTimeout(resolve, 200));
process.stdout.write(`${total} idle connections from one host: ${total - closedByServer} held\n`);
const during: string[] = [];
for (let i = 0; i < 3; i++) during.push(await options());
process.stdout.write(`OPTIONS from another host meanwhile: ${during.join(', ')}\n`);
const stopped = Date.now();
for (const socket of sockets) socket.destroy();
let answer = '';
while (Date.now() - stopped < 30_000 && !(answer = await options()).endsWith(' ms')) await new Promise((resolve) => setTimeout(resolve, 100));
process.stdout.write(`flood stopped: answered after ${Date.now() - stopped} ms (${answer})\n`);
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
