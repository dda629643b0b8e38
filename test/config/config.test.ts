import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { encrypt } from 'unixcrypt';
import {
  ConfigError,
  DEFAULTS_DOC,
  isLoopback,
  loadConfig,
  type AriUser,
  type DeepPartialYaml,
  type LoadConfigOptions,
} from '../../src/config/config.ts';
import { cryptHashProblem, md5Crypt, verifyPassword } from '../../src/util/password-hashes.ts';
import { settingsTableOf } from '../../src/config/docs-table.ts';
import { renderSettingsTable } from '../../src/config/config.ts';
import { integer, readSection, section, string, type ReadContext, type Seg, type ValueOf, type YamlOf } from '../../src/config/schema.ts';
import { createLogger } from '../../src/log.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'patchbay-config-'));
after(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

let n = 0;
function tmpDir(): string {
  const d = path.join(tmpRoot, String(n++));
  fs.mkdirSync(d);
  return d;
}

const MAC_IFACES = (): NodeJS.Dict<os.NetworkInterfaceInfo[]> => ({
  lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
  eth0: [{ address: '10.0.0.2', netmask: '255.255.255.0', family: 'IPv4', mac: '52:54:00:AB:CD:EF', internal: false, cidr: '10.0.0.2/24' }],
});
const NO_IFACES = (): NodeJS.Dict<os.NetworkInterfaceInfo[]> => ({});

/** Loads with an isolated environment: data dir in a temp dir, fake interfaces. */
function load(opts: LoadConfigOptions & { dir?: string } = {}) {
  const dir = opts.dir ?? tmpDir();
  return loadConfig({
    path: opts.path ?? null,
    env: opts.env ?? { PATCHBAY_DATA_DIR: path.join(dir, 'data') },
    overrides: opts.overrides,
    networkInterfaces: opts.networkInterfaces ?? MAC_IFACES,
  });
}

function writeConfig(text: string, dir = tmpDir()): string {
  const file = path.join(dir, 'patchbay.yaml');
  fs.writeFileSync(file, text);
  return file;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.ok(!err.message.includes('\n'), `message must be one line: ${JSON.stringify(err.message)}`);
    return err;
  }
  assert.fail('expected a ConfigError');
}

const SAFE_USERS: DeepPartialYaml = { ari: { users: [{ name: 'app', password: 's3cret' }] } };

describe('defaults', () => {
  test('no file, no env', () => {
    const dir = tmpDir();
    const c = load({ dir });
    const data = path.join(dir, 'data');
    assert.equal(c.serverId, '52:54:00:ab:cd:ef');
    assert.equal(c.systemName, os.hostname());
    assert.deepEqual(c.http, { bind: '127.0.0.1', port: 8088, bodyLimitBytes: 1024 * 1024, console: true, prefix: '' });
    assert.deepEqual(c.ari.users, [{ name: 'asterisk', password: 'asterisk', passwordFormat: 'plain', readOnly: false, permit: [], deny: [], acl: [] }]);
    assert.equal(c.ari.authRealm, 'Asterisk REST Interface');
    assert.deepEqual(c.ari.channelvars, []);
    assert.deepEqual(c.ari.allowedOrigins, []);
    assert.equal(c.ari.pretty, false);
    assert.equal(c.ari.developerMode, false);
    assert.deepEqual(c.ari.websocket, { pingIntervalSeconds: 30, maxQueuedMessages: 50_000, maxQueuedBytes: 16 * 1024 * 1024 });
    assert.deepEqual(c.dirs, {
      data,
      logs: path.join(data, 'logs'),
      recordings: path.join(data, 'recordings'),
      sounds: [path.join(data, 'sounds'), '/usr/share/asterisk/sounds', '/var/lib/asterisk/sounds'],
      moh: path.join(data, 'moh'),
    });
    assert.deepEqual(c.dialplan, { file: null });
    assert.deepEqual(c.logging, { level: 'info', console: true, format: 'auto', maxLogChannels: 64 });
    assert.deepEqual(c.ari.failedLogins, { maxPerAddress: 10, windowSeconds: 60, blockSeconds: 60, trackedAddresses: 10_000 });
    assert.equal(c.language, 'en');
    assert.equal(c.maxChannels, 0);
    assert.equal(c.maxOpenFiles, 0);
    assert.equal(c.maxLoad, 0);
    assert.deepEqual(c.configObjects, {});
    assert.equal(c.usingDefaultPassword, true);
    assert.equal(c.configFile, null);
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.ari) && Object.isFrozen(c.ari.users[0]));
    assert.equal(fs.existsSync(data), false, 'nothing written when a MAC is available');
  });

  test('without env the dirs resolve against the cwd', () => {
    const c = loadConfig({ path: null, env: {}, networkInterfaces: MAC_IFACES });
    assert.equal(c.dirs.data, path.resolve(process.cwd(), 'data'));
  });

  test('server id is generated once and stored when there is no MAC', () => {
    const dir = tmpDir();
    const first = load({ dir, networkInterfaces: NO_IFACES });
    assert.match(first.serverId, /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    assert.equal(parseInt(first.serverId.slice(0, 2), 16) & 0x03, 0x02, 'locally administered unicast');
    const stored = fs.readFileSync(path.join(dir, 'data', 'server-id'), 'utf8').trim();
    assert.equal(stored, first.serverId);
    assert.equal(load({ dir, networkInterfaces: NO_IFACES }).serverId, first.serverId);
    // once stored, it stays even when an interface appears
    assert.equal(load({ dir, networkInterfaces: MAC_IFACES }).serverId, first.serverId);
  });

  test('a corrupt server-id file is reported', () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'data'));
    fs.writeFileSync(path.join(dir, 'data', 'server-id'), 'garbage\n');
    assert.equal(configError(() => load({ dir })).key, 'server_id');
  });
});

