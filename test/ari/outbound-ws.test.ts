// ARI outbound WebSockets against a real WebSocket server playing the application: the handshake,
// ApplicationRegistered first, events, REST over the socket, reconnection with the queue flushed
// in order, the queue's age bound, reload adding/changing/removing connections, the configuration
// (YAML and ari.conf), wss with a private CA, and the HTTP CONNECT proxy. Per-call connections:
// outbound-ws-per-call.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig, type DeepPartialYaml } from '../../src/config/config.ts';
import { ARI_DATE_PATTERN } from '../../src/util/ari-date.ts';
import { startServer } from '../../src/server.ts';
import { startConnectProxy } from '../helpers/connect-proxy.ts';
import { bodyOf, cleanups, runCleanups, startApp, startOnFile, waitFor } from './outbound-ws-helpers.ts';

after(runCleanups);

function persistentYaml(port: number, extra = '', apps = 'alpha, beta'): string {
  return `
websocket_clients:
  - name: app
    uri: ws://127.0.0.1:${port}/ari-app?x=1
    protocols: ari
    username: bob
    password: secret
    connection_type: persistent
    reconnect_interval: 50
    reconnect_attempts: 2
ari:
  outbound_websockets:
    - name: conn
      websocket_client_id: app
      apps: ${apps}
      local_ari_user: asterisk
${extra}`;
}

