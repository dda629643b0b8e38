// Channel names as Asterisk numbers them: each technology counts its own channels from 0, in 8
// hex digits (chan_pjsip's counter for `PJSIP/<endpoint>-%08x`, inbound and outbound alike;
// core_unreal's for `Local/<exten>@<context>-%08x;1/;2`), and a restarted server counts from 0
// again. Seen through ARI for a sequence of calls of the two technologies mixed: a real SIP phone
// (raw-phone.ts over UDP) calling in and being called, and Local channels originated between them.
// Counters are each server's (a cluster member's own, as each Asterisk's), so this runs one server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RawPhone } from '../interop/raw-phone.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const APP = 'names';
const alice = new RawPhone('alice');
const bob = new RawPhone('bob');
let server: TestServer;
let events: EventSocket;
const work = mkdtempSync(join(tmpdir(), 'patchbay-channel-names-'));
const dialplanFile = join(work, 'extensions.conf');
writeFileSync(dialplanFile, ['[phones]', `exten => 500,1,Stasis(${APP})`, ''].join('\n'));

function configFor(): Record<string, unknown> {
  return {
    config_objects: {
      res_pjsip: {
        endpoint: {
          alice: { context: 'phones', allow: 'ulaw' },
          bob: { context: 'phones', allow: 'ulaw', aors: 'bob' },
        },
        aor: { bob: { contact: `sip:bob@127.0.0.1:${bob.sipPort}` } },
      },
    },
    dialplan: { file: dialplanFile },
  };
}

before(async () => {
  await alice.open();
  await bob.open();
  server = await startTestServer(configFor() as never, { cluster: false });
  alice.serverPort = server.core.pjsip.port;
  bob.serverPort = server.core.pjsip.port;
  events = await server.events(`app=${APP}`);
});

after(async () => {
  alice.close();
  bob.close();
  await events?.close();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function nextStasisStart(): Promise<Json> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (event.type === 'StasisStart') return event;
  }
}

async function post(path: string, status = 200): Promise<Json> {
  const response = await server.ari(path, { method: 'POST' });
  assert.equal(response.status, status, await response.clone().text());
  return status === 204 ? {} : ((await response.json()) as Json);
}

async function hangUpAll(on: TestServer): Promise<void> {
  for (const channel of on.core.channels.list()) await on.ari(`/channels/${encodeURIComponent(channel.id)}`, { method: 'DELETE' });
  const deadline = Date.now() + 20_000;
  while (on.core.channels.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(on.core.channels.size, 0, 'every channel is gone');
}

/** A call from alice into the Stasis app, answered there: its channel as StasisStart shows it. */
async function inboundCall(): Promise<Json> {
  const call = alice.call('500');
  const start = await nextStasisStart();
  await post(`/channels/${start.channel.id}/answer`, 204);
  const { final } = await call;
  assert.match(final, /^SIP\/2\.0 200/);
  return start.channel;
}

/** A Local channel originated into the app: both halves' names as StasisStart shows them (;2 answered there lets ;1 in). */
async function localPair(): Promise<[string, string]> {
  const one = await post(`/channels?endpoint=${encodeURIComponent('Local/500@phones')}&app=${APP}`);
  const two = (await nextStasisStart()).channel;
  await post(`/channels/${two.id}/answer`, 204);
  const oneStart = (await nextStasisStart()).channel;
  assert.equal(oneStart.id, one.id);
  assert.equal(oneStart.name, one.name);
  return [one.name, two.name];
}

describe('channel names are numbered per technology, from 0', () => {
  test('PJSIP and Local calls mixed: each technology counts its own channels', async () => {
    const first = await inboundCall();
    assert.equal(first.name, 'PJSIP/alice-00000000');
    assert.match(first.id, /\.0$/, 'the first channel id ends .0, as Asterisk uniqueid');
    // Snoop channels have a counter of their own too (res_stasis_snoop's).
    const snoop = await post(`/channels/${first.id}/snoop?app=${APP}&spy=in`);
    assert.equal(snoop.name, `Snoop/${first.id}-00000000`);
    assert.equal((await nextStasisStart()).channel.name, snoop.name);

    assert.deepEqual(await localPair(), ['Local/500@phones-00000000;1', 'Local/500@phones-00000000;2']);

    // An outbound PJSIP channel takes chan_pjsip's next number, after the inbound one.
    const toBob = await post(`/channels?endpoint=PJSIP/bob&app=${APP}`);
    assert.equal(toBob.name, 'PJSIP/bob-00000001');
    const bobStart = await nextStasisStart();
    assert.equal(bobStart.channel.name, 'PJSIP/bob-00000001');

    assert.deepEqual(await localPair(), ['Local/500@phones-00000001;1', 'Local/500@phones-00000001;2']);
    assert.equal((await inboundCall()).name, 'PJSIP/alice-00000002');

    // Hung-up channels keep their numbers taken.
    await hangUpAll(server);
    assert.deepEqual(await localPair(), ['Local/500@phones-00000002;1', 'Local/500@phones-00000002;2']);
    assert.equal((await inboundCall()).name, 'PJSIP/alice-00000003');
    await hangUpAll(server);
  });

  test('a restarted server counts from 0 again', async () => {
    await events.close();
    await server.stop();
    server = await startTestServer(configFor() as never, { cluster: false });
    alice.serverPort = server.core.pjsip.port;
    bob.serverPort = server.core.pjsip.port;
    events = await server.events(`app=${APP}`);
    assert.deepEqual(await localPair(), ['Local/500@phones-00000000;1', 'Local/500@phones-00000000;2']);
    assert.equal((await inboundCall()).name, 'PJSIP/alice-00000000');
    await hangUpAll(server);
  });
});