describe('file values', () => {
  test('every setting', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'extensions.conf'), '[default]\n');
    const file = writeConfig(
      `server_id: "AA:BB:CC:DD:EE:FF"
system_name: pbx-1
http:
  bind: 0.0.0.0
  port: 9090
  body_limit_bytes: 2048
ari:
  users:
    - name: admin
      password: secret
    - name: viewer
      password: look
      read_only: true
  auth_realm: My Realm
  channelvars: CALLERID(name), FOO ,, BAR
  allowed_origins: [http://localhost:3000, "*"]
  pretty: true
  developer_mode: true
  websocket:
    ping_interval_seconds: 0
    max_queued_messages: 50
    max_queued_bytes: 100000
dirs:
  data: var
  recordings: /srv/rec
  sounds: snd
dialplan:
  file: extensions.conf
logging:
  level: debug
  console: false
  max_log_channels: 8
language: fr_CA
max_channels: 100
max_open_files: 2048
max_load: 2.5
config_objects:
  res_pjsip:
    endpoint:
      "1000":
        context: default
        max_contacts: 1
`,
      dir,
    );
    const c = load({ path: file, env: {} });
    assert.equal(c.configFile, file);
    assert.equal(c.serverId, 'aa:bb:cc:dd:ee:ff');
    assert.equal(c.systemName, 'pbx-1');
    assert.deepEqual(c.http, { bind: '0.0.0.0', port: 9090, bodyLimitBytes: 2048, console: true, prefix: '' });
    assert.deepEqual(c.ari.users, [
      { name: 'admin', password: 'secret', passwordFormat: 'plain', readOnly: false, permit: [], deny: [], acl: [] },
      { name: 'viewer', password: 'look', passwordFormat: 'plain', readOnly: true, permit: [], deny: [], acl: [] },
    ]);
    assert.equal(c.ari.authRealm, 'My Realm');
    assert.deepEqual(c.ari.channelvars, ['CALLERID(name)', 'FOO', 'BAR']);
    assert.deepEqual(c.ari.allowedOrigins, ['http://localhost:3000', '*']);
    assert.equal(c.ari.pretty, true);
    assert.equal(c.ari.developerMode, true);
    assert.deepEqual(c.ari.websocket, { pingIntervalSeconds: 0, maxQueuedMessages: 50, maxQueuedBytes: 100_000 });
    assert.deepEqual(c.dirs, {
      data: path.join(dir, 'var'),
      logs: path.join(dir, 'var', 'logs'),
      recordings: '/srv/rec',
      sounds: [path.join(dir, 'snd')],
      moh: path.join(dir, 'var', 'moh'),
    });
    assert.deepEqual(c.dialplan, { file: path.join(dir, 'extensions.conf') });
    assert.deepEqual(c.logging, { level: 'debug', console: false, format: 'auto', maxLogChannels: 8 });
    assert.equal(c.language, 'fr_CA');
    assert.equal(c.maxChannels, 100);
    assert.equal(c.maxOpenFiles, 2048);
    assert.equal(c.maxLoad, 2.5);
    assert.deepEqual(c.configObjects, { res_pjsip: { endpoint: { '1000': { context: 'default', max_contacts: '1' } } } });
    assert.equal(c.usingDefaultPassword, false);
  });

  test('a read-only user', () => {
    const file = writeConfig('ari:\n  users:\n    - {name: ro, password: pw, read_only: true}\n');
    const c = load({ path: file });
    assert.deepEqual(c.ari.users, [{ name: 'ro', password: 'pw', passwordFormat: 'plain', readOnly: true, permit: [], deny: [], acl: [] }]);
  });

  test('empty file and empty sections mean defaults', () => {
    const c = load({ path: writeConfig('# nothing\n') });
    assert.equal(c.http.port, 8088);
    const c2 = load({ path: writeConfig('http:\nari:\n  users:\ndialplan:\n  file:\n') });
    assert.equal(c2.http.port, 8088);
    assert.equal(c2.ari.users[0]!.name, 'asterisk');
    assert.equal(c2.dialplan.file, null);
  });

  test('overrides merge over the file; arrays replace', () => {
    const file = writeConfig('http:\n  port: 9000\n  body_limit_bytes: 10\nari:\n  channelvars: [A, B]\n');
    const c = load({ path: file, overrides: { http: { port: 0 }, ari: { channelvars: ['C'] } } });
    assert.equal(c.http.port, 0);
    assert.equal(c.http.bodyLimitBytes, 10);
    assert.deepEqual(c.ari.channelvars, ['C']);
  });
});

