// The admin CLI as real processes (its own entry file under tsx) against a test server, and `stop`
// against a server process it finds through its pidfile. Apart from admin.test.ts: every process
// here compiles its sources at start, which a loaded machine stretches to tens of seconds, and the
// test runner gives each file, not each test, its time limit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { readPidFile } from '../../src/cli/pidfile.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const ADMIN_MAIN = fileURLToPath(new URL('../../src/cli/admin-main.ts', import.meta.url));
const SERVER_MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

let server: TestServer;
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-admin-'));
  dirs.push(dir);
  return dir;
}

/** Polls until `check` holds (a loaded machine gives no fixed delay that is always enough). */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !(await check()); ) await new Promise((r) => setTimeout(r, 50));
}

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Spawned {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnNode(args: string[], childEnv: NodeJS.ProcessEnv, cwd: string): { child: ReturnType<typeof spawn>; done: Promise<Spawned> } {
  const base = { ...process.env };
  for (const name of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_PORT', 'PATCHBAY_HTTP_BIND', 'PATCHBAY_DATA_DIR', 'PATCHBAY_ARI_USER', 'PATCHBAY_ARI_PASSWORD', 'PATCHBAY_URL']) delete base[name];
  const child = spawn(process.execPath, ['--import', TSX, ...args], { cwd, env: { ...base, ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  const result: Spawned = { code: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (result.stdout += String(d)));
  child.stderr!.on('data', (d) => (result.stderr += String(d)));
  const done = new Promise<Spawned>((resolve) => child.once('exit', (code) => resolve({ ...result, code, stdout: result.stdout, stderr: result.stderr })));
  return { child, done };
}

/** A server as its own process on a free port, answering ARI. */
async function serverAsProcess() {
  const dir = tempDir();
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(p));
    });
  });
  const serverEnv = { PATCHBAY_HTTP_PORT: String(port), PATCHBAY_DATA_DIR: join(dir, 'data'), PATCHBAY_SIP_PORT: '0' };
  const serverProcess = spawnNode([SERVER_MAIN], serverEnv, dir);
  const url = `http://127.0.0.1:${port}/ari`;
  const auth = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
  let up = false;
  // The server compiles its sources under tsx at start: 60 s leaves room for a loaded CI machine.
  await until(async () => (up = await fetch(`${url}/asterisk/ping`, { headers: { authorization: auth } }).then((r) => r.ok, () => false)), 60_000);
  assert.ok(up, 'the server process answers');
  // The pidfile is written just after the listeners open; on a loaded machine that can be a moment
  // after the first answer, and `patchbay stop` needs it.
  await until(() => readPidFile(join(dir, 'data')) !== null);
  return { dir, port, serverEnv, serverProcess, url, auth };
}

