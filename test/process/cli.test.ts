// The real entry point (`node --import tsx src/main.ts`) as a child process: embedded defaults,
// configuration errors (exit 2, one line naming the key), the loopback rule for the default
// password, and a prompt clean exit on SIGTERM. Each child runs in a temporary directory so its
// default ./data lands there, never in the repository.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/ports.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
/** tsx resolved from the project, so the child needs nothing from its (temporary) working directory. */
const TSX = import.meta.resolve('tsx');
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;

interface Child {
  readonly process: ChildProcess;
  readonly cwd: string;
  stdout: string;
  stderr: string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
}

const children: Child[] = [];
const dirs: string[] = [];

after(() => {
  for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-cli-'));
  dirs.push(dir);
  return dir;
}

/** Starts the entry point in `cwd` with a clean environment plus `env`. */
function launch(cwd: string, args: string[], env: Record<string, string>): Child {
  const base = { ...process.env };
  for (const name of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_PORT', 'PATCHBAY_HTTP_BIND', 'PATCHBAY_DATA_DIR']) delete base[name];
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const record: Child = {
    process: child,
    cwd,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1))),
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (record.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (record.stderr += chunk));
  children.push(record);
  return record;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls until the server answers the ping, failing if the child exits or time runs out. */
async function waitForPing(child: Child, port: number, ms = 15_000): Promise<Response> {
  const deadline = Date.now() + ms;
  let exited = false;
  void child.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`the server exited early:\n${child.stderr}\n${child.stdout}`);
    try {
      return await fetch(`http://127.0.0.1:${port}/ari/system/ping`, { headers: { authorization: AUTH }, signal: AbortSignal.timeout(1000) });
    } catch {
      if (Date.now() > deadline) throw new Error(`no answer on port ${port} within ${ms} ms:\n${child.stderr}\n${child.stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Runs the entry point until it exits by itself (bounded), returning code and output. */
async function runToExit(cwd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const child = launch(cwd, args, env);
  const code = await within(child.exited, 15_000, 'waiting for the process to exit');
  return { code, stdout: child.stdout, stderr: child.stderr };
}

describe('with no configuration file', () => {
  let child: Child;
  let port: number;
  before(async () => {
    port = await freePort();
    child = launch(tempDir(), [], { PATCHBAY_HTTP_PORT: String(port) });
  });

  test('serves /ari/system/ping with asterisk:asterisk on 127.0.0.1', async () => {
    const response = await waitForPing(child, port);
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.ping, 'pong');
    const unauthorised = await fetch(`http://127.0.0.1:${port}/ari/system/ping`);
    assert.equal(unauthorised.status, 401);
  });

  test('warns that the default password is in use', () => {
    const output = `${child.stdout}\n${child.stderr}`;
    const warning = output.split('\n').find((line) => /default password/.test(line));
    assert.ok(warning, `no warning in:\n${output}`);
    // The JSON log marks it as a warning (pino level 40); a readable line says WARNING.
    const parsed = (() => {
      try {
        return JSON.parse(warning) as { level?: number };
      } catch {
        return undefined;
      }
    })();
    assert.ok(parsed ? parsed.level === 40 : /WARN/i.test(warning), warning);
  });

  test('keeps its data in ./data of its working directory', () => {
    assert.ok(existsSync(join(child.cwd, 'data')), 'data directory created in the working directory');
  });

  test('the server log reaches the log channels: messages.log records a module load', async () => {
    const manage = (method: string): Promise<Response> =>
      fetch(`http://127.0.0.1:${port}/ari/system/modules/res_ari_sounds.so`, { method, headers: { authorization: AUTH } });
    assert.equal((await manage('DELETE')).status, 204);
    assert.equal((await manage('POST')).status, 204);
    const file = join(child.cwd, 'data', 'logs', 'messages.log');
    assert.ok(existsSync(file), 'messages.log exists under ./data/logs');
    // Log files are appended in batches off the event loop: the line arrives just after the answer.
    let text = readFileSync(file, 'utf8');
    for (let waited = 0; !/Loaded module res_ari_sounds/.test(text) && waited < 3000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      text = readFileSync(file, 'utf8');
    }
    assert.match(text, /NOTICE: Loaded module res_ari_sounds\.so/);
    assert.match(text, /WARNING: .*default password/);
  });

  test('SIGTERM makes it exit 0 promptly', async () => {
    const started = Date.now();
    child.process.kill('SIGTERM');
    const code = await within(child.exited, 5000, 'waiting for exit after SIGTERM');
    assert.equal(code, 0, child.stderr);
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/ari/system/ping`, { headers: { authorization: AUTH } }));
  });
});

describe('configuration errors exit with code 2 and one line naming the key', () => {
  test('an unknown key in the file', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'patchbay.yaml'), 'http:\n  port: 8088\n  prot: 9\n');
    const { code, stdout, stderr } = await runToExit(cwd, ['--config', 'patchbay.yaml']);
    assert.equal(code, 2);
    const lines = stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0], /http\.prot/);
    assert.match(lines[0], /unknown key/);
    assert.match(lines[0], /patchbay\.yaml:3/, 'it names the file and line');
    assert.equal(stdout, '');
    assert.equal(existsSync(join(cwd, 'data')), false, 'nothing was started');
  });

  test('PATCHBAY_CONFIG names the file too', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'bad.yaml'), 'langauge: en\n');
    const { code, stderr } = await runToExit(cwd, [], { PATCHBAY_CONFIG: 'bad.yaml' });
    assert.equal(code, 2);
    assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
    assert.match(stderr, /langauge/);
  });

  test('the default password on 0.0.0.0 is refused, naming http.bind', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'open.yaml'), 'http:\n  bind: 0.0.0.0\n');
    const { code, stderr } = await runToExit(cwd, ['--config', 'open.yaml'], { PATCHBAY_HTTP_PORT: String(await freePort()) });
    assert.equal(code, 2);
    const lines = stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0], /http\.bind/);
    assert.match(lines[0], /default password/);
  });

  test('the same through PATCHBAY_HTTP_BIND', async () => {
    const { code, stderr } = await runToExit(tempDir(), [], { PATCHBAY_HTTP_BIND: '0.0.0.0', PATCHBAY_HTTP_PORT: String(await freePort()) });
    assert.equal(code, 2);
    assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
    assert.match(stderr, /http\.bind/);
    assert.match(stderr, /PATCHBAY_HTTP_BIND/);
  });
});
