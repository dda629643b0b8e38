// Endpoints (the PJSIP set from dynamic configuration), endpoint subscriptions at both levels,
// out-of-call messages, and device states derived from an endpoint's channels.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ChannelDriver } from '../../src/core/channels/technology.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({
    config_objects: { res_pjsip: { endpoint: { alice: { context: 'default' }, bob: { context: 'default' } } } },
  });
});
after(async () => {
  // Nothing leaks: every channel made here is gone.
  assert.equal(server.allChannels().length, 0);
  await server.stop();
});

const json = (body: unknown): RequestInit => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function status(path: string, init?: RequestInit): Promise<number> {
  const response = await server.ari(path, init);
  await response.arrayBuffer();
  return response.status;
}

async function getJson(path: string): Promise<unknown> {
  const response = await server.ari(path);
  assert.equal(response.status, 200, path);
  return response.json();
}

async function subscribe(app: string, ...sources: string[]): Promise<void> {
  // The last occurrence of a repeated key wins, so several sources travel comma-separated.
  const response = await server.ari(`/applications/${app}/subscription?eventSource=${sources.map(encodeURIComponent).join(',')}`, { method: 'POST' });
  assert.equal(response.status, 200, `${app} ← ${sources.join(',')}: ${await response.text()}`);
}

/** An app connection subscribed to the given sources. */
async function watcher(app: string, ...sources: string[]): Promise<EventSocket> {
  const socket = await server.events(`app=${app}`);
  if (sources.length > 0) await subscribe(app, ...sources);
  return socket;
}

/** The channel driver of a channel nothing carries: every request to its far end is a no-op. */
const inertDriver: ChannelDriver = {
  call() {},
  answer() {},
  hangup() {},
  indicate() {},
  sendDigit() {},
  writeFrame() {},
};

let sequence = 0;
function aliceChannel(): Channel {
  sequence += 1;
  const channel = server.core.channels.create({
    name: `PJSIP/alice-${sequence.toString(16).padStart(8, '0')}`,
    technology: 'PJSIP',
    endpointResource: 'alice',
    direction: 'inbound',
    state: 'Ring',
  });
  channel.driver = inertDriver;
  return channel;
}

const offline = (resource: string) => ({ technology: 'PJSIP', resource, state: 'offline', channel_ids: [] });

describe('listing and retrieval', () => {
  test('GET /endpoints lists the configured PJSIP endpoints, offline and without channels', async () => {
    assert.deepEqual(await getJson('/endpoints'), [offline('alice'), offline('bob')]);
  });

  test('listByTech: the technology matches case-insensitively; an unknown one is 404', async () => {
    assert.deepEqual(await getJson('/endpoints/PJSIP'), [offline('alice'), offline('bob')]);
    assert.deepEqual(await getJson('/endpoints/pjsip'), [offline('alice'), offline('bob')]);
    assert.equal(await status('/endpoints/SCCP'), 404);
    // Local is a channel technology without endpoints.
    assert.equal(await status('/endpoints/Local'), 404);
  });

  test('get: one endpoint; unknown resource or technology 404; empty resource is not an endpoint', async () => {
    assert.deepEqual(await getJson('/endpoints/PJSIP/alice'), offline('alice'));
    assert.deepEqual(await getJson('/endpoints/pjsip/bob'), offline('bob'));
    assert.equal(await status('/endpoints/PJSIP/carol'), 404);
    assert.equal(await status('/endpoints/SCCP/alice'), 404);
    assert.equal(await status('/endpoints/PJSIP/'), 404);
    const missing = await server.ari('/endpoints/PJSIP/nobody');
    assert.deepEqual(await missing.json(), { message: 'Endpoint not found' });
  });

  test('a res_pjsip endpoint created through dynamic configuration appears, and goes when deleted', async () => {
    const created = await server.ari('/asterisk/config/dynamic/res_pjsip/endpoint/carol', {
      method: 'PUT',
      ...json({ fields: [{ attribute: 'context', value: 'default' }] }),
    });
    assert.equal(created.status, 200);
    assert.deepEqual(await getJson('/endpoints/PJSIP/carol'), offline('carol'));
    assert.deepEqual(await getJson('/endpoints'), [offline('alice'), offline('bob'), offline('carol')]);
    // Other configuration objects are not endpoints.
    await server.ari('/asterisk/config/dynamic/res_pjsip/aor/carol', { method: 'PUT', ...json({ fields: [] }) });
    assert.equal((await getJson('/endpoints/PJSIP') as unknown[]).length, 3);
    assert.equal(await status('/asterisk/config/dynamic/res_pjsip/aor/carol', { method: 'DELETE' }), 204);

    assert.equal(await status('/asterisk/config/dynamic/res_pjsip/endpoint/carol', { method: 'DELETE' }), 204);
    assert.equal(await status('/endpoints/PJSIP/carol'), 404);
    assert.deepEqual(await getJson('/endpoints'), [offline('alice'), offline('bob')]);
  });

  test('REFER: accepted for a known endpoint (202; alice has no contact, so nothing is sent), 404 for an unknown one', async () => {
    assert.equal(await status('/endpoints/refer?to=pjsip:alice&from=x&refer_to=sip:y', { method: 'POST' }), 202);
    assert.equal(await status('/endpoints/PJSIP/alice/refer?from=x&refer_to=sip:y', { method: 'POST' }), 202);
    assert.equal(await status('/endpoints/PJSIP/nobody/refer?from=x&refer_to=sip:y', { method: 'POST' }), 404);
  });
});