describe('persistent connection', () => {
  test('handshake as Asterisk sends it, ApplicationRegistered first, REST over the socket, Stasis events', async () => {
    const app = await startApp();
    const pb = await startOnFile(persistentYaml(app.port));
    const conn = await app.nextConnection();
    const headers = conn.request.headers;
    assert.equal(conn.request.url, '/ari-app?x=1');
    assert.equal(headers.authorization, `Basic ${Buffer.from('bob:secret').toString('base64')}`);
    assert.equal(headers['sec-websocket-protocol'], 'ari');
    assert.equal(headers['sec-websocket-extensions'], undefined);
    assert.equal(headers.host, `127.0.0.1:${app.port}`);
    assert.equal(headers.origin, undefined);

    const first = await conn.next();
    const second = await conn.next();
    for (const [message, name] of [[first, 'alpha'], [second, 'beta']] as const) {
      assert.equal(message.type, 'ApplicationRegistered');
      assert.equal(message.application, name);
      assert.equal(message.asterisk_id, pb.server.core.serverId);
      assert.match(String(message.timestamp), ARI_DATE_PATTERN);
    }
    // The applications are registered at the server.
    const apps = (await (await pb.ari('/applications')).json()) as { name: string }[];
    assert.deepEqual(apps.map((a) => a.name).sort(), ['alpha', 'beta']);

    const list = await conn.rest('GET', 'channels');
    assert.equal(list.status_code, 200);
    assert.equal(list.application, 'alpha');
    assert.equal(list.transaction_id, 't1');
    assert.deepEqual(bodyOf(list), []);

    const created = await conn.rest('POST', 'channels', {
      query_strings: [
        { name: 'endpoint', value: 'Local/answer@default' },
        { name: 'app', value: 'alpha' },
        { name: 'appArgs', value: 'hello' },
      ],
    });
    assert.equal(created.status_code, 200, String(created.message_body));
    const channelId = (bodyOf(created) as { id: string }).id;
    const started = await conn.until((m) => m.type === 'StasisStart');
    const stasisStart = started[started.length - 1]!;
    assert.equal(stasisStart.application, 'alpha');
    assert.deepEqual(stasisStart.args, ['hello']);
    assert.equal((stasisStart.channel as { id: string }).id, channelId);

    const hangup = await conn.rest('DELETE', `channels/${channelId}`);
    assert.equal(hangup.status_code, 204);
    assert.equal(hangup.message_body, undefined);
    await conn.until((m) => m.type === 'StasisEnd');
    await pb.stop();
    // Shutdown tells the application and closes normally.
    const rest = await conn.until((m) => m.type === 'ApplicationUnregistered' && m.application === 'beta');
    assert.ok(rest.some((m) => m.type === 'ApplicationUnregistered' && m.application === 'alpha'));
    assert.equal(await conn.closed, 1000);
  });

  test('hostile frames: bad JSON gets a 400 RESTResponse, binary frames are ignored, the socket goes on', async () => {
    const app = await startApp();
    await startOnFile(persistentYaml(app.port));
    const conn = await app.nextConnection();
    await conn.until((m) => m.type === 'ApplicationRegistered' && m.application === 'beta');
    conn.socket.send(Buffer.from([0, 1, 2, 3]), { binary: true });
    conn.socket.send('{not json');
    const bad = await conn.next();
    assert.equal(bad.type, 'RESTResponse');
    assert.equal(bad.status_code, 400);
    conn.socket.send(JSON.stringify({ type: 'RESTRequest', method: 'GET' }));
    assert.equal((await conn.next()).status_code, 400);
    const ok = await conn.rest('GET', 'asterisk/ping');
    assert.equal(ok.status_code, 200);
    assert.equal(conn.messages.length, 0, 'the binary frame was not answered');
  });

  test('a read-only local_ari_user may only GET over the socket', async () => {
    const app = await startApp();
    const pbRo = await startOnFile(`${persistentYaml(app.port).replace('local_ari_user: asterisk', 'local_ari_user: watcher')}
  users:
    - name: asterisk
      password: asterisk
    - name: watcher
      password: watching
      read_only: true
`);
    const conn = await app.nextConnection();
    const got = await conn.rest('GET', 'channels').catch((err: Error) => {
      console.log(pbRo.logLines.join(''));
      throw err;
    });
    assert.equal(got.status_code, 200);
    const refused = await conn.rest('POST', 'channels', { query_strings: [{ name: 'endpoint', value: 'Local/answer@default' }, { name: 'app', value: 'alpha' }] });
    assert.equal(refused.status_code, 403);
  });

  test('drop and reconnect: events raised while down arrive in order, then ApplicationRegistered per app (sorted)', async () => {
    const app = await startApp();
    const pb = await startOnFile(persistentYaml(app.port, '', 'zeta, alpha'));
    const conn = await app.nextConnection();
    await conn.until((m) => m.type === 'ApplicationRegistered' && m.application === 'alpha');
    app.refuse = true;
    const attemptsBefore = app.attempts;
    conn.socket.terminate();
    await waitFor(() => app.attempts >= attemptsBefore + 2);
    for (let i = 1; i <= 5; i++) {
      const response = await pb.ari(`/events/user/seq-${i}?application=${i % 2 ? 'alpha' : 'zeta'}`, { method: 'POST' });
      assert.equal(response.status, 204);
    }
    app.refuse = false;
    const again = await app.nextConnection();
    const seen = [];
    for (let i = 0; i < 7; i++) seen.push(await again.next());
    assert.deepEqual(
      seen.map((m) => `${m.type}:${m.type === 'ChannelUserevent' ? String(m.eventname) : String(m.application)}`),
      ['ChannelUserevent:seq-1', 'ChannelUserevent:seq-2', 'ChannelUserevent:seq-3', 'ChannelUserevent:seq-4', 'ChannelUserevent:seq-5', 'ApplicationRegistered:alpha', 'ApplicationRegistered:zeta'],
    );
    assert.equal(seen[1]!.application, 'zeta');
  });

  test('the queue drops messages older than queue_max_age_seconds, and keeps to queue_max_bytes', async () => {
    const app = await startApp();
    // 3 s of age: the stale event outlives it; the ten big ones must not (at 1 s, the ten requests
    // and the reconnection took longer on a loaded machine and the age dropped all but two).
    const pb = await startOnFile(persistentYaml(app.port).replace('local_ari_user: asterisk', 'local_ari_user: asterisk\n      queue_max_age_seconds: 3\n      queue_max_bytes: 65536'));
    const conn = await app.nextConnection();
    await conn.until((m) => m.type === 'ApplicationRegistered' && m.application === 'beta');
    app.refuse = true;
    const attemptsBefore = app.attempts;
    conn.socket.terminate();
    await waitFor(() => app.attempts > attemptsBefore);
    assert.equal((await pb.ari('/events/user/stale?application=alpha', { method: 'POST' })).status, 204);
    await new Promise((resolve) => setTimeout(resolve, 3200));
    // 10 events of ~10 KB each: only the newest that fit in 64 KiB are kept.
    const bigFrom = Date.now();
    const padding = 'x'.repeat(10_000);
    for (let i = 1; i <= 10; i++) {
      const response = await pb.ari(`/events/user/big-${i}?application=alpha`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ variables: { padding } }),
      });
      assert.equal(response.status, 204);
    }
    app.refuse = false;
    const again = await app.nextConnection();
    const seen = await again.until((m) => m.type === 'ApplicationRegistered' && m.application === 'beta');
    const names = seen.filter((m) => m.type === 'ChannelUserevent').map((m) => String(m.eventname));
    assert.ok(!names.includes('stale'), `the stale event was kept: ${names.join(',')}`);
    // Four to six fit in 64 KiB; fewer only if the age limit took the oldest of them as well, which
    // it may only when the requests and the reconnection took longer than its 3 s.
    const bigTookMs = Date.now() - bigFrom;
    assert.ok(names.length >= (bigTookMs < 3000 ? 4 : 1) && names.length <= 6, `kept ${names.join(',')} (${bigTookMs} ms)`);
    // The newest are kept, in order.
    assert.deepEqual(names, Array.from({ length: names.length }, (_, i) => `big-${10 - names.length + 1 + i}`));
    assert.ok(pb.logLines.some((line) => line.includes('dropping the oldest messages')));
  });

  test('an application that first answers after queue_max_age_seconds still gets ApplicationRegistered first', async () => {
    const app = await startApp();
    app.refuse = true;
    const pb = await startOnFile(persistentYaml(app.port).replace('local_ari_user: asterisk', 'local_ari_user: asterisk\n      queue_max_age_seconds: 1'));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal((await pb.ari('/events/user/fresh?application=beta', { method: 'POST' })).status, 204);
    app.refuse = false;
    const conn = await app.nextConnection();
    const seen = [await conn.next(), await conn.next(), await conn.next()];
    assert.deepEqual(seen.map((m) => `${m.type}:${String(m.application)}`), ['ApplicationRegistered:alpha', 'ApplicationRegistered:beta', 'ChannelUserevent:beta']);
  });

  test('PING keep-alive: WS_CLIENT_PING every interval; a server that stops answering is dropped and reconnected', async () => {
    const app = await startApp({ autoPong: false });
    await startOnFile(persistentYaml(app.port).replace('    reconnect_interval: 50', '    reconnect_interval: 50\n    enable_pingpongs: true\n    pingpong_interval: 1\n    pingpong_probes: 1'));
    const conn = await app.nextConnection();
    const ping = await new Promise<Buffer>((resolve) => conn.socket.once('ping', resolve));
    assert.equal(ping.toString(), 'WS_CLIENT_PING');
    // Not answered: the next interval finds the probe unanswered, closes and reconnects.
    const again = await app.nextConnection(15_000);
    const registered = await again.next();
    assert.equal(registered.type, 'ApplicationRegistered');
    assert.equal(registered.application, 'alpha');
  });

  test('reload adds, changes and removes outbound WebSockets', async () => {
    const app = await startApp();
    const second = await startApp();
    const one = persistentYaml(app.port);
    const pb = await startOnFile(one);
    const conn = await app.nextConnection();
    await conn.until((m) => m.type === 'ApplicationRegistered' && m.application === 'beta');

    // Add a connection to another server, and an application to the first.
    const withSecond = `${persistentYaml(app.port, '', 'alpha, beta, delta')}
    - name: second
      websocket_client_id: other
      apps: gamma
      local_ari_user: asterisk
`.replace('websocket_clients:\n', `websocket_clients:
  - name: other
    uri: ws://127.0.0.1:${second.port}/
    protocols: ari
    connection_type: persistent
    reconnect_interval: 50
`);
    pb.write(withSecond);
    assert.equal((await pb.ari('/asterisk/modules/res_websocket_client.so', { method: 'PUT' })).status, 204);
    const conn2 = await second.nextConnection();
    const registered = await conn2.next();
    assert.equal(registered.type, 'ApplicationRegistered');
    assert.equal(registered.application, 'gamma');
    const delta = await conn.next();
    assert.equal(delta.type, 'ApplicationRegistered');
    assert.equal(delta.application, 'delta');
    assert.equal(app.connections.length, 1, 'an apps change does not reconnect');
    const names = ((await (await pb.ari('/applications')).json()) as { name: string }[]).map((a) => a.name).sort();
    assert.deepEqual(names, ['alpha', 'beta', 'delta', 'gamma']);

    // A bad file is refused and changes nothing.
    pb.write(withSecond.replace('local_ari_user: asterisk\n', 'local_ari_user: nobody\n'));
    assert.equal((await pb.ari('/asterisk/modules/res_websocket_client.so', { method: 'PUT' })).status, 409);
    assert.equal((await pb.ari('/applications/gamma')).status, 200);

    // Remove the second connection and application beta (through res_ari.so, as Asterisk's ari.conf reload).
    pb.write(persistentYaml(app.port, '', 'alpha, delta'));
    assert.equal((await pb.ari('/asterisk/modules/res_ari.so', { method: 'PUT' })).status, 204);
    const unregistered = await conn2.next();
    assert.equal(unregistered.type, 'ApplicationUnregistered');
    assert.equal(unregistered.application, 'gamma');
    assert.equal(await conn2.closed, 1000);
    const betaGone = await conn.next();
    assert.equal(betaGone.type, 'ApplicationUnregistered');
    assert.equal(betaGone.application, 'beta');
    assert.equal((await pb.ari('/applications/gamma')).status, 404);
    assert.equal((await pb.ari('/applications/beta')).status, 404);

    // A changed connection setting (the password) reconnects with the new one.
    pb.write(persistentYaml(app.port, '', 'alpha, delta').replace('password: secret', 'password: changed'));
    assert.equal((await pb.ari('/asterisk/modules/res_websocket_client.so', { method: 'PUT' })).status, 204);
    assert.equal(await conn.closed, 1000);
    const reconnected = await app.nextConnection();
    assert.equal(reconnected.request.headers.authorization, `Basic ${Buffer.from('bob:changed').toString('base64')}`);
    await reconnected.until((m) => m.type === 'ApplicationRegistered' && m.application === 'delta');

    // subscribe_all: every application is unregistered and registered again, on the same socket.
    pb.write(persistentYaml(app.port, '', 'alpha, delta').replace('password: secret', 'password: changed').replace('local_ari_user: asterisk', 'local_ari_user: asterisk\n      subscribe_all: true'));
    assert.equal((await pb.ari('/asterisk/modules/res_websocket_client.so', { method: 'PUT' })).status, 204);
    const cycle = [await reconnected.next(), await reconnected.next(), await reconnected.next(), await reconnected.next()];
    assert.deepEqual(cycle.map((m) => `${m.type}:${String(m.application)}`), [
      'ApplicationUnregistered:alpha', 'ApplicationUnregistered:delta', 'ApplicationRegistered:alpha', 'ApplicationRegistered:delta',
    ]);
    assert.equal(app.connections.length, 2, 'subscribe_all does not reconnect');

    // SIGHUP's configuration reload applies outbound WebSockets live too.
    pb.write(persistentYaml(app.port, '', 'alpha, delta, epsilon').replace('password: secret', 'password: changed').replace('local_ari_user: asterisk', 'local_ari_user: asterisk\n      subscribe_all: true'));
    const changes = pb.server.applyConfig(pb.read());
    assert.ok(changes.live.includes('ari.outbound_websockets'), JSON.stringify(changes));
    assert.ok(!changes.atRestart.some((key) => key.includes('outbound') || key.includes('websocket_clients')), JSON.stringify(changes));
    const epsilon = await reconnected.next();
    assert.equal(epsilon.type, 'ApplicationRegistered');
    assert.equal(epsilon.application, 'epsilon');
  });
});

