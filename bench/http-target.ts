// A benchmark target in its own process: `patchbay` (the real server) or `bare` (node:http
// answering the same JSON with no routing, auth or validation). Prints its URL on stdout.
import http from 'node:http';
import os from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../src/config/config.ts';
import { formatAriDate } from '../src/util/ari-date.ts';
import { startServer } from '../src/server.ts';

const kind = process.argv[2];
const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-'));

if (kind === 'patchbay') {
  const config = loadConfig({ path: null, env: {}, overrides: { http: { port: 0 }, dirs: { data: dataDir }, logging: { console: false, level: 'warn' } } });
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const server = await startServer(config, { logDestination: sink });
  process.stdout.write(`${server.url}\n`);
} else {
  const serverId = '02:00:00:00:00:01';
  const startedAt = formatAriDate();
  const server = http.createServer((request, response) => {
    let body: unknown;
    if (request.url?.startsWith('/ari/asterisk/ping')) body = { ping: 'pong', timestamp: formatAriDate(), asterisk_id: serverId };
    else if (request.url?.startsWith('/ari/asterisk/info')) {
      body = {
        build: { os: os.type(), kernel: os.release(), options: '', machine: os.arch(), date: startedAt, user: 'patchbay' },
        system: { version: '0.1.0', entity_id: serverId },
        config: { name: os.hostname(), default_language: 'en', setid: { user: 'root', group: 'root' } },
        status: { startup_time: startedAt, last_reload_time: startedAt },
      };
    }
    const text = JSON.stringify(body ?? { message: 'Resource not found' });
    response.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    response.end(text);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    process.stdout.write(`http://127.0.0.1:${address.port}\n`);
  });
}
