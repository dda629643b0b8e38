// examples/resume.js, the ari-client app that resumes after a reconnect, run as a real process
// against a test server: the server drops its WebSocket twice while user events and a call keep
// coming; the app handles every event exactly once, in order, and the call that arrived while it
// was away reaches it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/resume.js', import.meta.url));
const APP = 'resume-app';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let server: TestServer;
let child: ChildProcess | undefined;
let output = '';
before(async () => {
  server = await startTestServer();
});
after(async () => {
  child?.kill('SIGKILL');
  await server.stop();
});

async function waitForOutput(pattern: RegExp, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(output)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${output}`);
    await sleep(20);
  }
}

async function userEvent(name: string): Promise<void> {
  const response = await server.ari(`/events/user/${name}?application=${APP}`, { method: 'POST' });
  assert.equal(response.status, 204);
}

/** Drops the app's WebSocket from the server side, as a network failure would. */
function dropConnection(): void {
  const sink = server.core.applications.get(APP)?.sink as { close(): void } | undefined;
  assert.ok(sink, 'the app is connected');
  sink.close();
}

test('examples/resume.js handles every event exactly once across dropped connections', async () => {
  child = spawn(process.execPath, [EXAMPLE], { env: { ...process.env, ARI_URL: server.url, ARI_APP: APP }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await waitForOutput(/waiting for events of resume-app/, 'the app to start');

  let sent = 0;
  const send = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) await userEvent(`n${++sent}`);
  };
  await send(10);
  await waitForOutput(/user event n10\n/, 'n10');
  dropConnection();
  // Raised while ari-client is reconnecting (its first retry waits 100 ms), and a call arrives.
  await send(10);
  const call = await server.ari(`/channels/gap-call?endpoint=Local/answer@default&app=${APP}`, { method: 'POST' });
  assert.equal(call.status, 200);
  await send(5);
  await waitForOutput(/user event n25\n/, 'n25');
  await waitForOutput(/call gap-call entered/, 'the call that arrived during the gap');
  dropConnection();
  await send(5);
  await waitForOutput(/user event n30\n/, 'n30');
  await sleep(300);

  const handled = [...output.matchAll(/user event (n\d+)\n/g)].map((match) => match[1]);
  assert.deepEqual(handled, Array.from({ length: 30 }, (_, i) => `n${i + 1}`), 'each exactly once, in order');
  assert.equal((output.match(/connection lost; reconnecting/g) ?? []).length, 2);
  assert.equal(server.channel('gap-call')?.state, 'Up', 'the app answered the call');
  assert.doesNotMatch(output, /lost events|failed/);
  assert.equal((await server.ari('/channels/gap-call', { method: 'DELETE' })).status, 204);
});