describe('subscriptions', () => {
  test('endpoint sources: technology level and endpoint level exist; unknown ones are 422', async () => {
    const socket = await watcher('sources');
    try {
      await subscribe('sources', 'endpoint:PJSIP', 'endpoint:PJSIP/alice');
      const app = (await getJson('/applications/sources')) as { endpoint_ids: string[] };
      assert.deepEqual(app.endpoint_ids, ['PJSIP', 'PJSIP/alice']);
      for (const source of ['endpoint:SCCP', 'endpoint:PJSIP/nobody', 'endpoint:Local']) {
        assert.equal(await status(`/applications/sources/subscription?eventSource=${source}`, { method: 'POST' }), 422, source);
      }
    } finally {
      await socket.close();
    }
  });

  test('a user event can reference an endpoint and carries its snapshot', async () => {
    const socket = await watcher('user-ev');
    try {
      assert.equal(await status('/events/user/knock?application=user-ev&source=endpoint:PJSIP/alice', { method: 'POST' }), 204);
      const event = await socket.nextOfType('ChannelUserevent');
      assert.deepEqual(event.endpoint, offline('alice'));
      assert.equal(await status('/events/user/knock?application=user-ev&source=endpoint:PJSIP/nobody', { method: 'POST' }), 422);
    } finally {
      await socket.close();
    }
  });
});

