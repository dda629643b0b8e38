// ARI outbound WebSockets opened per call: Stasis() on a Local channel opens a connection for that
// channel and closes it after the call; a connection that cannot be made, or is lost mid-call and
// cannot be re-established, sets STASISSTATUS=FAILED and the dialplan goes on.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { AppConnection } from '../helpers/app-server.ts';
import { cleanups, runCleanups, startApp, startOnFile, unusedPort, waitFor, watchAll } from './outbound-ws-helpers.ts';

after(runCleanups);

const PER_CALL_DIALPLAN = `
[default]
exten => answer,1,Answer()
 same => n,Wait(3600)

[percall]
exten => bot,1,Answer()
 same => n,Stasis(voicebot,one,two)
 same => n,Set(RESULT=\${STASISSTATUS})
 same => n,Hangup()
exten => dead,1,Stasis(deadbot)
 same => n,Set(RESULT=\${STASISSTATUS})
 same => n,Hangup()
`;

function perCallYaml(dir: string, port: number, deadPort: number): string {
  const dialplan = join(dir, 'extensions.conf');
  writeFileSync(dialplan, PER_CALL_DIALPLAN);
  return `
dialplan:
  file: ${dialplan}
websocket_clients:
  - name: bot
    uri: ws://127.0.0.1:${port}/bot
    protocols: ari
    connection_type: per_call_config
    reconnect_interval: 50
    reconnect_attempts: 2
  - name: dead
    uri: ws://127.0.0.1:${deadPort}/
    connection_type: per_call_config
    connection_timeout: 200
    reconnect_interval: 50
    reconnect_attempts: 2
ari:
  outbound_websockets:
    - name: voice
      websocket_client_id: bot
      apps: voicebot
      local_ari_user: asterisk
    - name: deadconn
      websocket_client_id: dead
      apps: deadbot
      local_ari_user: asterisk
`;
}



describe('per-call connections', () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-owc-dp-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));

  test('Stasis() on a Local channel opens a connection for that channel and closes it after the call', async () => {
    const app = await startApp();
    const pb = await startOnFile(perCallYaml(dir, app.port, await unusedPort()));
    // No application is registered until a call needs one.
    assert.deepEqual(await (await pb.ari('/applications')).json(), []);
    const originated = await pb.ari('/channels?endpoint=Local/bot@percall&extension=answer&context=default', { method: 'POST' });
    assert.equal(originated.status, 200);
    const first = (await originated.json()) as { id: string };
    const conn: AppConnection = await app.nextConnection().catch((err: Error) => {
      console.log(pb.logLines.join(''));
      throw err;
    });
    assert.equal(conn.request.url, '/bot');
    const registered = await conn.next();
    assert.equal(registered.type, 'ApplicationRegistered');
    const ephemeral = String(registered.application);
    assert.match(ephemeral, /^voicebot:Local\/bot@percall-[0-9a-f]+;2$/);
    const start = await conn.next();
    assert.equal(start.type, 'StasisStart');
    assert.equal(start.application, ephemeral);
    assert.deepEqual(start.args, ['one', 'two']);
    const channel = start.channel as { id: string; name: string };
    assert.equal(`voicebot:${channel.name}`, ephemeral);
    // REST over the per-call socket answers for the ephemeral application.
    const got = await conn.rest('GET', `channels/${channel.id}`);
    assert.equal(got.status_code, 200);
    assert.equal(got.application, ephemeral);
    // Timed from before the request: the server's linger starts when it handles it, never earlier.
    const opened = Date.now();
    const continued = await conn.rest('POST', `channels/${channel.id}/continue`);
    assert.equal(continued.status_code, 204);
    // Trailing events still arrive: the dialplan goes on (STASISSTATUS=SUCCESS) and hangs up.
    const trailing = await conn.until((m) => m.type === 'ChannelDestroyed');
    assert.ok(trailing.some((m) => m.type === 'StasisEnd'));
    assert.ok(trailing.some((m) => m.type === 'ChannelVarset' && m.variable === 'RESULT' && m.value === 'SUCCESS'));
    assert.equal(await conn.closed, 1000);
    assert.ok(Date.now() - opened >= 2500, 'the socket lingers for trailing events');
    assert.ok(!conn.messages.some((m) => m.type === 'ApplicationUnregistered'));
    assert.equal((await pb.ari(`/applications/${encodeURIComponent(ephemeral)}`)).status, 404);
    // The Local pair ended with the call.
    assert.equal((await pb.ari(`/channels/${first.id}`)).status, 404);
  });

  test('a per-call connection that cannot be made sets STASISSTATUS=FAILED and the dialplan continues', async () => {
    const app = await startApp();
    const pb = await startOnFile(perCallYaml(dir, app.port, await unusedPort()));
    const watcher = await watchAll(pb);
    const originated = await pb.ari('/channels?endpoint=Local/dead@percall&extension=answer&context=default', { method: 'POST' });
    assert.equal(originated.status, 200);
    const first = (await originated.json()) as { id: string };
    await waitFor(() => watcher.messages.some((m) => m.type === 'ChannelVarset' && m.variable === 'RESULT'));
    const result = watcher.messages.find((m) => m.type === 'ChannelVarset' && m.variable === 'RESULT')!;
    assert.equal(result.value, 'FAILED');
    assert.equal(app.attempts, 0);
    await pb.ari(`/channels/${first.id}`, { method: 'DELETE' });
  });
});

describe('per-call connection lost mid-call', () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-owc-dp2-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));

  test('the application drops the socket and it cannot be re-established: StasisEnd, STASISSTATUS=FAILED, the dialplan goes on', async () => {
    const app = await startApp();
    const pb = await startOnFile(perCallYaml(dir, app.port, await unusedPort()));
    const watcher = await watchAll(pb);
    const originated = await pb.ari('/channels?endpoint=Local/bot@percall&extension=answer&context=default', { method: 'POST' });
    assert.equal(originated.status, 200);
    const conn = await app.nextConnection();
    await conn.until((m) => m.type === 'StasisStart');
    app.refuse = true;
    conn.socket.terminate();
    await waitFor(() => watcher.messages.some((m) => m.type === 'ChannelVarset' && m.variable === 'RESULT'));
    const result = watcher.messages.find((m) => m.type === 'ChannelVarset' && m.variable === 'RESULT')!;
    assert.equal(result.value, 'FAILED');
    assert.ok(app.attempts >= 3, `reconnection was tried (${app.attempts} upgrade attempts)`);
  });
});
