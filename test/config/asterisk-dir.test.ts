// asterisk_config_dir: a directory in Asterisk's syntax starts Patchbay with no YAML file at all —
// users from ari.conf, bind/port/prefix from http.conf, the dialplan from extensions.conf, the
// endpoints from pjsip.conf, music classes from musiconhold.conf — and everything not understood
// is one warning line naming file and line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'patchbay-etc-asterisk-'));
after(() => rmSync(root, { recursive: true, force: true }));

function writeAsteriskDir(name: string, port: number): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const moh = join(root, `${name}-moh-jazz`);
  mkdirSync(moh, { recursive: true });
  writeFileSync(
    join(dir, 'asterisk.conf'),
    ['[directories](!)', 'astetcdir => /etc/asterisk', '', '[options]', 'maxcalls = 40', 'defaultlanguage = en_GB', 'highpriority = yes', ''].join('\n'),
  );
  writeFileSync(
    join(dir, 'http.conf'),
    ['[general]', 'enabled = yes', 'bindaddr = 127.0.0.1', `bindport = ${port}`, 'prefix = asterisk', 'tlsenable = no', ''].join('\n'),
  );
  writeFileSync(
    join(dir, 'ari.conf'),
    [
      '[general]',
      'enabled = yes',
      'pretty = yes',
      'allowed_origins = http://localhost:3000',
      'websocket_write_timeout = 100',
      '',
      '[bot]',
      'type = user',
      'read_only = no',
      'password = s3cret',
      '',
      '[viewer]',
      'type = user',
      'read_only = yes',
      'password = look',
      'deny = 0.0.0.0/0.0.0.0',
      'permit = 127.0.0.1/32',
      'acl = office',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'acl.conf'), ['[office]', 'deny = 0.0.0.0/0', 'permit = 127.0.0.0/8', ''].join('\n'));
  writeFileSync(join(dir, 'extensions.conf'), ['[from-etc]', 'exten => 100,1,Answer()', ' same => n,Stasis(etc-app,hello)', ' same => n,Hangup()', ''].join('\n'));
  writeFileSync(
    join(dir, 'pjsip.conf'),
    ['[transport-udp]', 'type = transport', 'protocol = udp', 'bind = 127.0.0.1:0', '', '[alice]', 'type = endpoint', 'context = from-etc', 'allow = !all,ulaw', 'aors = alice', '', '[alice]', 'type = aor', 'max_contacts = 1', ''].join('\n'),
  );
  writeFileSync(join(dir, 'musiconhold.conf'), ['[general]', '', '[jazz]', 'mode = files', `directory = ${moh}`, '', '[radio]', 'mode = custom', 'application = /usr/bin/streamer', ''].join('\n'));
  writeFileSync(join(dir, 'chan_websocket.conf'), '[global]\ntype = global\ncontrol_message_format = json\n');
  writeFileSync(join(dir, 'queues.conf'), '[general]\n');
  return dir;
}

test('the directory becomes settings, and each thing not understood is one warning line', () => {
  const dir = writeAsteriskDir('unit', 8099);
  const config = loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data: join(root, 'unit-data') } } });
  assert.equal(config.http.bind, '127.0.0.1');
  assert.equal(config.http.port, 8099);
  assert.equal(config.http.prefix, 'asterisk');
  assert.deepEqual(
    config.ari.users.map((user) => [user.name, user.readOnly]),
    [
      ['bot', false],
      ['viewer', true],
    ],
  );
  const viewer = config.ari.users[1]!;
  assert.deepEqual([viewer.deny.length, viewer.permit.length, viewer.acl], [1, 1, ['office']]);
  assert.equal(config.ari.pretty, true);
  assert.deepEqual(config.ari.allowedOrigins, ['http://localhost:3000']);
  assert.equal(config.maxChannels, 40);
  assert.equal(config.language, 'en_GB');
  assert.equal(config.dialplan.file, join(dir, 'extensions.conf'));
  assert.equal(config.sip.pjsipConf, join(dir, 'pjsip.conf'));
  assert.equal(config.mohClasses.get('jazz'), join(root, 'unit-moh-jazz'));
  assert.equal(config.chanWebsocket.controlMessageFormat, 'json');
  assert.deepEqual(config.warnings, [
    'asterisk.conf:7: option highpriority is not supported by Patchbay',
    'http.conf:6: option tlsenable is not supported by Patchbay',
    'ari.conf:5: option websocket_write_timeout is not supported by Patchbay',
    'musiconhold.conf:7: [radio] mode=custom without directory= is not supported by Patchbay (only mode=files with a directory); class left out',
    `${dir}: not read by Patchbay: queues.conf`,
  ]);
  // The YAML (here: overrides) wins over the directory.
  const overridden = loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, http: { port: 9000 }, dirs: { data: join(root, 'unit-data') } } });
  assert.equal(overridden.http.port, 9000);
});

test('a bad value in an Asterisk file is reported against that file and line', () => {
  const dir = writeAsteriskDir('bad', 8099);
  writeFileSync(join(dir, 'http.conf'), '[general]\nbindport = eighty\n');
  assert.throws(
    () => loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data: join(root, 'bad-data') } } }),
    (error: unknown) => error instanceof ConfigError && error.key === 'http.port' && /http\.conf:2/.test(error.message),
  );
});

