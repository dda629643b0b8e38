// The persisted event log across a crash of the server process (dist/main.js, `npm run build`):
// with ari.event_log.persist on, a client that processed events up to N resumes after SIGKILL and a
// restart on the same data directory, receives N+1… exactly once, and numbering goes on.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = join(REPOSITORY, 'dist', 'main.js');
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const cwd = mkdtempSync(join(tmpdir(), 'patchbay-event-log-'));
after(() => rmSync(cwd, { recursive: true, force: true }));

before(() => {
  if (!existsSync(MAIN)) {
    const built = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPOSITORY, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stdout + built.stderr);
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Running {
  readonly child: ChildProcess;
  readonly base: string;
  readonly exited: Promise<unknown>;
}

async function startServer(config: string): Promise<Running> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATCHBAY_HTTP_PORT: '0', PATCHBAY_SIP_PORT: '0', PATCHBAY_DATA_DIR: join(cwd, 'data') };
  delete env.PATCHBAY_CONFIG;
  delete env.PATCHBAY_HTTP_BIND;
  const child = spawn(process.execPath, [MAIN, '--config', config], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const match = /"url":"(http:\/\/[^"]+\/ari)"/.exec(output);
    if (match) return { child, base: match[1]!, exited };
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the server did not start:\n${output}`);
    }
    await sleep(50);
  }
}

function connect(base: string, query: string): Promise<{ socket: WebSocket; messages: Record<string, unknown>[] }> {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/events?${query}`, { headers: { authorization: AUTH } });
  const messages: Record<string, unknown>[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, messages }));
    socket.once('error', reject);
  });
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function userEvent(base: string, name: string): Promise<void> {
  const response = await fetch(`${base}/events/user/${name}?application=keeper`, { method: 'POST', headers: { authorization: AUTH } });
  assert.equal(response.status, 204);
}

test('killed and restarted with persistence on, the server resumes a client where it was', async () => {
  const config = join(cwd, 'persist.yaml');
  writeFileSync(config, 'ari:\n  event_log:\n    persist: true\n');
  const first = await startServer(config);
  let second: Running | undefined;
  try {
    const client = await connect(first.base, 'app=keeper&resumable=true');
    for (let i = 1; i <= 20; i++) await userEvent(first.base, `u${i}`);
    await until(() => client.messages.length === 20, '20 events');
    assert.deepEqual(client.messages.map((message) => message.sequence), Array.from({ length: 20 }, (_, i) => i + 1));
    // The client processed 12 of them when the server died.
    first.child.kill('SIGKILL');
    await first.exited;
    client.socket.terminate();

    second = await startServer(config);
    const resumed = await connect(second.base, 'app=keeper&resumeAfter=12');
    await until(() => resumed.messages.length === 8, 'the 8 events after 12');
    assert.deepEqual(resumed.messages.map((message) => message.eventname), ['u13', 'u14', 'u15', 'u16', 'u17', 'u18', 'u19', 'u20']);
    assert.deepEqual(resumed.messages.map((message) => message.sequence), [13, 14, 15, 16, 17, 18, 19, 20]);
    // Numbering goes on after the restart.
    await userEvent(second.base, 'u21');
    await until(() => resumed.messages.length === 9, 'the live event');
    assert.equal(resumed.messages[8]!.sequence, 21);
    assert.equal(resumed.messages[8]!.eventname, 'u21');
    resumed.socket.close();
  } finally {
    first.child.kill('SIGKILL');
    if (second) {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }
});
