// The `asterisk -r` habits of the admin CLI against a real server: `pjsip show …` with a phone
// registered over UDP and a trunk registration failing, `core show …`, `core set debug`,
// `logger rotate`, `sip trace` (the REGISTER of the matching phone in the log, another's not), the
// rights they need (/admin/... with ARI credentials), did-you-mean, options before the command, -x
// and the interactive shell with its completion and history.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { runAdminCommand } from '../../src/cli/admin.ts';
import { EXIT } from '../../src/cli/client.ts';
import { closest, isAdminCommandLine } from '../../src/cli/options.ts';
import { describeSeconds } from '../../src/cli/server-commands.ts';
import { complete, runShell, splitWords } from '../../src/cli/shell.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let env: NodeJS.ProcessEnv;
let registrar: dgram.Socket;
const phones: dgram.Socket[] = [];
const dirs: string[] = [];

async function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCommand(args, { ...env, ...extraEnv }, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

async function waitFor(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** A phone on its own UDP port that REGISTERs as `user`. */
async function phone(user: string): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  phones.push(socket);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const port = socket.address().port;
  const text = [
    `REGISTER sip:127.0.0.1:${server.core.pjsip.port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bKcli${user}${port};rport`,
    'Max-Forwards: 70',
    `From: <sip:${user}@127.0.0.1>;tag=cli1`,
    `To: <sip:${user}@127.0.0.1>`,
    `Call-ID: cli-${user}-${port}`,
    'CSeq: 1 REGISTER',
    `Contact: <sip:${user}@127.0.0.1:${port}>`,
    'Expires: 60',
    'User-Agent: cli-test-phone',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  socket.send(text, server.core.pjsip.port, '127.0.0.1');
  return socket;
}

before(async () => {
  // A provider's registrar that is down: every REGISTER gets 503.
  registrar = dgram.createSocket('udp4');
  registrar.on('message', (data, remote) => {
    const text = data.toString();
    if (!text.startsWith('REGISTER ')) return;
    const header = (name: string) => new RegExp(`^${name}:.*$`, 'mi').exec(text)?.[0] ?? '';
    const answer = ['SIP/2.0 503 Service Unavailable', header('Via'), header('From'), `${header('To')};tag=down`, header('Call-ID'), header('CSeq'), 'Content-Length: 0', '', ''].join('\r\n');
    registrar.send(answer, remote.port, remote.address);
  });
  await new Promise<void>((resolve) => registrar.bind(0, '127.0.0.1', () => resolve()));
  const registrarPort = registrar.address().port;
  server = await startTestServer({
    logging: { console: false, level: 'info' },
    ari: { users: [{ name: 'asterisk', password: 'asterisk' }, { name: 'viewer', password: 'viewer', read_only: true }] },
    config_objects: {
      res_pjsip: {
        endpoint: {
          alice: { context: 'default', allow: 'ulaw', aors: 'alice' },
          bob: { context: 'default', allow: 'ulaw', aors: 'bob' },
        },
        aor: { alice: { max_contacts: 1, remove_existing: 'yes' }, bob: { max_contacts: 1, contact: 'sip:bob@127.0.0.1:9' } },
        registration: {
          provider: { server_uri: `sip:127.0.0.1:${registrarPort}`, client_uri: `sip:acct@127.0.0.1:${registrarPort}`, retry_interval: 30, max_random_initial_delay: 0 },
        },
      },
    },
  } as never);
  env = { PATCHBAY_HTTP_PORT: String(server.address.port), PATCHBAY_HTTP_BIND: '127.0.0.1', PATCHBAY_DATA_DIR: server.dataDir, PATCHBAY_ARI_USER: 'asterisk', PATCHBAY_ARI_PASSWORD: 'asterisk' };
});

after(async () => {
  for (const socket of phones) socket.close();
  registrar?.close();
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('pjsip show', () => {
  test('endpoints, endpoint, contacts, transports, registrations', async () => {
    await phone('alice');
    await waitFor('alice registered', () => server.core.pjsip.contacts().some((c) => c.aor === 'alice'));
    const endpoints = await run(['pjsip', 'show', 'endpoints']);
    assert.equal(endpoints.code, EXIT.ok, endpoints.stderr);
    assert.match(endpoints.stdout, /^ENDPOINT\s+STATE\s+CHANNELS\s+CONTACTS/);
    assert.match(endpoints.stdout, /^alice\s+online\s+0\s+1\s+default\s+alice/m);
    assert.match(endpoints.stdout, /^bob\s+\S+\s+0\s+1\s+default\s+bob/m);
    assert.match(endpoints.stdout, /Objects found: 2 endpoints/);

    const alice = await run(['pjsip', 'show', 'endpoint', 'alice']);
    assert.equal(alice.code, EXIT.ok, alice.stderr);
    assert.match(alice.stdout, /^Endpoint:\s+alice$/m);
    assert.match(alice.stdout, /^Codecs:\s+ulaw$/m);
    assert.match(alice.stdout, /^Contact:\s+alice\/sip:alice@127\.0\.0\.1:\d+/m);
    assert.equal((await run(['pjsip', 'show', 'endpoint', 'nobody'])).code, EXIT.notFound);

    const contacts = await run(['pjsip', 'show', 'contacts', '--json']);
    const list = JSON.parse(contacts.stdout) as { aor: string; uri: string; source: string; user_agent: string; expires_in: number }[];
    const registered = list.find((c) => c.aor === 'alice')!;
    assert.equal(registered.user_agent, 'cli-test-phone');
    assert.ok(registered.expires_in > 0 && registered.expires_in <= 60);
    assert.deepEqual(list.find((c) => c.aor === 'bob'), { aor: 'bob', uri: 'sip:bob@127.0.0.1:9', status: 'NonQual', roundtrip_usec: 0, expires_in: 0, user_agent: '', source: 'static' });

    const transports = await run(['pjsip', 'show', 'transports']);
    assert.match(transports.stdout, new RegExp(`udp\\s+127\\.0\\.0\\.1:${server.core.pjsip.port}`));

    await waitFor('the registration attempt', () => server.logLines.some((l) => l.includes('"registration":"provider"') && l.includes('503')));
    const registrations = await run(['pjsip', 'show', 'registrations']);
    assert.match(registrations.stdout, /^provider\s+127\.0\.0\.1\s+acct@127\.0\.0\.1\s+Unregistered/m);
  });

  test('a failed outbound registration is a WARN naming the answer', () => {
    const line = server.logLines.map((l) => JSON.parse(l) as { level: number; msg: string; reason?: string }).find((l) => l.reason !== undefined && /provider failed/.test(l.msg));
    assert.ok(line, 'a line for the failure');
    assert.equal(line.level, 40);
    assert.equal(line.reason, '503 Service Unavailable');
    assert.match(line.msg, /outbound registration provider failed: 503 Service Unavailable; retrying in 30 s/);
  });

  test('bad forms are usage errors', async () => {
    for (const args of [['pjsip'], ['pjsip', 'show'], ['pjsip', 'show', 'peers'], ['pjsip', 'show', 'endpoint'], ['core', 'show', 'channels', 'many'], ['sip', 'trace', 'maybe'], ['logger']]) {
      const result = await run(args);
      assert.equal(result.code, EXIT.usage, args.join(' '));
      assert.match(result.stderr, /^patchbay: usage: /);
    }
  });
});

describe('core, logger and sip trace', () => {
  test('core show version, uptime, channels count', async () => {
    const version = await run(['core', 'show', 'version']);
    assert.match(version.stdout, /^Patchbay \d+\.\d+\.\d+\n$/);
    const uptime = await run(['core', 'show', 'uptime']);
    assert.match(uptime.stdout, /^System uptime: .*seconds?\nLast reload: /);
    const channel = (await (await server.ari('/channels?endpoint=Local/echo@default&extension=echo&context=default', { method: 'POST' })).json()) as { id: string };
    const count = await run(['core', 'show', 'channels', 'count']);
    assert.match(count.stdout, /^[2-9]\d* active channels\n\d+ active calls?\n\d+ calls? processed\n$/);
    await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
    assert.equal(describeSeconds(90061), '1 day, 1 hour, 1 minute, 1 second');
    assert.equal(describeSeconds(0), '0 seconds');
  });

  test('core show hanguphandlers: a channel\'s handlers, as Asterisk prints them', async () => {
    const variables = { 'CHANNEL(hangup_handler_push)': 'cleanup,s,1(one)' };
    const response = await server.ari('/channels?endpoint=Local/echo@default&extension=echo&context=default', { method: 'POST', body: JSON.stringify({ variables }), headers: { 'content-type': 'application/json' } });
    assert.equal(response.status, 200);
    const { id, name } = (await response.json()) as { id: string; name: string };
    const expected = `${'Channel'.padEnd(30)} Handler\n${name.padEnd(30)} cleanup,s,1(one)\n`;
    assert.equal((await run(['core', 'show', 'hanguphandlers', name])).stdout, expected);
    assert.ok((await run(['core', 'show', 'hanguphandlers', 'all'])).stdout.includes(`${name.padEnd(30)} cleanup,s,1(one)\n`));
    const missing = await run(['core', 'show', 'hanguphandlers', 'PJSIP/nobody-00000000']);
    assert.notEqual(missing.code, EXIT.ok);
    assert.match(missing.stderr, /Channel does not exist/);
    assert.equal((await run(['core', 'show', 'hanguphandlers'])).code, EXIT.usage);
    await server.ari(`/channels/${id}`, { method: 'DELETE' });
  });

  test('core set debug turns debug on everywhere, off returns to the configured level', async () => {
    const on = await run(['core', 'set', 'debug', '3']);
    assert.equal(on.stdout, 'log level is now debug\n');
    assert.equal(server.log.level, 'debug');
    // Child loggers (the SIP technology's) follow too.
    assert.equal(server.log.child({ module: 'x' }).level, 'debug');
    const off = await run(['core', 'set', 'debug', 'off']);
    assert.equal(off.stdout, 'log level is now info\n');
    assert.equal(server.log.level, 'info');
    assert.equal((await run(['core', 'set', 'debug', 'loud'])).code, EXIT.refused);
    // Changing needs a read-write user; reading is for anyone with credentials.
    const viewer = { PATCHBAY_ARI_USER: 'viewer', PATCHBAY_ARI_PASSWORD: 'viewer' };
    assert.equal((await run(['core', 'set', 'debug', '3'], viewer)).code, EXIT.auth);
    assert.equal((await run(['core', 'show', 'uptime'], viewer)).code, EXIT.ok);
    assert.equal((await fetch(`${server.url}/admin/core/status`)).status, 401);
  });

  test('logger rotate rotates the file log channels', async () => {
    assert.equal((await server.ari('/asterisk/logging/cli-test.log?configuration=notice,warning,error', { method: 'POST' })).status, 204);
    server.log.warn('before the rotation');
    await new Promise((r) => setTimeout(r, 200));
    const rotated = await run(['logger', 'rotate']);
    assert.equal(rotated.code, EXIT.ok, rotated.stderr);
    assert.match(rotated.stdout, /^rotated: .*cli-test\.log/);
    const logs = readdirSync(server.config.dirs.logs);
    assert.ok(logs.includes('cli-test.log.0'), logs.join(' '));
    assert.match(readFileSync(join(server.config.dirs.logs, 'cli-test.log.0'), 'utf8'), /before the rotation/);
    assert.ok(existsSync(join(server.config.dirs.logs, 'cli-test.log')));
  });

  test('sip trace on <match>: the messages of matching calls go into the log, others do not', async () => {
    const on = await run(['sip', 'trace', 'on', 'alice']);
    assert.equal(on.stdout, "SIP trace on: calls matching 'alice' into the server log\n");
    const before = server.logLines.length;
    await phone('alice');
    await phone('bob');
    await waitFor('the traced answer', () => server.logLines.slice(before).some((l) => l.includes('SIP sent to') && l.includes('cli-alice')));
    // Give bob's REGISTER time to be traced if it wrongly were.
    await waitFor("bob's answer", () => server.core.pjsip.contacts().filter((c) => c.aor === 'bob').length === 2);
    const traced = server.logLines.slice(before).map((l) => JSON.parse(l) as { msg: string; sipTrace?: boolean }).filter((l) => l.sipTrace);
    assert.ok(traced.some((l) => /^SIP received from UDP 127\.0\.0\.1:\d+\nREGISTER sip:/.test(l.msg)), 'the REGISTER');
    assert.ok(traced.some((l) => /^SIP sent to UDP 127\.0\.0\.1:\d+\nSIP\/2\.0 200 OK/.test(l.msg)), traced.map((l) => l.msg.split('\n').slice(0, 2).join(' ')).join('; '));
    assert.ok(traced.every((l) => l.msg.includes('cli-alice')), 'only alice');
    assert.match((await run(['sip', 'trace'])).stdout, /SIP trace on: calls matching 'alice'/);
    assert.equal((await run(['sip', 'trace', 'off'])).stdout, 'SIP trace off\n');
    const quiet = server.logLines.length;
    await phone('alice');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!server.logLines.slice(quiet).some((l) => l.includes('"sipTrace":true')));
  });
});

describe('admin routes for the web console', () => {
  test('GET /admin/recordings: stored recordings with date, length and size, newest first', async () => {
    const dir = server.config.dirs.recordings;
    mkdirSync(dir, { recursive: true });
    // One second of 8 kHz 16-bit WAV (44-byte header), and two seconds of μ-law, written later.
    writeFileSync(join(dir, 'older.wav'), Buffer.alloc(44 + 16000));
    utimesSync(join(dir, 'older.wav'), new Date('2026-01-01T10:00:00Z'), new Date('2026-01-01T10:00:00Z'));
    writeFileSync(join(dir, 'newer.ulaw'), Buffer.alloc(16000));
    const response = await fetch(`${server.url}/admin/recordings`, { headers: { authorization: `Basic ${Buffer.from('viewer:viewer').toString('base64')}` } });
    assert.equal(response.status, 200);
    const list = (await response.json()) as { name: string; format: string; size_bytes: number; duration_seconds: number; modified: string }[];
    const ours = list.filter((r) => r.name === 'older' || r.name === 'newer');
    assert.deepEqual(ours.map((r) => [r.name, r.format, r.size_bytes, r.duration_seconds]), [['newer', 'ulaw', 16000, 2], ['older', 'wav', 16044, 1]]);
    assert.match(ours[1]!.modified, /^2026-01-01T\d\d:00:00\.000[+-]\d{4}$/);
  });
});

describe('command line', () => {
  test('did you mean, options before the command, -V everywhere', async () => {
    const typo = await run(['chanels']);
    assert.equal(typo.code, EXIT.usage);
    assert.equal(typo.stderr, "patchbay: unknown command 'chanels', did you mean 'channels'?\n");
    assert.equal(closest('pjsp', ['pjsip', 'sip']), 'pjsip');
    assert.equal(closest('frobnicate', ['channels', 'bridges']), undefined);
    assert.equal((await run(['--json', 'channels'])).code, EXIT.ok);
    assert.equal((await run(['-u', 'asterisk', 'core', 'show', 'version'])).code, EXIT.ok);
    assert.match((await run(['channels', '-V'])).stdout, /^\d+\.\d+\.\d+\n$/);
    // What src/main.ts hands to the CLI rather than starting a server.
    assert.equal(isAdminCommandLine(['--config', 'x.yaml', 'channels']), true);
    assert.equal(isAdminCommandLine(['--config', 'x.yaml']), false);
    assert.equal(isAdminCommandLine(['-r']), true);
    assert.equal(isAdminCommandLine(['-x', 'core show version']), true);
    assert.equal(isAdminCommandLine([]), false);
  });

  test('through the server entry point: -V and -v, options before the command, a typo', async () => {
    const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
    const tsx = import.meta.resolve('tsx');
    // A process of its own, awaited (not spawnSync: the server it talks to runs in this process).
    const entry = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', tsx, main, ...args], { env: { ...process.env, ...env, PATCHBAY_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += String(d)));
        child.stderr.on('data', (d) => (stderr += String(d)));
        child.once('close', (status) => resolve({ status, stdout, stderr }));
      });
    for (const flag of ['-V', '-v', '--version']) assert.match((await entry([flag])).stdout, /^patchbay \d+\.\d+\.\d+\n$/, flag);
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-entry-'));
    dirs.push(dir);
    const config = join(dir, 'patchbay.yaml');
    writeFileSync(config, `http:\n  port: ${server.address.port}\n`);
    const before = await entry(['--config', config, '--json', 'core', 'show', 'uptime']);
    assert.equal(before.status, 0, before.stderr);
    assert.equal(typeof (JSON.parse(before.stdout) as { uptime_seconds: number }).uptime_seconds, 'number');
    const typo = await entry(['--config', config, 'chanels']);
    assert.equal(typo.status, EXIT.usage);
    assert.equal(typo.stderr, "patchbay: unknown command 'chanels', did you mean 'channels'?\n");
  });

  test('-x runs one command with the options beside it', async () => {
    const result = await run(['-x', 'core show channels count', '--json']);
    assert.equal(result.code, EXIT.ok, result.stderr);
    assert.equal(typeof (JSON.parse(result.stdout) as { calls_processed: number }).calls_processed, 'number');
    assert.equal((await run(['-x', 'chanels'])).code, EXIT.usage);
  });

  test('the shell: completion, commands one per line, history kept', async () => {
    assert.deepEqual(complete('pj'), [['pjsip'], 'pj']);
    assert.deepEqual(complete('pjsip show con'), [['contacts'], 'con']);
    assert.deepEqual(complete('core '), [['set', 'show'], '']);
    assert.deepEqual(complete('core show '), [['channels', 'hanguphandlers', 'uptime', 'version'], '']);
    assert.deepEqual(splitWords(`sip trace on "a b" 'c'`), ['sip', 'trace', 'on', 'a b', 'c']);
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-shell-'));
    dirs.push(dir);
    const historyFile = join(dir, 'history');
    const input = new PassThrough();
    const output = new PassThrough();
    output.resume();
    let stdout = '';
    const ran: string[][] = [];
    const done = runShell(
      async (words) => {
        ran.push([...words]);
        return runAdminCommand([...words], env, { stdout: (t) => void (stdout += t), stderr: (t) => void (stdout += t) });
      },
      { io: { stdout: (t) => void (stdout += t), stderr: () => undefined }, historyFile, input, output },
    );
    input.write('core show version\n\nhelp\nchanels\nquit\n');
    assert.equal(await done, EXIT.ok);
    assert.deepEqual(ran, [['core', 'show', 'version'], ['--help'], ['chanels']]);
    assert.match(stdout, /Patchbay \d+\.\d+\.\d+/);
    assert.match(stdout, /did you mean 'channels'/);
    assert.equal(readFileSync(historyFile, 'utf8'), 'core show version\nhelp\nchanels\n');
  });

  test('stop --gracefully waits without piling listeners up (no MaxListenersExceededWarning)', async () => {
    // A stand-in for the server: a process that takes SIGUSR1/SIGUSR2 and goes on.
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-stop-'));
    dirs.push(dir);
    const stand = spawn(process.execPath, ['-e', "process.on('SIGUSR1',()=>{});process.on('SIGUSR2',()=>{});setTimeout(()=>{},60000)"], { stdio: 'ignore' });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      await new Promise((r) => setTimeout(r, 300));
      writeFileSync(join(dir, 'patchbay.pid'), `${stand.pid}\n`);
      const controller = new AbortController();
      let stderr = '';
      // 3 s of polling every 250 ms: more waits than the default limit of 10 listeners.
      const code = await runAdminCommand(['stop', '--gracefully', '--timeout', '3'], { ...env, PATCHBAY_DATA_DIR: dir }, { stdout: () => undefined, stderr: (t) => void (stderr += t), signal: controller.signal });
      assert.equal(code, EXIT.failure, stderr);
      assert.match(stderr, /still up after 3 s/);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings.filter((w) => /MaxListeners|memory leak/i.test(w)), []);
    } finally {
      process.off('warning', onWarning);
      stand.kill('SIGKILL');
    }
  });
});