test('a server started from the directory alone: prefix, ari.conf users, extensions.conf into Stasis, pjsip.conf endpoints', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(p));
    });
  });
  const dir = writeAsteriskDir('process', port);
  const env: NodeJS.ProcessEnv = { ...process.env, PATCHBAY_ASTERISK_CONFIG_DIR: dir, PATCHBAY_DATA_DIR: join(root, 'process-data'), PATCHBAY_SIP_PORT: '0' };
  for (const name of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_PORT', 'PATCHBAY_HTTP_BIND']) delete env[name];
  // The compiled server, as `npm start` runs it (`npm ci` builds dist/).
  const main = join(REPOSITORY, 'dist', 'main.js');
  assert.ok(existsSync(main), 'dist/main.js is built');
  const child = spawn(process.execPath, [main], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  try {
    const base = `http://127.0.0.1:${port}/asterisk/ari`;
    const auth = `Basic ${Buffer.from('bot:s3cret').toString('base64')}`;
    let up = false;
    for (let i = 0; i < 300 && !up; i++) {
      up = await fetch(`${base}/asterisk/ping`, { headers: { authorization: auth } }).then((r) => r.ok, () => false);
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(up, `the server answers under the prefix:\n${output}`);
    assert.match(output, /option highpriority is not supported by Patchbay/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/ari/asterisk/ping`, { headers: { authorization: auth } })).status, 404, 'nothing outside the prefix');
    const docs = (await (await fetch(`${base}/api-docs/resources.json`, { headers: { authorization: auth } })).json()) as { basePath: string };
    assert.equal(docs.basePath, `http://127.0.0.1:${port}/asterisk/ari`);
    const viewer = `Basic ${Buffer.from('viewer:look').toString('base64')}`;
    assert.equal((await fetch(`${base}/channels?endpoint=Local/100@from-etc&app=x`, { method: 'POST', headers: { authorization: viewer } })).status, 403);
    const endpoints = (await (await fetch(`${base}/endpoints/PJSIP`, { headers: { authorization: auth } })).json()) as { resource: string }[];
    assert.deepEqual(endpoints.map((e) => e.resource), ['alice']);

    const socket = new WebSocket(`ws://127.0.0.1:${port}/asterisk/ari/events?app=etc-app`, { headers: { authorization: auth } });
    const started = new Promise<Record<string, any>>((resolve, reject) => {
      socket.on('message', (data) => {
        const event = JSON.parse(String(data));
        if (event.type === 'StasisStart' && event.args.length > 0) resolve(event);
      });
      socket.once('error', reject);
    });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const originated = await fetch(`${base}/channels?endpoint=Local/100@from-etc&app=etc-app`, { method: 'POST', headers: { authorization: auth } });
    assert.equal(originated.status, 200);
    const event = await Promise.race([started, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no StasisStart:\n${output}`)), 8000).unref())]);
    assert.deepEqual(event.args, ['hello']);
    socket.terminate();
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
});

test('hostile Asterisk files: __proto__ sections, path escapes, a huge file, binary bytes and a bad prefix are refused or named, never obeyed', () => {
  const dir = join(root, 'hostile');
  mkdirSync(dir, { recursive: true });
  const data = join(root, 'hostile-data');
  // A user called __proto__ is a user like any other (or refused by name), never a prototype.
  writeFileSync(join(dir, 'ari.conf'), '[__proto__]\ntype = user\npassword = x\nread_only = yes\n[constructor]\ntype = user\npassword = y\n');
  writeFileSync(join(dir, 'musiconhold.conf'), '[__proto__]\nmode = files\ndirectory = /tmp\n[../up]\nmode = files\ndirectory = ../../etc\n');
  writeFileSync(join(dir, 'asterisk.conf'), Buffer.concat([Buffer.from('[options]\nmaxcalls = 5\n'), Buffer.from([0, 1, 2, 0xff, 0xfe, 10])]));
  writeFileSync(join(dir, 'http.conf'), `[general]\nprefix = ../../x\n`);
  writeFileSync(join(dir, 'acl.conf'), `[big]\n${'deny = 0.0.0.0/0\n'.repeat(300_000)}`);
  let error: unknown;
  try {
    loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data } } });
  } catch (caught) {
    error = caught;
  }
  // The bad prefix stops the start with the usual one-line error naming http.conf's line.
  assert.ok(error instanceof ConfigError && error.key === 'http.prefix' && /http\.conf:2/.test(error.message), String(error));
  assert.equal(({} as Record<string, unknown>).password, undefined, 'no prototype was written');

  writeFileSync(join(dir, 'http.conf'), '[general]\nprefix = asterisk\n');
  const config = loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data } } });
  assert.deepEqual(config.ari.users.map((user) => user.name).sort(), ['__proto__', 'constructor']);
  assert.equal(({} as Record<string, unknown>).read_only, undefined);
  assert.ok(config.warnings.some((line) => /acl\.conf: larger than \d+ bytes; not read/.test(line)), config.warnings.join('\n'));
  // A line of binary bytes is a syntax error: the file is named in a warning and not read at all.
  assert.ok(config.warnings.some((line) => /asterisk\.conf:3: .*file not read/.test(line)), config.warnings.join('\n'));
  assert.equal(config.maxChannels, 0);
  assert.equal(Object.getPrototypeOf(config.mohClasses), Map.prototype);
  assert.equal(config.mohClasses.get('__proto__'), '/tmp');
  assert.equal(config.mohClasses.has('../up'), false, 'a class name with a path in it is not taken');
});
