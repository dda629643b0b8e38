// The compiled entry point (dist/main.js, built by `npm ci`'s prepare script) as a real process:
// --version, the one-line start-up failures with their exit codes, and SIGHUP reloading the dialplan.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = join(REPOSITORY, 'dist', 'main.js');
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const cwd = mkdtempSync(join(tmpdir(), 'patchbay-entry-'));
after(() => rmSync(cwd, { recursive: true, force: true }));

before(() => {
  // `npm ci` builds dist/; build it here when the tests run from a tree that was never built.
  if (!existsSync(MAIN)) {
    const built = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPOSITORY, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stdout + built.stderr);
  }
});

function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATCHBAY_HTTP_PORT: '0', PATCHBAY_SIP_PORT: '0', PATCHBAY_DATA_DIR: join(cwd, 'data'), ...extra };
  for (const name of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_BIND']) if (!(name in extra)) delete env[name];
  return env;
}

function run(args: string[], env = baseEnv()): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [MAIN, ...args], { cwd, env, encoding: 'utf8', timeout: 20_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves 'timeout' after ms without keeping the process alive once the race is decided (the file must exit by itself). */
const timeoutAfter = (ms: number): Promise<'timeout'> => new Promise((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

test('--version prints the package version; --help lists the options, variables and commands', () => {
  const { version } = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { version: string };
  const v = run(['--version']);
  assert.equal(v.status, 0);
  assert.equal(v.stdout, `patchbay ${version}\n`);
  const h = run(['--help']);
  assert.equal(h.status, 0);
  for (const word of ['--config', '--version', 'PATCHBAY_CONFIG', 'PATCHBAY_HTTP_PORT', 'PATCHBAY_HTTP_BIND', 'PATCHBAY_DATA_DIR', 'PATCHBAY_SIP_PORT', 'channels', 'originate', 'dialplan show', 'events', 'SIGHUP']) {
    assert.ok(h.stdout.includes(word), `--help mentions ${word}`);
  }
});

function assertOneLine(result: { status: number | null; stderr: string }, code: number, pattern: RegExp): void {
  assert.equal(result.status, code, result.stderr);
  assert.match(result.stderr, /^patchbay: [^\n]+\n$/, 'exactly one line on stderr');
  assert.match(result.stderr, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

test('start-up failures are one line on stderr and a documented exit code', async () => {
  writeFileSync(join(cwd, 'bad-key.yaml'), 'logging:\n  level: loud\n');
  assertOneLine(run(['--config', join(cwd, 'bad-key.yaml')]), 2, /logging\.level/);
  assertOneLine(run(['--no-such-option']), 2, /no-such-option/);

  writeFileSync(join(cwd, 'bad.conf'), '[default]\nexten => 1,1,Answer()\nthis is not dialplan\n');
  writeFileSync(join(cwd, 'bad-dialplan.yaml'), `dialplan:\n  file: ${join(cwd, 'bad.conf')}\n`);
  assertOneLine(run(['--config', join(cwd, 'bad-dialplan.yaml')]), 2, /bad\.conf:3/);

  writeFileSync(join(cwd, 'a-file'), '');
  assertOneLine(run([], baseEnv({ PATCHBAY_DATA_DIR: join(cwd, 'a-file', 'data') })), 4, /a-file/);

  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = blocker.address() as net.AddressInfo;
    // spawnSync would block the event loop that owns the listening socket: that is fine, the kernel answers.
    assertOneLine(run([], baseEnv({ PATCHBAY_HTTP_PORT: String(port) })), 3, new RegExp(`127\\.0\\.0\\.1:${port}: address already in use`));
  } finally {
    blocker.close();
  }
});

test('SIGHUP reloads the dialplan: an extension added to the file can be dialled', async () => {
  const dialplan = join(cwd, 'extensions.conf');
  writeFileSync(dialplan, '[hup]\nexten => 1000,1,Stasis(hup-app,first)\n');
  writeFileSync(join(cwd, 'hup.yaml'), `dialplan:\n  file: ${dialplan}\n`);
  const child = spawn(process.execPath, [MAIN, '--config', join(cwd, 'hup.yaml')], { cwd, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  try {
    const deadline = Date.now() + 15_000;
    let base = '';
    while (!base) {
      const match = /"url":"(http:\/\/[^"]+\/ari)"/.exec(output);
      if (match) base = match[1]!;
      else if (Date.now() > deadline) throw new Error(`the server did not start:\n${output}`);
      else await sleep(50);
    }
    const ari = (path: string, method = 'GET'): Promise<Response> => fetch(`${base}${path}`, { method, headers: { authorization: AUTH } });
    const socket = new WebSocket(`${base.replace('http', 'ws')}/events?app=hup-app`, { headers: { authorization: AUTH } });
    const messages: Record<string, any>[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    // Short where nothing must come, long where it must (a process of its own on a loaded machine).
    const stasisArgs = async (args: string, timeoutMs = 15_000): Promise<boolean> => {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        if (messages.some((m) => m.type === 'StasisStart' && (m.args as string[]).join(',') === args)) return true;
        await sleep(50);
      }
      return false;
    };
    // Before the reload, 2000 does not exist: nothing enters the app from the dialplan.
    await ari('/channels?endpoint=Local/2000@hup&app=hup-app&appArgs=caller', 'POST');
    assert.equal(await stasisArgs('second', 3000), false);
    writeFileSync(dialplan, '[hup]\nexten => 1000,1,Stasis(hup-app,first)\nexten => 2000,1,Stasis(hup-app,second)\n');
    child.kill('SIGHUP');
    const until = Date.now() + 30_000;
    while (!output.includes('Reloaded module pbx_config.so')) {
      if (Date.now() > until) throw new Error(`no reload:\n${output}`);
      await sleep(50);
    }
    assert.equal((await ari('/channels?endpoint=Local/2000@hup&app=hup-app&appArgs=caller', 'POST')).status, 200);
    assert.ok(await stasisArgs('second'), `the new extension runs:\n${output}`);
    // A broken file is reported and the running dialplan stays.
    writeFileSync(dialplan, 'this is not dialplan\n');
    child.kill('SIGHUP');
    const until2 = Date.now() + 30_000;
    while (!output.includes('dialplan reload failed')) {
      if (Date.now() > until2) throw new Error(`no failure reported:\n${output}`);
      await sleep(50);
    }
    assert.equal(child.exitCode, null, 'a bad dialplan on reload does not stop the server');
    socket.terminate();
    child.kill('SIGTERM');
    assert.equal(await Promise.race([exited, timeoutAfter(8000)]), 0, output);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

test('SIGHUP reloads the configuration file: changed ARI users apply at once, other changes are named', async () => {
  const file = join(cwd, 'users.yaml');
  const users = (password: string, bodyLimit: number): string =>
    `ari:\n  users:\n    - name: ops\n      password: ${password}\nhttp:\n  body_limit_bytes: ${bodyLimit}\n`;
  writeFileSync(file, users('first-secret', 100000));
  const child = spawn(process.execPath, [MAIN, '--config', file], { cwd, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const waitFor = async (text: string): Promise<void> => {
    const until = Date.now() + 30_000;
    while (!output.includes(text)) {
      if (Date.now() > until) throw new Error(`no "${text}":\n${output}`);
      await sleep(50);
    }
  };
  try {
    await waitFor('"url":"');
    const base = /"url":"(http:\/\/[^"]+\/ari)"/.exec(output)![1]!;
    const ping = (password: string): Promise<number> =>
      fetch(`${base}/asterisk/ping`, { headers: { authorization: `Basic ${Buffer.from(`ops:${password}`).toString('base64')}` } }).then((r) => r.status);
    assert.equal(await ping('first-secret'), 200);
    writeFileSync(file, users('second-secret', 200000));
    child.kill('SIGHUP');
    await waitFor('configuration reloaded: ari.users applied');
    await waitFor('changed settings that take effect at the next start: http.body_limit_bytes');
    assert.equal(await ping('first-secret'), 401, 'the old password stops working at once');
    assert.equal(await ping('second-secret'), 200);
    // A file that no longer validates is reported; the running configuration stays.
    writeFileSync(file, 'logging:\n  level: loud\n');
    child.kill('SIGHUP');
    await waitFor('configuration reload failed, the running configuration stays');
    assert.equal(await ping('second-secret'), 200);
    child.kill('SIGTERM');
    assert.equal(await Promise.race([exited, timeoutAfter(8000)]), 0, output);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