describe('environment', () => {
  test('PATCHBAY_HTTP_PORT, PATCHBAY_HTTP_BIND, PATCHBAY_DATA_DIR, PATCHBAY_CONFIG', () => {
    const dir = tmpDir();
    const file = writeConfig('http:\n  port: 9000\n  bind: 127.0.0.1\nari:\n  users: [{name: app, password: pw}]\n', dir);
    const c = loadConfig({
      env: { PATCHBAY_CONFIG: file, PATCHBAY_HTTP_PORT: '7070', PATCHBAY_HTTP_BIND: '::', PATCHBAY_DATA_DIR: 'rel-data' },
      networkInterfaces: MAC_IFACES,
    });
    assert.equal(c.configFile, file);
    assert.equal(c.http.port, 7070);
    assert.equal(c.http.bind, '::');
    // env paths are relative to the working directory, not the config file
    assert.equal(c.dirs.data, path.resolve(process.cwd(), 'rel-data'));
  });

  test('explicit path null ignores PATCHBAY_CONFIG; overrides beat env; empty env is unset', () => {
    const c = loadConfig({
      path: null,
      env: { PATCHBAY_CONFIG: '/nonexistent.yaml', PATCHBAY_HTTP_PORT: '7070', PATCHBAY_HTTP_BIND: '', PATCHBAY_DATA_DIR: tmpDir() },
      overrides: { http: { port: 0 } },
      networkInterfaces: MAC_IFACES,
    });
    assert.equal(c.configFile, null);
    assert.equal(c.http.port, 0);
    assert.equal(c.http.bind, '127.0.0.1');
  });

  test('a bad env value names the key and the variable', () => {
    const e = configError(() => load({ env: { PATCHBAY_HTTP_PORT: 'eighty' } }));
    assert.equal(e.key, 'http.port');
    assert.equal(e.source, 'env PATCHBAY_HTTP_PORT');
    assert.match(e.message, /^config error at http\.port: must be an integer.*PATCHBAY_HTTP_PORT/);
    assert.equal(configError(() => load({ env: { PATCHBAY_HTTP_PORT: '65536' } })).key, 'http.port');
  });
});

