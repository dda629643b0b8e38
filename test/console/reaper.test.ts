// The web console's leftovers when its browser dies (src/console/reaper.ts): a listen-in's snoop
// channel and `console-listen-*` bridge, in a `patchbay-console-*` application whose events
// connection is gone, are removed once the grace period has passed — not before, not those of a
// console still connected, and never another application's channels or bridges.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ConsoleReaper } from '../../src/console/reaper.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

async function post(path: string): Promise<{ id: string }> {
  const response = await server.ari(path, { method: 'POST' });
  assert.equal(response.ok, true, `${path}: ${response.status} ${await response.clone().text()}`);
  return (await response.json()) as { id: string };
}

/** A console's listen-in on `target`: a snoop in the console's app, bridged in a console-listen bridge. */
async function listenIn(app: string, target: string): Promise<{ snoop: string; bridge: string }> {
  const snoop = await post(`/channels/${target}/snoop?spy=both&app=${app}`);
  const bridge = await post(`/bridges?type=mixing&name=console-listen-${app.slice(-4)}`);
  assert.equal((await server.ari(`/bridges/${bridge.id}/addChannel?channel=${snoop.id}`, { method: 'POST' })).status, 204);
  return { snoop: snoop.id, bridge: bridge.id };
}

test('a dead console loses its listen-in after the grace period; a live one and other apps keep theirs', async () => {
  const other = await server.events('app=other-app');
  const dead = await server.events('app=patchbay-console-dead');
  const live = await server.events('app=patchbay-console-live');
  const target = await post('/channels?endpoint=Local/echo@default&app=other-app');
  const othersBridge = await post('/bridges?type=mixing&name=console-listen-notmine');
  const deadListen = await listenIn('patchbay-console-dead', target.id);
  const liveListen = await listenIn('patchbay-console-live', target.id);
  const reaped: string[] = [];
  const reaper = new ConsoleReaper(server.core, { graceMs: 30_000, intervalMs: 3_600_000, onReaped: (app, channels, bridges) => reaped.push(`${app} ${channels} ${bridges}`) });
  try {
    await dead.close();
    for (let i = 0; i < 100 && server.core.applications.list().find((a) => a.name === 'patchbay-console-dead')?.active; i++) await new Promise((r) => setTimeout(r, 20));
    // Within the grace period (a page that lost its connection comes back): nothing goes.
    reaper.sweep(Date.now() + 1_000);
    assert.ok(server.core.channels.get(deadListen.snoop));
    // After it: the dead console's snoop and listen bridge go, nothing else.
    reaper.sweep(Date.now() + 31_000);
    for (let i = 0; i < 100 && server.core.channels.get(deadListen.snoop); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(server.core.channels.get(deadListen.snoop), undefined, 'the snoop channel is hung up');
    assert.equal((await server.ari(`/bridges/${deadListen.bridge}`)).status, 404, 'the listen bridge is destroyed');
    assert.deepEqual(reaped, ['patchbay-console-dead 1 1']);
    assert.ok(server.core.channels.get(liveListen.snoop), "the live console's listen-in stays");
    assert.equal((await server.ari(`/bridges/${liveListen.bridge}`)).status, 200);
    assert.equal((await server.ari(`/bridges/${othersBridge.id}`)).status, 200, 'an empty bridge no console channel was in stays');
    assert.ok(server.core.channels.get(target.id), "the listened-to channel stays");
  } finally {
    reaper.close();
    await server.ari(`/channels/${target.id}`, { method: 'DELETE' });
    await live.close();
    await other.close();
  }
});
