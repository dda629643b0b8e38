// The admin CLI (src/cli/admin.ts) against real servers: every command in-process with captured
// output and an environment pointing at a test server. As real processes: admin-process.test.ts
// (apart, so that each file's process starts fit the runner's time for a file under load).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EXIT, runAdminCommand } from '../../src/cli/admin.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let server: TestServer;
let env: NodeJS.ProcessEnv;
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-admin-'));
  dirs.push(dir);
  return dir;
}

async function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}, signal?: AbortSignal): Promise<Result> {
  return start(args, extraEnv, signal).done;
}

/** A command running in-process whose output so far can be read while it runs (for `events`). */
interface Running {
  readonly output: Result;
  readonly done: Promise<Result>;
}

function start(args: string[], extraEnv: NodeJS.ProcessEnv = {}, signal?: AbortSignal): Running {
  const output = { code: -1, stdout: '', stderr: '' };
  const done = runAdminCommand(args, { ...env, ...extraEnv }, {
    stdout: (t) => void (output.stdout += t),
    stderr: (t) => void (output.stderr += t),
    signal,
  }).then((code) => ({ ...output, code }));
  return { output, done };
}

/**
 * Polls until `check` holds (a loaded machine gives no fixed delay that is always enough); the
 * assertion after it says what was missing.
 */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !(await check()); ) await new Promise((r) => setTimeout(r, 50));
}

/** The `events` commands' private applications (patchbay-cli-…) the server lists. */
async function cliApplications(): Promise<string[]> {
  const apps = (await (await server.ari('/applications')).json()) as { name: string }[];
  return apps.map((app) => app.name).filter((name) => name.startsWith('patchbay-cli-'));
}

before(async () => {
  server = await startTestServer();
  // Only what a user would set: the port and the data directory. Credentials come from the
  // (embedded default) configuration, as they would from the server's file.
  env = { PATCHBAY_HTTP_PORT: String(server.address.port), PATCHBAY_HTTP_BIND: '127.0.0.1', PATCHBAY_DATA_DIR: server.dataDir };
});