describe('passwords', () => {
  const user = (password: string, passwordFormat: 'plain' | 'crypt' = 'crypt'): AriUser => ({ name: 'u', password, passwordFormat, readOnly: false, permit: [], deny: [], acl: [] });

  test('plain', () => {
    assert.equal(verifyPassword(user('secret', 'plain'), 'secret'), true);
    assert.equal(verifyPassword(user('secret', 'plain'), 'secreT'), false);
    assert.equal(verifyPassword(user('secret', 'plain'), 'secret2'), false);
    assert.equal(verifyPassword(user('secret', 'plain'), ''), false);
  });

  test('crypt $6$ and $5$ generated with unixcrypt', () => {
    for (const salt of ['$6$abcdefgh', '$5$rounds=2000$xyz']) {
      const hash = encrypt('hunter2', salt);
      const file = writeConfig(`ari:\n  users:\n    - name: u\n      password: '${hash}'\n      password_format: crypt\n`);
      const c = load({ path: file });
      const u = c.ari.users[0]!;
      assert.equal(u.passwordFormat, 'crypt');
      assert.equal(verifyPassword(u, 'hunter2'), true);
      assert.equal(verifyPassword(u, 'hunter2'), true, 'second (cached) check');
      assert.equal(verifyPassword(u, 'hunter3'), false);
    }
  });

  test('crypt $1$ (MD5) with a known vector from openssl passwd -1', () => {
    assert.equal(md5Crypt('password', 'saltsalt'), '$1$saltsalt$qjXMvbEw8oaL.CzflDtaK/');
    assert.equal(md5Crypt('a much longer password than sixteen', '12345678'), '$1$12345678$HGJHglfA1jRVtYuvr8yIz0');
    const u = user('$1$saltsalt$qjXMvbEw8oaL.CzflDtaK/');
    assert.equal(verifyPassword(u, 'password'), true);
    assert.equal(verifyPassword(u, 'Password'), false);
  });

  test('malformed or unsupported crypt hashes are refused at load time', () => {
    for (const bad of ['plaintext', '$2b$10$abcdefghijklmnopqrstuv', '$6$salt$short', '$6$rounds=10$salt$' + 'a'.repeat(86)]) {
      const e = configError(() => load({ overrides: { ari: { users: [{ name: 'u', password: bad, password_format: 'crypt' }] } } }));
      assert.equal(e.key, 'ari.users[0].password', bad);
    }
  });

  test('a crypt hash of the default password counts as the default password', () => {
    const c = load({ overrides: { ari: { users: [{ name: 'asterisk', password: encrypt('asterisk'), password_format: 'crypt' }] } } });
    assert.equal(c.usingDefaultPassword, true);
  });
});

