// The module list as Asterisk 22 apps look it up (issue 20, item 8): res_stasis.so and the
// application modules (app_echo.so, app_dial.so, ...) are there with use counts; a module in use —
// res_stasis.so under the ARI resources, app_echo.so under a channel running Echo() — refuses to
// unload with 409 "Module could not be unloaded"; an idle application module unloads and takes its
// application out of the dialplan until it is loaded again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { unlessCluster } from '../helpers/cluster-server.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const DIALPLAN = `
[modules]
exten => echo,1,Answer()
 same => n,Echo()
`;

type Json = Record<string, any>;

let server: TestServer;
let dir: string;
let app: EventSocket;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-modules-'));
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') } });
  app = await server.events('app=fid-modules');
});

after(async () => {
  await app?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function module(name: string): Promise<Json> {
  const response = await server.ari(`/asterisk/modules/${name}`);
  assert.equal(response.status, 200, name);
  return (await response.json()) as Json;
}

async function status(method: string, path: string): Promise<{ status: number; body: Json | undefined }> {
  const response = await server.ari(path, { method });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : undefined };
}

/** Waits for an event of `type` about channel `id`. */
async function eventFor(type: string, id: string): Promise<Json> {
  const deadline = Date.now() + 4000;
  for (;;) {
    const event = (await app.next(Math.max(1, deadline - Date.now()))) as Json;
    if (event.type === type && event.channel?.id === id) return event;
  }
}

describe('modules (item 8)', () => {
  test('the list has res_stasis.so and one module per application Asterisk packages separately', async () => {
    const listed = (await (await server.ari('/asterisk/modules')).json()) as Json[];
    const names = new Set(listed.map((entry) => entry.name));
    for (const name of [
      'res_stasis.so',
      'app_stasis.so',
      'app_echo.so',
      'app_dial.so',
      'app_playback.so',
      'app_record.so',
      'app_mixmonitor.so',
      'app_stack.so',
      'res_stasis_playback.so',
      'res_stasis_recording.so',
      'res_stasis_snoop.so',
      'res_stasis_answer.so',
      'res_stasis_device_state.so',
    ]) {
      assert.ok(names.has(name), `${name} is listed`);
      assert.equal(listed.find((entry) => entry.name === name)!.status, 'Running', name);
    }
    // Every ARI resource module (and app_stasis.so) requires res_stasis.so: it is in use.
    assert.ok((await module('res_stasis.so')).use_count >= 12);
  });

  test('unloading res_stasis.so, in use, answers 409 and it keeps running', async () => {
    const refused = await status('DELETE', '/asterisk/modules/res_stasis.so');
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body, { message: 'Module could not be unloaded' });
    assert.equal((await module('res_stasis.so')).status, 'Running');
    // A support module a running resource requires is in use too.
    assert.equal((await status('DELETE', '/asterisk/modules/res_stasis_playback.so')).status, 409);
  });

  test("app_echo.so counts the channels running Echo(), refuses to unload while one does, and unloads when idle", unlessCluster('modules are each member\'s: the use count and unload are asked of B while Echo() runs on A or C'), async () => {
    assert.equal((await module('app_echo.so')).use_count, 0);
    await status('POST', '/channels/echoer?endpoint=Local/echo@modules&app=fid-modules&otherChannelId=echoer-2');
    await eventFor('StasisStart', 'echoer');
    const deadline = Date.now() + 15_000;
    while ((await module('app_echo.so')).use_count !== 1) {
      assert.ok(Date.now() < deadline, 'the ;2 half runs Echo()');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const refused = await status('DELETE', '/asterisk/modules/app_echo.so');
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body, { message: 'Module could not be unloaded' });
    assert.equal((await status('DELETE', '/channels/echoer')).status, 204);
    await eventFor('ChannelDestroyed', 'echoer');
    assert.equal((await module('app_echo.so')).use_count, 0);

    assert.equal((await status('DELETE', '/asterisk/modules/app_echo.so')).status, 204);
    assert.equal((await status('GET', '/asterisk/modules/app_echo.so')).status, 404);
    try {
      // Without its module the dialplan has no Echo(): the call ends at that step.
      await status('POST', '/channels/noecho?endpoint=Local/echo@modules&app=fid-modules&otherChannelId=noecho-2');
      const destroyed = await new Promise<Json>((resolve, reject) => {
        const until = Date.now() + 4000;
        const poll = async (): Promise<void> => {
          for (;;) {
            const event = (await app.next(Math.max(1, until - Date.now()))) as Json;
            if (event.type === 'ChannelDestroyed' && event.channel?.id === 'noecho-2') return resolve(event);
          }
        };
        poll().catch(reject);
      });
      assert.equal(destroyed.cause, 38);
    } finally {
      assert.equal((await status('POST', '/asterisk/modules/app_echo.so')).status, 204);
    }
    assert.equal((await module('app_echo.so')).status, 'Running');
  });
});
