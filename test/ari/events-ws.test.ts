// The event WebSocket: upgrade rules, event envelope, ApplicationReplaced, REST over WebSocket,
// slow consumers, applications and subscriptions.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { ARI_DATE_PATTERN } from '../../src/util/ari-date.ts';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

/** Performs a raw upgrade request and returns the status and body of a refusal (or 101). */
function rawUpgrade(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}${path}`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 0, body: '' });
    });
    request.on('response', (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('upgrade rules', () => {
  test('no credentials → 401 before the upgrade', async () => {
    const result = await rawUpgrade('/ari/events?app=a', {});
    assert.equal(result.status, 401);
  });

  test('missing app → 400', async () => {
    const result = await rawUpgrade('/ari/events', { authorization: AUTH });
    assert.equal(result.status, 400);
    assert.match(result.body, /missing param: \[app\]/);
  });

  test('GET without Upgrade → 426', async () => {
    const response = await server.ari('/events?app=a');
    assert.equal(response.status, 426);
  });

  test('no Sec-WebSocket-Protocol is accepted; a list with ari is echoed; a list without ari is refused', async () => {
    assert.equal((await rawUpgrade('/ari/events?app=p1', { authorization: AUTH })).status, 101);
    const withAri = await server.events('app=p2', { protocols: ['chat', 'ari'] });
    assert.equal(withAri.socket.protocol, 'ari');
    await withAri.close();
    const refused = await rawUpgrade('/ari/events?app=p3', { authorization: AUTH, 'sec-websocket-protocol': 'chat' });
    assert.equal(refused.status, 400);
  });

  test('api_key authorises the upgrade', async () => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/ari/events?app=keyed&api_key=asterisk:asterisk`);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.close();
  });
});

describe('applications over the WebSocket', () => {
  test('a connection registers its apps; ApplicationReplaced goes to the old connection only', async () => {
    const first = await server.events('app=alpha,beta');
    const apps = await (await server.ari('/applications')).json();
    assert.deepEqual(apps.map((app: { name: string }) => app.name).sort(), ['alpha', 'beta']);
    const second = await server.events('app=alpha');
    const replaced = await first.next();
    assert.equal(replaced.type, 'ApplicationReplaced');
    assert.equal(replaced.application, 'alpha');
    assert.equal(replaced.asterisk_id, server.config.serverId);
    assert.match(String(replaced.timestamp), ARI_DATE_PATTERN);
    assert.deepEqual(await second.quiet(100), []);
    // The old socket stays open and keeps beta.
    assert.equal(first.socket.readyState, WebSocket.OPEN);
    await first.close();
    await second.close();
  });

  test('apps without subscriptions disappear when their connection closes', async () => {
    const socket = await server.events('app=ephemeral');
    assert.equal((await server.ari('/applications/ephemeral')).status, 200);
    await socket.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const response = await server.ari('/applications/ephemeral');
    assert.equal(response.status, 404);
  });

  test('application JSON has every list, always arrays', async () => {
    const socket = await server.events('app=shape');
    const app = await (await server.ari('/applications/shape')).json();
    assert.deepEqual(app, {
      name: 'shape',
      channel_ids: [],
      bridge_ids: [],
      endpoint_ids: [],
      device_names: [],
      events_allowed: [],
      events_disallowed: [],
    });
    await socket.close();
  });
});

describe('REST over the WebSocket', () => {
  test('RESTRequest → RESTResponse with ids echoed and the body as a string', async () => {
    const socket = await server.events('app=resty');
    socket.send({ type: 'RESTRequest', transaction_id: 't1', request_id: 'r1', method: 'GET', uri: 'asterisk/ping' });
    const response = await socket.nextOfType('RESTResponse');
    assert.equal(response.transaction_id, 't1');
    assert.equal(response.request_id, 'r1');
    assert.equal(response.status_code, 200);
    assert.equal(response.reason_phrase, 'OK');
    assert.equal(response.uri, 'asterisk/ping');
    assert.equal(response.content_type, 'application/json');
    assert.equal(JSON.parse(String(response.message_body)).ping, 'pong');
    assert.equal(response.asterisk_id, server.config.serverId);

    socket.send({
      type: 'RESTRequest',
      transaction_id: 't2',
      request_id: 'r2',
      method: 'POST',
      uri: 'asterisk/variable',
      content_type: 'application/json',
      message_body: JSON.stringify({ variable: 'OVERWS', value: 'yes' }),
    });
    const set = await socket.nextOfType('RESTResponse');
    assert.equal(set.status_code, 204);
    assert.equal(set.message_body, undefined);

    socket.send({ type: 'RESTRequest', transaction_id: 't3', request_id: 'r3', method: 'GET', uri: 'asterisk/variable', query_strings: [{ name: 'variable', value: 'OVERWS' }] });
    const get = await socket.nextOfType('RESTResponse');
    assert.deepEqual(JSON.parse(String(get.message_body)), { value: 'yes' });

    socket.send({ type: 'RESTRequest', transaction_id: 't4', request_id: 'r4', method: 'GET', uri: 'nope' });
    const missing = await socket.nextOfType('RESTResponse');
    assert.equal(missing.status_code, 404);
    await socket.close();
  });
});