describe('errors name the key', () => {
  test('unknown key (with a suggestion and the file line)', () => {
    const file = writeConfig('http:\n  port: 8088\nari:\n  userz: []\n');
    const e = configError(() => load({ path: file }));
    assert.equal(e.key, 'ari.userz');
    assert.equal(e.line, 4);
    assert.equal(e.message, `config error at ari.userz: unknown key (did you mean ari.users?) (${file}:4)`);
    assert.equal(configError(() => load({ overrides: { bogus: 1 } as DeepPartialYaml })).key, 'bogus');
  });

  test('bad type', () => {
    const file = writeConfig('http:\n  port: "8088"\n');
    const e = configError(() => load({ path: file }));
    assert.equal(e.key, 'http.port');
    assert.match(e.message, /must be an integer/);
    assert.equal(configError(() => load({ path: writeConfig('ari:\n  pretty: yes\n') })).key, 'ari.pretty');
    assert.equal(configError(() => load({ path: writeConfig('http: 5\n') })).key, 'http');
    assert.equal(configError(() => load({ path: writeConfig('ari:\n  channelvars: [A, 3]\n') })).key, 'ari.channelvars[1]');
    assert.equal(configError(() => load({ path: writeConfig('ari:\n  users:\n    - {name: a, password: 1234}\n') })).key, 'ari.users[0].password');
    assert.equal(configError(() => load({ path: writeConfig('- a\n- b\n') })).key, '');
  });

  test('bad password_format', () => {
    const file = writeConfig('ari:\n  users:\n    - name: a\n      password: b\n      password_format: md5\n');
    const e = configError(() => load({ path: file }));
    assert.equal(e.key, 'ari.users[0].password_format');
    assert.ok(e.message.startsWith('config error at ari.users[0].password_format: must be one of plain, crypt'), e.message);
    assert.equal(e.line, 5);
  });

  test('bad port', () => {
    for (const port of [65536, -1, 80.5]) {
      const e = configError(() => load({ overrides: { http: { port } } }));
      assert.equal(e.key, 'http.port');
      assert.equal(e.source, 'overrides');
    }
  });

  test('YAML syntax error names the file and the line', () => {
    const file = writeConfig('http:\n  port: 8088\nari:\n  users: [oops\n  pretty: true\n');
    const e = configError(() => load({ path: file }));
    assert.equal(e.key, '');
    assert.equal(e.file, file);
    assert.equal(typeof e.line, 'number');
    assert.ok(e.line! >= 4, `line ${e.line}`);
    assert.ok(e.message.startsWith(`config error in ${file} at line ${e.line}: YAML syntax error`), e.message);
    const dup = configError(() => load({ path: writeConfig('http:\n  port: 1\n  port: 2\n') }));
    assert.equal(dup.line, 3);
  });

  test('missing config file', () => {
    const missing = path.join(tmpDir(), 'nope.yaml');
    const e = configError(() => load({ path: missing }));
    assert.equal(e.file, missing);
    assert.match(e.message, /ENOENT/);
  });

  test('more bad values', () => {
    const cases: Array<[DeepPartialYaml, string]> = [
      [{ ari: { users: [{ name: 'a:b', password: 'x' }] } }, 'ari.users[0].name'],
      [{ ari: { users: [{ name: 'a', password: 'x' }, { name: 'a', password: 'y' }] } }, 'ari.users[1].name'],
      [{ ari: { users: [{ name: 'a' }] } }, 'ari.users[0].password'],
      [{ ari: { users: [{ password: 'a' }] } }, 'ari.users[0].name'],
      [{ ari: { auth_realm: 'a"b' } }, 'ari.auth_realm'],
      [{ ari: { allowed_origins: ['http://x.example/'] } }, 'ari.allowed_origins[0]'],
      [{ ari: { websocket: { max_queued_messages: 0 } } }, 'ari.websocket.max_queued_messages'],
      [{ http: { bind: 'not a host' } }, 'http.bind'],
      [{ http: { body_limit_bytes: 0 } }, 'http.body_limit_bytes'],
      [{ logging: { level: 'verbose' as 'info' } }, 'logging.level'],
      [{ language: '../en' }, 'language'],
      [{ server_id: '00-11-22-33-44-55' }, 'server_id'],
      [{ max_load: -1 }, 'max_load'],
      [{ dialplan: { file: '/nonexistent/extensions.conf' } }, 'dialplan.file'],
      [{ config_objects: { c: { t: { id: { f: [1] } } } } } as unknown as DeepPartialYaml, 'config_objects.c.t.id.f'],
    ];
    for (const [overrides, key] of cases) {
      assert.equal(configError(() => load({ overrides: { ...SAFE_USERS, ...overrides } })).key, key, JSON.stringify(overrides));
    }
  });
});

describe('default password safety rule', () => {
  test('refused on a non-loopback bind', () => {
    for (const bind of ['0.0.0.0', '::', '10.1.2.3', 'example.com']) {
      const e = configError(() => load({ overrides: { http: { bind } } }));
      assert.equal(e.key, 'http.bind');
      assert.match(e.message, /default password may only be used on a loopback address/);
    }
    const e = configError(() => load({ env: { PATCHBAY_HTTP_BIND: '0.0.0.0' } }));
    assert.equal(e.source, 'env PATCHBAY_HTTP_BIND');
  });

  test('allowed on loopback, or with a changed password', () => {
    for (const bind of ['127.0.0.1', '127.9.9.9', '::1', 'localhost']) {
      assert.equal(load({ overrides: { http: { bind } } }).usingDefaultPassword, true);
    }
    const c = load({ overrides: { http: { bind: '0.0.0.0' }, ari: { users: [{ name: 'asterisk', password: 'changed' }] } } });
    assert.equal(c.usingDefaultPassword, false);
  });

  test('isLoopback', () => {
    for (const h of ['127.0.0.1', '127.255.0.1', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST.', 'a.localhost']) {
      assert.equal(isLoopback(h), true, h);
    }
    for (const h of ['0.0.0.0', '::', '128.0.0.1', '::2', '::ffff:10.0.0.1', 'example.com', 'localhost.example.com']) {
      assert.equal(isLoopback(h), false, h);
    }
  });
});

describe('shipped files', () => {
  test('patchbay.example.yaml loads', () => {
    const c = load({ path: path.join(repoRoot, 'patchbay.example.yaml'), env: { PATCHBAY_DATA_DIR: path.join(tmpDir(), 'data') } });
    assert.equal(c.configFile, path.join(repoRoot, 'patchbay.example.yaml'));
  });

  test('docs/configuration.md covers every setting', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'configuration.md'), 'utf8');
    for (const s of DEFAULTS_DOC) {
      assert.ok(doc.includes(`\`${s.key}\``), `docs mention ${s.key}`);
      if (s.env) assert.ok(doc.includes(s.env), `docs mention ${s.env}`);
    }
    for (const env of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_PORT', 'PATCHBAY_HTTP_BIND', 'PATCHBAY_DATA_DIR']) assert.ok(doc.includes(env), env);
  });
});