describe('configuration', () => {
  const client = { name: 'c', uri: 'ws://127.0.0.1:9/', connection_type: 'persistent' as const };
  const owc = { name: 'o', websocket_client_id: 'c', apps: ['a'], local_ari_user: 'asterisk' };
  const load = (overrides: DeepPartialYaml) => loadConfig({ path: null, env: {}, overrides: { dirs: { data: tmpdir() }, server_id: '02:00:00:00:00:01', ...overrides } });
  const refused = (overrides: DeepPartialYaml, key: string, pattern: RegExp): void => {
    assert.throws(() => load(overrides), (err: Error & { key?: string }) => {
      assert.equal(err.key, key);
      assert.match(err.message, pattern);
      return true;
    });
  };

  test('a valid configuration loads, with the Asterisk defaults', () => {
    const config = load({ websocket_clients: [client], ari: { outbound_websockets: [{ ...owc, apps: 'a, b' as unknown as string[] }] } });
    assert.deepEqual(config.ari.outboundWebsockets[0]!.apps, ['a', 'b']);
    const loaded = config.websocketClients[0]!;
    assert.equal(loaded.connectionTimeout, 500);
    assert.equal(loaded.reconnectInterval, 500);
    assert.equal(loaded.reconnectAttempts, 4);
    assert.equal(loaded.verifyServerCert, true);
    assert.equal(loaded.verifyServerHostname, true);
  });

  test('references, duplicates and values are checked', () => {
    refused({ websocket_clients: [client], ari: { outbound_websockets: [{ ...owc, websocket_client_id: 'x' }] } }, 'ari.outbound_websockets[0].websocket_client_id', /no websocket_clients entry is named 'x'/);
    refused({ websocket_clients: [client], ari: { outbound_websockets: [{ ...owc, local_ari_user: 'nobody' }] } }, 'ari.outbound_websockets[0].local_ari_user', /no ari.users entry/);
    refused({ websocket_clients: [client], ari: { outbound_websockets: [owc, { ...owc, name: 'p' }] } }, 'ari.outbound_websockets[1].apps', /already served by outbound WebSocket 'o'/);
    refused({ websocket_clients: [client], ari: { outbound_websockets: [{ ...owc, apps: ['x'.repeat(74)] }] } }, 'ari.outbound_websockets[0].apps[0]', /at most 73/);
    refused({ websocket_clients: [{ ...client, uri: 'http://h/' }] }, 'websocket_clients[0].uri', /ws:\/\/ or wss:\/\//);
    refused({ websocket_clients: [{ ...client, proxy_username: 'u' }] }, 'websocket_clients[0].proxy_password', /go together/);
    refused({ websocket_clients: [{ ...client, proxy_host: 'proxy' }] }, 'websocket_clients[0].proxy_host', /port is required/);
    refused({ websocket_clients: [client, client] }, 'websocket_clients[1].name', /duplicate/);
  });
});

describe('Asterisk configuration files (asterisk_config_dir)', () => {
  test("ari.conf type=outbound_websocket and websocket_client.conf become the same settings, and a server connects with them", async () => {
    const app = await startApp();
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-owc-etc-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'ari.conf'), [
      '[general]', 'enabled = yes', '',
      '[asterisk]', 'type = user', 'password = asterisk', '',
      '[my-connection]', 'type = outbound_websocket', 'websocket_client_id = app-server', 'apps = etc-one, etc-two', 'local_ari_user = asterisk', 'subscribe_all = yes', 'exotic = 1', '',
    ].join('\n'));
    writeFileSync(join(dir, 'websocket_client.conf'), [
      '[app-server]', 'type = websocket_client', `uri = ws://127.0.0.1:${app.port}/etc`, 'protocols = ari', 'connection_type = persistent',
      'username = etc-user', 'password = etc-pass', 'reconnect_interval = 100', 'verify_server_cert = no', 'enable_pingpongs = yes', '',
    ].join('\n'));
    const base = { asterisk_config_dir: dir, dirs: { data: join(dir, 'data') }, http: { port: 0 }, sip: { port: 0 }, logging: { console: false } };
    const config = loadConfig({ path: null, env: {}, overrides: base });
    const outbound = config.ari.outboundWebsockets[0]!;
    assert.deepEqual([outbound.name, outbound.websocketClientId, outbound.apps, outbound.localAriUser, outbound.subscribeAll], ['my-connection', 'app-server', ['etc-one', 'etc-two'], 'asterisk', true]);
    const client = config.websocketClients[0]!;
    assert.deepEqual([client.name, client.connectionType, client.reconnectInterval, client.verifyServerCert, client.enablePingpongs], ['app-server', 'persistent', 100, false, true]);
    assert.ok(config.warnings.some((line) => /ari\.conf:\d+: outbound_websocket option exotic is not supported/.test(line)), config.warnings.join('\n'));
    const server = await startServer(config, { logDestination: new Writable({ write: (_c, _e, done) => done() }) });
    cleanups.push(() => server.stop());
    const conn = await app.nextConnection();
    assert.equal(conn.request.url, '/etc');
    assert.equal(conn.request.headers.authorization, `Basic ${Buffer.from('etc-user:etc-pass').toString('base64')}`);
    assert.equal((await conn.next()).application, 'etc-one');
  });
});

