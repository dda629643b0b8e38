// The admin CLI as real processes (its own entry file under tsx) against a test server. Apart from
// admin.test.ts, and `stop` against server processes apart again (admin-stop.test.ts): every process
// compiles its sources at start, which a loaded machine stretches to tens of seconds, and the test
// runner gives each file, not each test, its time limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ADMIN_MAIN, removeTempDirs, spawnNode, tempDir, until } from './admin-processes.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
  removeTempDirs();
});

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

});