describe('logger', () => {
  test('JSON lines at the configured level, credentials redacted', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    const c = load({ overrides: { logging: { level: 'warn' } } });
    const log = createLogger(c, { destination });
    log.info('hidden');
    log.warn({ user: { name: 'a', password: 'p' }, req: { headers: { authorization: 'Basic x' } } }, 'shown');
    assert.equal(lines.length, 1);
    const rec = JSON.parse(lines[0]!) as Record<string, any>;
    assert.equal(rec.msg, 'shown');
    assert.equal(rec.level, 40);
    assert.equal(rec.user.password, '[redacted]');
    assert.equal(rec.req.headers.authorization, '[redacted]');
    assert.equal(log.level, 'warn');
  });
});

describe('settings are declared once', () => {
  test('the Settings table of docs/configuration.md is the one the declarations generate', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'configuration.md'), 'utf8');
    assert.equal(settingsTableOf(doc), renderSettingsTable(), 'run npm run docs:config');
    for (const s of DEFAULTS_DOC) if (s.env) assert.ok(doc.includes(`| \`${s.env}\` | \`${s.key}\``), `env table names ${s.env}`);
  });

  test('one declaration gives the type, the default, the check, the environment variable and the doc row', () => {
    const declared = section({
      sip: section({
        udp_port: integer({ default: 5060, min: 1, max: 65535, env: 'X_SIP_PORT', doc: 'SIP port' }),
        user_agent: string({ default: 'Patchbay', doc: 'User-Agent header', check: (s) => (s.includes('\n') ? 'one line' : null) }),
      }),
    });
    const failures: string[] = [];
    const ctx: ReadContext = {
      fail: (p: readonly Seg[], reason: string): never => {
        failures.push(`${p.join('.')}: ${reason}`);
        throw new Error(reason);
      },
      baseDir: '/',
      networkInterfaces: NO_IFACES,
    };
    const read = (v: YamlOf<typeof declared>): ValueOf<typeof declared> => readSection(declared, v, [], ctx);
    const loaded = read({});
    const port: number = loaded.sip.udpPort; // camelCase, typed by the declaration
    assert.equal(port, 5060);
    assert.equal(loaded.sip.userAgent, 'Patchbay');
    assert.equal(read({ sip: { udp_port: 5080 } }).sip.udpPort, 5080);
    assert.throws(() => read({ sip: { udp_port: 0 } }));
    assert.throws(() => read({ sip: { udp_prot: 1 } as never }));
    assert.deepEqual(failures, ['sip.udp_port: must be between 1 and 65535, got 0', 'sip.udp_prot: unknown key (did you mean sip.udp_port?)']);
    assert.equal(declared.fields.sip.fields.udp_port.env?.name, 'X_SIP_PORT');
    assert.equal(declared.fields.sip.fields.udp_port.env?.parse('5070', '/'), 5070);
    assert.deepEqual(declared.fields.sip.fields.udp_port.doc, { default: '`5060`', description: 'SIP port' });
  });

  test('crypt formats are known to the password code; the configuration only asks it', () => {
    assert.equal(cryptHashProblem(md5Crypt('x', 'saltsalt')), null);
    assert.match(cryptHashProblem('$2b$10$abc') ?? '', /unsupported or malformed crypt hash/);
    const source = fs.readFileSync(path.join(repoRoot, 'src', 'config', 'settings.ts'), 'utf8')
      + fs.readFileSync(path.join(repoRoot, 'src', 'config', 'config.ts'), 'utf8');
    assert.doesNotMatch(source, /unixcrypt|createHash|md5Crypt|\$6\$/);
  });
});