describe('admin CLI as a process', () => {
  test('channels against the test server, as a real process', async () => {
    const { done } = spawnNode([ADMIN_MAIN, 'channels', '--json'], { PATCHBAY_HTTP_PORT: String(server.address.port) }, tempDir());
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.ok(Array.isArray(JSON.parse(result.stdout)));
  });

  test('events as a process: lines as they come, SIGINT ends it with exit 0', async () => {
    const events = spawnNode([ADMIN_MAIN, 'events'], { PATCHBAY_HTTP_PORT: String(server.address.port) }, tempDir());
    let stderr = '';
    events.child.stderr!.on('data', (d) => (stderr += String(d)));
    // A process of its own under tsx: on a loaded machine its start alone can take many seconds.
    await until(() => stderr.includes('listening'), 60_000);
    assert.match(stderr, /listening for events/);
    let stdout = '';
    events.child.stdout!.on('data', (d) => (stdout += String(d)));
    const app = await server.events('app=process-app');
    const channel = (await (await server.ari('/channels?endpoint=Local/answer@default&app=process-app', { method: 'POST' })).json()) as { id: string; name: string };
    await until(() => stdout.includes('ChannelCreated'));
    events.child.kill('SIGINT');
    const result = await events.done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`ChannelCreated\\s+${channel.name.replace(/[;@/]/g, '.')}`));
    await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
    app.socket.close();
  });

  test('stop --gracefully waits for the last channel, then the server process exits', async () => {
    const { dir, port, serverEnv, serverProcess, url, auth } = await serverAsProcess();
    try {
      // The server wrote its pidfile once it listened.
      assert.equal(readPidFile(join(dir, 'data')), serverProcess.child.pid);
      const call = (await (await fetch(`${url}/channels?endpoint=Local/echo@default&extension=echo&context=default`, { method: 'POST', headers: { authorization: auth } })).json()) as { id: string };
      const stopper = spawnNode([ADMIN_MAIN, 'stop', '--gracefully'], serverEnv, dir);
      // The admin command is a process of its own: on a loaded machine it may take seconds to start,
      // signal and poll, so wait for the server to say it drains and for the command to report what
      // it waits for, rather than for fixed times.
      let stopperOut = '';
      stopper.child.stdout!.on('data', (d) => (stopperOut += String(d)));
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 503 && /waiting for \d+ channel/.test(stopperOut)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(stopperOut, /waiting for [1-9]\d* channel/, 'the command reports the call it waits for');
      assert.equal(serverProcess.child.exitCode, null, 'still running while a call is up');
      // Draining: a new call is refused, the health check tells load balancers, the call goes on.
      const refused = await fetch(`${url}/channels?endpoint=Local/echo@default&extension=echo&context=default`, { method: 'POST', headers: { authorization: auth } });
      assert.equal(refused.status, 503);
      assert.match(((await refused.json()) as { message: string }).message, /shutting down gracefully/);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(health.status, 503);
      assert.equal(((await health.json()) as { status: string }).status, 'draining');
      assert.equal((await fetch(`${url}/channels/${call.id}`, { headers: { authorization: auth } })).status, 200);
      await fetch(`${url}/channels/${call.id}`, { method: 'DELETE', headers: { authorization: auth } });
      const stopped = await stopper.done;
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stdout, /waiting for \d+ channel/);
      assert.match(stopped.stdout, /stopped \(pid \d+\)/);
      const exit = await serverProcess.done;
      assert.equal(exit.code, 0);
    } finally {
      if (serverProcess.child.exitCode === null) serverProcess.child.kill('SIGKILL');
    }
  });

  test('stop --gracefully that times out leaves the server running and taking calls again', async () => {
    const { dir, port, serverEnv, serverProcess, url, auth } = await serverAsProcess();
    try {
      const originate = () => fetch(`${url}/channels?endpoint=Local/echo@default&extension=echo&context=default`, { method: 'POST', headers: { authorization: auth } });
      const call = (await (await originate()).json()) as { id: string };
      const stopper = await spawnNode([ADMIN_MAIN, 'stop', '--gracefully', '--timeout', '1'], serverEnv, dir).done;
      assert.equal(stopper.code, 1);
      assert.match(stopper.stderr, /still up after 1 s; the server was not stopped and takes calls again/);
      assert.equal(serverProcess.child.exitCode, null);
      let answered = 0;
      // The server takes calls again once SIGUSR2 is handled: soon, but not at a fixed time under load.
      for (const deadline = Date.now() + 20_000; Date.now() < deadline && answered !== 200; ) {
        const again = await originate();
        answered = again.status;
        if (answered === 200) await fetch(`${url}/channels/${((await again.json()) as { id: string }).id}`, { method: 'DELETE', headers: { authorization: auth } });
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(answered, 200, 'new calls are taken again');
      assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
      await fetch(`${url}/channels/${call.id}`, { method: 'DELETE', headers: { authorization: auth } });
    } finally {
      if (serverProcess.child.exitCode === null) serverProcess.child.kill('SIGKILL');
    }
  });
});