after(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('admin CLI in-process', () => {
  test('--version and --help', async () => {
    const version = await run(['--version']);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+/);
    const help = await run(['--help']);
    assert.equal(help.code, 0);
    for (const word of ['channels', 'originate', 'dialplan show', '--gracefully', '--json', 'PATCHBAY_ARI_USER', 'PATCHBAY_ARI_PASSWORD', 'PATCHBAY_CONFIG', 'Exit codes']) {
      assert.ok(help.stdout.includes(word), word);
    }
  });

  test('usage errors are one line and exit 2', async () => {
    for (const args of [[], ['frobnicate'], ['show', 'bridge'], ['channels', '--bogus']]) {
      const result = await run(args);
      assert.equal(result.code, EXIT.usage, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1);
      assert.match(result.stderr, /^patchbay: /);
    }
  });

  test('originate, channels, show channel, apps, endpoints, bridges, hangup', async () => {
    const app = await server.events('app=admin-test-app');
    const originated = await run(['originate', 'Local/answer@default', 'admin-test-app', '--json']);
    assert.equal(originated.code, 0, originated.stderr);
    const channel = JSON.parse(originated.stdout) as { id: string; name: string };
    assert.match(channel.name, /^Local\/answer@default/);

    const table = await run(['channels']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID\s+NAME\s+STATE/);
    assert.ok(table.stdout.includes(channel.id));
    const list = JSON.parse((await run(['channels', '--json'])).stdout) as { id: string }[];
    assert.ok(list.some((c) => c.id === channel.id));

    const shown = await run(['show', 'channel', channel.id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`Id:\\s+${channel.id}`));
    assert.match(shown.stdout, /Location:/);

    const dialplanCall = await run(['originate', 'Local/answer@default', 'echo@default', '--json']);
    assert.equal(dialplanCall.code, 0, dialplanCall.stderr);

    const apps = await run(['apps', '--json']);
    assert.equal(apps.code, 0, apps.stderr);
    assert.ok(Array.isArray(JSON.parse(apps.stdout)));
    const endpoints = await run(['endpoints']);
    assert.equal(endpoints.code, 0, endpoints.stderr);
    assert.match(endpoints.stdout, /^TECHNOLOGY\s+RESOURCE\s+STATE/);

    const created = await server.ari('/bridges?bridgeId=admin-bridge&name=meeting', { method: 'POST' });
    assert.equal(created.status, 200);
    const bridges = await run(['bridges']);
    assert.equal(bridges.code, 0, bridges.stderr);
    assert.match(bridges.stdout, /admin-bridge\s+meeting\s+mixing/);

    const hungUp = await run(['hangup', channel.id]);
    assert.equal(hungUp.code, 0, hungUp.stderr);
    assert.equal((await server.ari(`/channels/${channel.id}`)).status, 404);
    for (const c of JSON.parse((await run(['channels', '--json'])).stdout) as { id: string }[]) await run(['hangup', c.id]);
    app.socket.close();
  });

  test('not found exits 5, bad credentials 4, no server 3, refused request 6', async () => {
    const missing = await run(['show', 'channel', 'no-such-channel']);
    assert.equal(missing.code, EXIT.notFound);
    assert.match(missing.stderr, /404/);
    const badAuth = await run(['channels'], { PATCHBAY_ARI_USER: 'asterisk', PATCHBAY_ARI_PASSWORD: 'wrong' });
    assert.equal(badAuth.code, EXIT.auth);
    assert.match(badAuth.stderr, /401/);
    assert.ok(!badAuth.stderr.includes('wrong'), 'the password is never printed');
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const down = await run(['channels'], { PATCHBAY_HTTP_PORT: String(closed) });
    assert.equal(down.code, EXIT.unreachable);
    assert.match(down.stderr, /ECONNREFUSED/);
    const refused = await run(['originate', 'Bogus/thing', 'app']);
    assert.ok(refused.code === EXIT.refused || refused.code === EXIT.notFound, refused.stderr);
  });

  test('crypt-only configuration needs a password', async () => {
    const dir = tempDir();
    const file = join(dir, 'patchbay.yaml');
    // crypt('secret', '$6$salt') from unixcrypt.
    const { encrypt } = await import('unixcrypt');
    writeFileSync(file, `ari:\n  users:\n    - name: admin\n      password: '${encrypt('secret', '$6$saltsalt')}'\n      password_format: crypt\n`);
    const result = await run(['channels', '--config', file]);
    assert.equal(result.code, EXIT.usage);
    assert.match(result.stderr, /--password/);
  });

  test('dialplan show reads the configured dialplan, whole or one context', async () => {
    const all = await run(['dialplan', 'show']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /\[ Context 'default' \]/);
    assert.match(all.stdout, /'1000' =>\s+1\.\s+Answer\(\)/);
    assert.match(all.stdout, /Stasis\(test-app,dialplan\)/);
    const dir = tempDir();
    const file = join(dir, 'extensions.conf');
    writeFileSync(file, '[one]\nexten => 1,1,NoOp(a)\n[two]\nexten => 2,1,Hangup()\n');
    const two = await run(['dialplan', 'show', 'two', '--json', '--config', writeConfig(dir, `dialplan:\n  file: ${file}\n`)]);
    assert.equal(two.code, 0, two.stderr);
    const parsed = JSON.parse(two.stdout) as { contexts: { name: string }[] };
    assert.deepEqual(parsed.contexts.map((c) => c.name), ['two']);
    const none = await run(['dialplan', 'show', 'nowhere']);
    assert.equal(none.code, EXIT.notFound);
  });

  test('reload reloads the reloadable modules, or the one named', async () => {
    const all = await run(['reload']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /pbx_config\.so/);
    const one = await run(['reload', 'pbx_config.so', '--json']);
    assert.deepEqual(JSON.parse(one.stdout), { reloaded: ['pbx_config.so'] });
    const missing = await run(['reload', 'no_such_module.so']);
    assert.equal(missing.code, EXIT.notFound);
  });

  test('events prints one readable line per event, filtered by --app', async () => {
    const controller = new AbortController();
    const apps = await server.events('app=watched-app,other-app');
    const pending = start(['events', '--app', 'watched-app'], {}, controller.signal);
    // The CLI says it listens once its event WebSocket is open, and the server registers its
    // subscription before it answers the upgrade: what happens after that line is seen.
    await until(() => pending.output.stderr.includes('listening'));
    assert.match(pending.output.stderr, /listening for events/);
    const other = (await (await server.ari('/channels?endpoint=Local/answer@default&app=other-app', { method: 'POST' })).json()) as { id: string };
    const watched = (await (await server.ari('/channels?endpoint=Local/answer@default&app=watched-app', { method: 'POST' })).json()) as { id: string; name: string };
    await until(() => pending.output.stdout.includes(' StasisStart '));
    await server.ari(`/channels/${watched.id}`, { method: 'DELETE' });
    await server.ari(`/channels/${other.id}`, { method: 'DELETE' });
    // The other channel's events would come before or beside the watched one's last: wait for
    // both channels to be gone, then for the watched one's ChannelDestroyed line.
    await until(async () => server.channel(other.id) === undefined && server.channel(watched.id) === undefined);
    await until(() => / ChannelDestroyed /.test(pending.output.stdout));
    controller.abort();
    const result = await pending.done;
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.ok(lines.length >= 1, result.stdout);
    for (const line of lines) {
      assert.match(line, /^\d{4}-\d\d-\d\dT\S+ [A-Z]\w+/);
      assert.ok(line.includes(watched.name), line);
    }
    assert.ok(lines.some((l) => / ChannelDestroyed /.test(l)), result.stdout);

    const earlier = new Set(await cliApplications());
    const limited = run(['events', '--limit', '1', '--json']);
    // --json prints no "listening" line: the CLI's new application in the list says it is subscribed.
    const subscribed = async (): Promise<boolean> => (await cliApplications()).some((name) => !earlier.has(name));
    await until(subscribed);
    assert.ok(await subscribed(), 'the events command subscribed');
    const third = (await (await server.ari('/channels?endpoint=Local/answer@default&app=other-app', { method: 'POST' })).json()) as { id: string };
    const one = await limited;
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout.trim().split('\n').length, 1);
    assert.ok(typeof (JSON.parse(one.stdout) as { type: string }).type === 'string');
    await server.ari(`/channels/${third.id}`, { method: 'DELETE' });
    apps.socket.close();
  });
});

function writeConfig(dir: string, text: string): string {
  const file = join(dir, 'patchbay.yaml');
  writeFileSync(file, text);
  return file;
}