describe('TLS and proxy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-owc-tls-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const run = promisify(execFile);

  async function makeCa(): Promise<{ ca: string; key: string; cert: string }> {
    const ca = join(dir, 'ca.pem');
    const caKey = join(dir, 'ca.key');
    const key = join(dir, 'server.key');
    const csr = join(dir, 'server.csr');
    const cert = join(dir, 'server.pem');
    const ext = join(dir, 'ext.cnf');
    writeFileSync(ext, 'subjectAltName=DNS:localhost\n');
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', ca, '-days', '2', '-subj', '/CN=Patchbay Test CA']);
    await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=localhost']);
    await run('openssl', ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext]);
    return { ca, key, cert };
  }

  test('wss with a private CA: verified and connected; without the CA, refused', async () => {
    const files = await makeCa();
    const { readFileSync } = await import('node:fs');
    const app = await startApp({ tls: { key: readFileSync(files.key), cert: readFileSync(files.cert) } });
    const yaml = (ca: string) => `
websocket_clients:
  - name: secure
    uri: wss://localhost:${app.port}/
    protocols: ari
    connection_type: persistent
    reconnect_interval: 50
${ca}
ari:
  outbound_websockets:
    - name: tls
      websocket_client_id: secure
      apps: secure-app
      local_ari_user: asterisk
`;
    const pb = await startOnFile(yaml(`    ca_list_file: ${files.ca}`));
    const conn = await app.nextConnection();
    assert.equal(conn.request.headers.host, `localhost:${app.port}`);
    const registered = await conn.next();
    assert.equal(registered.type, 'ApplicationRegistered');
    assert.equal(registered.application, 'secure-app');
    await pb.stop();

    const untrusted = await startOnFile(yaml(''));
    // Until its first attempt has failed (500 ms were not always enough on a loaded machine).
    const failed = (): boolean => untrusted.logLines.some((line) => /outbound WebSocket (connection attempt failed|cannot connect)/.test(line));
    for (const deadline = Date.now() + 15_000; Date.now() < deadline && !failed(); ) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(app.connections.length, 1, 'no connection without trusting the CA');
    assert.ok(failed());
  });

  test('HTTP CONNECT proxy: the tunnel carries the upgrade', async () => {
    const app = await startApp();
    const proxy = await startConnectProxy();
    cleanups.push(() => proxy.close());
    const connects = proxy.heads;
    const proxyPort = proxy.port;
    await startOnFile(persistentYaml(app.port).replace('    reconnect_interval: 50', `    reconnect_interval: 50\n    proxy_host: 127.0.0.1:${proxyPort}\n    proxy_username: px\n    proxy_password: pw`));
    const conn = await app.nextConnection();
    assert.equal((await conn.next()).type, 'ApplicationRegistered');
    assert.equal(connects.length, 1);
    const lines = connects[0]!.split('\r\n');
    assert.equal(lines[0], `CONNECT 127.0.0.1:${app.port} HTTP/1.1`);
    assert.ok(lines.includes(`Host: 127.0.0.1:${app.port}`));
    assert.ok(lines.includes(`Proxy-Authorization: Basic ${Buffer.from('px:pw').toString('base64')}`));
  });
});