describe('messages', () => {
  let all: EventSocket;
  let aliceOnly: EventSocket;
  let nobody: EventSocket;
  before(async () => {
    all = await watcher('msg-all', 'endpoint:PJSIP');
    aliceOnly = await watcher('msg-alice', 'endpoint:PJSIP/alice');
    nobody = await watcher('msg-none');
  });
  after(async () => {
    await Promise.all([all.close(), aliceOnly.close(), nobody.close()]);
  });

  test('a technology subscription receives the messages of every endpoint; an endpoint subscription only its own', async () => {
    assert.equal(await status('/endpoints/sendMessage?to=pjsip:alice&from=sip:carol@example.com&body=hi%20alice', { method: 'PUT' }), 202);
    assert.equal(await status('/endpoints/sendMessage?to=PJSIP:bob&from=sip:carol@example.com&body=hi%20bob', { method: 'PUT' }), 202);

    const first = await all.nextOfType('TextMessageReceived');
    assert.deepEqual(first.message, { from: 'sip:carol@example.com', to: 'pjsip:alice', body: 'hi alice', variables: {} });
    assert.deepEqual(first.endpoint, offline('alice'));
    assert.equal(first.application, 'msg-all');
    const second = await all.nextOfType('TextMessageReceived');
    assert.deepEqual(second.message, { from: 'sip:carol@example.com', to: 'PJSIP:bob', body: 'hi bob', variables: {} });
    assert.deepEqual(second.endpoint, offline('bob'));

    const mine = await aliceOnly.nextOfType('TextMessageReceived');
    assert.equal((mine.message as { body: string }).body, 'hi alice');
    assert.deepEqual(await aliceOnly.quiet(150), []);
    assert.deepEqual(await nobody.quiet(50), []);
  });

  test('variables arrive as a plain object; the endpoint form addresses <lowercased tech>:<resource>', async () => {
    const response = await server.ari('/endpoints/PJSIP/alice/sendMessage?from=ari&body=ping', {
      method: 'PUT',
      ...json({ variables: { 'X-Priority': 'high', Lang: 'en' } }),
    });
    assert.equal(response.status, 202);
    assert.equal(await response.text(), '');
    const event = await aliceOnly.nextOfType('TextMessageReceived');
    assert.deepEqual(event.message, { from: 'ari', to: 'pjsip:alice', body: 'ping', variables: { 'X-Priority': 'high', Lang: 'en' } });
    await all.nextOfType('TextMessageReceived');

    // Body values may also travel in the JSON body; body defaults to empty.
    assert.equal(await status('/endpoints/sendMessage', { method: 'PUT', ...json({ to: 'pjsip:bob', from: 'ari', variables: { a: '1' } }) }), 202);
    const toBob = await all.nextOfType('TextMessageReceived');
    assert.deepEqual(toBob.message, { from: 'ari', to: 'pjsip:bob', body: '', variables: { a: '1' } });
  });

  test('variable names that are Object.prototype members travel as ordinary names', async () => {
    const body = '{"to": "pjsip:bob", "from": "ari", "variables": {"__proto__": "p", "constructor": "c", "toString": "t"}}';
    const response = await server.ari('/endpoints/sendMessage', { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
    assert.equal(response.status, 202);
    const event = await all.nextOfType('TextMessageReceived');
    const variables = (event.message as { variables: Record<string, string> }).variables;
    assert.deepEqual(Object.entries(variables).sort(), [['__proto__', 'p'], ['constructor', 'c'], ['toString', 't']]);
  });

  test('errors: empty or malformed to, non-string variables → 400; unknown technology or endpoint → 404', async () => {
    const put = (path: string, body?: unknown): Promise<number> => status(path, { method: 'PUT', ...(body === undefined ? {} : json(body)) });
    assert.equal(await put('/endpoints/sendMessage?to=&from=x'), 400);
    assert.equal(await put('/endpoints/sendMessage?from=x'), 400);
    assert.equal(await put('/endpoints/sendMessage?to=pjsip:alice'), 400, 'from is required');
    for (const to of ['alice', ':alice', 'pjsip:', 'pjsip:/sip:alice@host']) {
      assert.equal(await put(`/endpoints/sendMessage?to=${encodeURIComponent(to)}&from=x`), 400, to);
    }
    assert.equal(await put('/endpoints/sendMessage?to=sccp:alice&from=x'), 404);
    assert.equal(await put('/endpoints/sendMessage?to=local:alice&from=x'), 404);
    assert.equal(await put('/endpoints/sendMessage?to=pjsip:nobody&from=x'), 404);
    assert.equal(await put('/endpoints/sendMessage?to=pjsip:alice&from=x', { variables: { n: 1 } }), 400);
    assert.equal(await put('/endpoints/sendMessage?to=pjsip:alice&from=x', { variables: ['a'] }), 400);
    assert.equal(await put('/endpoints/sendMessage?to=pjsip:alice&from=x', { variables: 'a=b' }), 400);
    assert.equal(await put('/endpoints/PJSIP/nobody/sendMessage?from=x'), 404);
    assert.equal(await put('/endpoints/SCCP/alice/sendMessage?from=x'), 404);
    assert.equal(await put('/endpoints/PJSIP/alice/sendMessage?from=x', { variables: { n: true } }), 400);
    assert.deepEqual(await all.quiet(100), []);
  });
});

describe("an endpoint's channels", () => {
  test("the events of an endpoint's channels reach its subscribers and those of its technology", async () => {
    const aliceWatcher = await watcher('chan-alice', 'endpoint:PJSIP/alice');
    const techWatcher = await watcher('chan-tech', 'endpoint:PJSIP');
    const bobWatcher = await watcher('chan-bob', 'endpoint:PJSIP/bob');
    try {
      const channel = aliceChannel();
      assert.deepEqual(await getJson('/endpoints/PJSIP/alice'), { ...offline('alice'), channel_ids: [channel.id] });
      channel.setState('Up');
      channel.hangup();
      assert.deepEqual(await getJson('/endpoints/PJSIP/alice'), offline('alice'));

      for (const socket of [aliceWatcher, techWatcher]) {
        const created = await socket.nextOfType('ChannelCreated');
        assert.equal((created.channel as { id: string }).id, channel.id);
        const changed = await socket.nextOfType('ChannelStateChange');
        assert.equal((changed.channel as { state: string }).state, 'Up');
        const destroyed = await socket.nextOfType('ChannelDestroyed');
        assert.equal((destroyed.channel as { id: string }).id, channel.id);
        assert.equal(destroyed.cause, 16);
      }
      assert.deepEqual(await bobWatcher.quiet(100), []);
    } finally {
      await Promise.all([aliceWatcher.close(), techWatcher.close(), bobWatcher.close()]);
    }
  });

  test('EndpointStateChange is raised when an endpoint changes state', async () => {
    const socket = await watcher('ep-state', 'endpoint:PJSIP');
    try {
      server.core.endpoints.provider('PJSIP')?.setState?.('alice', 'online');
      const online = await socket.nextOfType('EndpointStateChange');
      assert.deepEqual(online.endpoint, { technology: 'PJSIP', resource: 'alice', state: 'online', channel_ids: [] });
      assert.deepEqual(await getJson('/endpoints/PJSIP/alice'), { ...offline('alice'), state: 'online' });
      server.core.endpoints.provider('PJSIP')?.setState?.('alice', 'offline');
      const back = await socket.nextOfType('EndpointStateChange');
      assert.equal((back.endpoint as { state: string }).state, 'offline');
      // Channels coming and going are not state changes.
      aliceChannel().hangup();
      const types = (await socket.quiet(100)).map((event) => event.type);
      assert.ok(!types.includes('EndpointStateChange'), types.join(','));
    } finally {
      await socket.close();
    }
  });
});

describe('derived device states', () => {
  const deviceState = async (name: string): Promise<unknown> => getJson(`/deviceStates/${encodeURIComponent(name)}`);

  test("PJSIP/alice follows its endpoint's state and its channels; DeviceStateChanged reaches its subscriber", async () => {
    const socket = await watcher('dev-alice', 'deviceState:PJSIP/alice');
    const next = async (): Promise<unknown> => ((await socket.nextOfType('DeviceStateChanged')).device_state);
    try {
      assert.deepEqual(await deviceState('PJSIP/alice'), { name: 'PJSIP/alice', state: 'UNAVAILABLE' });

      const channel = aliceChannel();
      // Asterisk maps a channel in Ring to INUSE, Ringing to RINGING, Up to INUSE.
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'INUSE' });
      channel.setState('Ringing');
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'RINGING' });
      channel.setState('Up');
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'INUSE' });
      assert.deepEqual(await deviceState('PJSIP/alice'), { name: 'PJSIP/alice', state: 'INUSE' });

      // A second, ringing channel on the same device: ringing while in use.
      const second = aliceChannel();
      second.setState('Ringing');
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'RINGINUSE' });
      second.hangup();
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'INUSE' });

      channel.hangup();
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'UNAVAILABLE' });

      server.core.endpoints.provider('PJSIP')?.setState?.('alice', 'online');
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'NOT_INUSE' });
      assert.deepEqual(await deviceState('PJSIP/alice'), { name: 'PJSIP/alice', state: 'NOT_INUSE' });
      server.core.endpoints.provider('PJSIP')?.setState?.('alice', 'offline');
      assert.deepEqual(await next(), { name: 'PJSIP/alice', state: 'UNAVAILABLE' });
      assert.deepEqual(await socket.quiet(100), []);
    } finally {
      await socket.close();
    }
  });

  test('derived device states are read-only (409) and not listed', async () => {
    const response = await server.ari(`/deviceStates/${encodeURIComponent('PJSIP/alice')}?deviceState=BUSY`, { method: 'PUT' });
    assert.equal(response.status, 409);
    assert.equal(await status(`/deviceStates/${encodeURIComponent('PJSIP/alice')}`, { method: 'DELETE' }), 409);
    assert.deepEqual(await getJson('/deviceStates'), []);
  });

  test('a device without endpoint or channels is UNKNOWN; a Local device follows its channels', async () => {
    assert.deepEqual(await deviceState('PJSIP/nobody'), { name: 'PJSIP/nobody', state: 'UNKNOWN' });
    assert.deepEqual(await deviceState('Local/answer@default'), { name: 'Local/answer@default', state: 'UNKNOWN' });
    const socket = await watcher('dev-local', 'deviceState:Local/answer@default');
    const next = async (): Promise<unknown> => ((await socket.nextOfType('DeviceStateChanged')).device_state);
    try {
      // A requested pair, not yet called: `;1` is Down (NOT_INUSE), `;2` is Ring (INUSE).
      const one = server.core.channels.request('Local/answer@default');
      assert.deepEqual(await next(), { name: 'Local/answer@default', state: 'NOT_INUSE' });
      assert.deepEqual(await next(), { name: 'Local/answer@default', state: 'INUSE' });
      assert.deepEqual(await deviceState('Local/answer@default'), { name: 'Local/answer@default', state: 'INUSE' });
      one.hangup();
      assert.equal(server.allChannels().length, 0);
      assert.deepEqual(await deviceState('Local/answer@default'), { name: 'Local/answer@default', state: 'UNKNOWN' });
      const states = (await socket.quiet(100)).filter((event) => event.type === 'DeviceStateChanged').map((event) => event.device_state);
      assert.deepEqual(states.at(-1), { name: 'Local/answer@default', state: 'UNKNOWN' });
    } finally {
      await socket.close();
    }
  });
});
