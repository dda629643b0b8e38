// A module reload that fails says why (issue 21, item 19): reloading res_websocket_client.so after
// the configuration file was broken answers 409 with the configuration error, not only "an unknown
// error occurred", and the previous configuration keeps running.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { AUTH } from '../helpers/server.ts';

let dir: string;
let file: string;
let server: RunningServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-reload-'));
  file = join(dir, 'patchbay.yaml');
  writeFileSync(file, `http: { port: 0, bind: 127.0.0.1 }\ndirs: { data: ${JSON.stringify(join(dir, 'data'))} }\nsip: { port: 0 }\nlogging: { console: false }\n`);
  const config = loadConfig({ path: file, env: {} });
  server = await startServer(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
});

after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a reload refused by a broken configuration answers 409 with the reason', async () => {
  writeFileSync(file, `http: { port: 0, bind: 127.0.0.1 }\ndirs: { data: ${JSON.stringify(join(dir, 'data'))} }\nsip: { port: 0 }\nlogging: { console: false }\nwebsocket_clients: [{ name: broken }]\n`);
  const response = await fetch(`${server.url}/ari/asterisk/modules/res_websocket_client.so`, { method: 'PUT', headers: { authorization: AUTH } });
  assert.equal(response.status, 409);
  const { message } = (await response.json()) as { message: string };
  assert.match(message, /^An unknown error occurred while reloading the module: /);
  assert.match(message, /websocket_clients/);
  assert.equal((await fetch(`${server.url}/ari/asterisk/ping`, { headers: { authorization: AUTH } })).status, 200);
});