describe('subscriptions and event filters', () => {
  test('reference-counted device state subscriptions', async () => {
    const socket = await server.events('app=watcher');
    const subscribe = (): Promise<Response> => server.ari('/applications/watcher/subscription?eventSource=deviceState:Stasis:door', { method: 'POST' });
    const unsubscribe = (): Promise<Response> => server.ari('/applications/watcher/subscription?eventSource=deviceState:Stasis:door', { method: 'DELETE' });
    const setState = (state: string): Promise<Response> => server.ari(`/deviceStates/Stasis:door?deviceState=${state}`, { method: 'PUT' });

    assert.equal((await subscribe()).status, 200);
    const twice = await (await subscribe()).json();
    assert.deepEqual(twice.device_names, ['Stasis:door']);
    assert.equal((await setState('BUSY')).status, 204);
    const changed = await socket.nextOfType('DeviceStateChanged');
    assert.deepEqual(changed.device_state, { name: 'Stasis:door', state: 'BUSY' });

    assert.equal((await unsubscribe()).status, 200);
    await setState('INUSE');
    const still = await socket.nextOfType('DeviceStateChanged');
    assert.deepEqual(still.device_state, { name: 'Stasis:door', state: 'INUSE' });

    const last = await (await unsubscribe()).json();
    assert.deepEqual(last.device_names, []);
    await setState('NOT_INUSE');
    assert.deepEqual(await socket.quiet(150), []);

    const notSubscribed = await unsubscribe();
    assert.equal(notSubscribed.status, 422);
    await socket.close();
  });

  test('subscription errors: unknown scheme 400, unknown object 422, unknown app 404', async () => {
    const socket = await server.events('app=errs');
    const badScheme = await server.ari('/applications/errs/subscription?eventSource=planet:mars', { method: 'POST' });
    assert.equal(badScheme.status, 400);
    const unknownChannel = await server.ari('/applications/errs/subscription?eventSource=channel:nope', { method: 'POST' });
    assert.equal(unknownChannel.status, 422);
    const unknownApp = await server.ari('/applications/nobody/subscription?eventSource=channel:', { method: 'POST' });
    assert.equal(unknownApp.status, 404);
    await socket.close();
  });

  test('eventFilter: disallowed wins, allowed restricts, {} clears, bad bodies are 400', async () => {
    const socket = await server.events('app=filtered');
    await server.ari('/applications/filtered/subscription?eventSource=deviceState:Stasis:f1', { method: 'POST' });
    const put = (body: unknown): Promise<Response> =>
      server.ari('/applications/filtered/eventFilter', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const both = await put({ allowed: [{ type: 'DeviceStateChanged' }], disallowed: [{ type: 'DeviceStateChanged' }] });
    assert.equal(both.status, 200);
    const app = await both.json();
    assert.deepEqual(app.events_allowed, [{ type: 'DeviceStateChanged' }]);
    assert.deepEqual(app.events_disallowed, [{ type: 'DeviceStateChanged' }]);
    await server.ari('/deviceStates/Stasis:f1?deviceState=BUSY', { method: 'PUT' });
    assert.deepEqual(await socket.quiet(150), []);

    await put({ allowed: [{ type: 'StasisStart' }], disallowed: [] });
    await server.ari('/deviceStates/Stasis:f1?deviceState=INUSE', { method: 'PUT' });
    assert.deepEqual(await socket.quiet(150), []);

    const cleared = await (await put({})).json();
    assert.deepEqual([cleared.events_allowed, cleared.events_disallowed], [[], []]);
    await server.ari('/deviceStates/Stasis:f1?deviceState=ONHOLD', { method: 'PUT' });
    assert.equal((await socket.nextOfType('DeviceStateChanged')).type, 'DeviceStateChanged');

    assert.equal((await put({ allowed: 'StasisStart' })).status, 400);
    assert.equal((await put({ allowed: [{ name: 'x' }] })).status, 400);
    await socket.close();
  });

  test('subscribeAll delivers every event', async () => {
    const socket = await server.events('app=everything&subscribeAll=true');
    await server.ari('/deviceStates/Stasis:anything?deviceState=RINGING', { method: 'PUT' });
    const event = await socket.nextOfType('DeviceStateChanged');
    assert.equal(event.application, 'everything');
    await socket.close();
  });

  test('user events reach the named application', async () => {
    const socket = await server.events('app=listener');
    const response = await server.ari('/events/user/doorbell?application=listener', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ variables: { floor: '3' } }),
    });
    assert.equal(response.status, 204);
    const event = await socket.nextOfType('ChannelUserevent');
    assert.equal(event.eventname, 'doorbell');
    assert.deepEqual(event.userevent, { floor: '3', eventname: 'doorbell' });
    const missingApp = await server.ari('/events/user/doorbell?application=ghost', { method: 'POST' });
    assert.equal(missingApp.status, 404);
    const badSource = await server.ari('/events/user/doorbell?application=listener&source=deviceState:x', { method: 'POST' });
    assert.equal(badSource.status, 400);
    const goneSource = await server.ari('/events/user/doorbell?application=listener&source=channel:none', { method: 'POST' });
    assert.equal(goneSource.status, 422);
    await socket.close();
  });
});

describe('slow consumers', () => {
  test('a consumer that does not read is disconnected once its queue is full, with a log line', async () => {
    const small = await startTestServer({ ari: { websocket: { max_queued_messages: 50 } } });
    try {
      const socket = await small.events('app=slow&subscribeAll=true');
      // Stop reading: pause the underlying TCP socket so sends back up.
      (socket.socket as unknown as { _socket: { pause(): void } })._socket.pause();
      const closed = new Promise<void>((resolve) => socket.socket.once('close', () => resolve()));
      const big = 'x'.repeat(200_000);
      for (let i = 0; i < 200; i++) {
        const response = await small.ari('/events/user/flood?application=slow', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ variables: { big } }),
        });
        if (response.status !== 204) break;
        if (small.logLines.some((line) => line.includes('too slow'))) break;
      }
      assert.ok(small.logLines.some((line) => line.includes('too slow')), 'expected a log line about the slow consumer');
      (socket.socket as unknown as { _socket: { resume(): void } })._socket.resume();
      await closed;
    } finally {
      await small.stop();
    }
  });
});
