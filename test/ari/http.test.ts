// The HTTP front door: auth, routing rules, errors, parameters, CORS, against a real server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ARI_DATE_PATTERN } from '../../src/util/ari-date.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({
    ari: {
      users: [
        { name: 'asterisk', password: 'asterisk' },
        { name: 'viewer', password: 'look', read_only: true },
      ],
      allowed_origins: ['http://app.example'],
    },
    http: { body_limit_bytes: 4096 },
  });
});
after(() => server.stop());

const basic = (user: string, pass: string): string => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

describe('ping on both resource names', () => {
  for (const path of ['/system/ping', '/asterisk/ping']) {
    test(`GET ${path}`, async () => {
      const response = await server.ari(path);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/json');
      const body = await response.json();
      assert.equal(body.ping, 'pong');
      assert.equal(body.asterisk_id, server.config.serverId);
      assert.match(body.timestamp, ARI_DATE_PATTERN);
    });
  }
});

describe('authentication', () => {
  test('no credentials → 401 with WWW-Authenticate', async () => {
    const response = await server.ari('/asterisk/ping', { auth: null });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="Asterisk REST Interface"');
    assert.deepEqual(await response.json(), { message: 'Authentication required' });
  });

  test('wrong password → 401', async () => {
    const response = await server.ari('/asterisk/ping', { auth: basic('asterisk', 'nope') });
    assert.equal(response.status, 401);
  });

  test('api_key is accepted when there is no Basic header', async () => {
    const response = await server.ari('/asterisk/ping?api_key=asterisk:asterisk', { auth: null });
    assert.equal(response.status, 200);
  });

  test('a usable Basic header with wrong credentials wins over a valid api_key', async () => {
    const response = await server.ari('/asterisk/ping?api_key=asterisk:asterisk', { auth: basic('asterisk', 'bad') });
    assert.equal(response.status, 401);
  });

  test('auth is checked before routing: unknown path without credentials → 401', async () => {
    const response = await server.ari('/no/such/thing', { auth: null });
    assert.equal(response.status, 401);
  });

  test('read-only user may GET but not write', async () => {
    assert.equal((await server.ari('/asterisk/ping', { auth: basic('viewer', 'look') })).status, 200);
    const response = await server.ari('/asterisk/variable?variable=X&value=1', { method: 'POST', auth: basic('viewer', 'look') });
    assert.equal(response.status, 403);
    assert.deepEqual(await response.json(), { message: 'Write access denied' });
  });
});

describe('routing and errors', () => {
  test('unknown path → 404 Resource not found', async () => {
    const response = await server.ari('/nothing/here');
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), { message: 'Resource not found' });
  });

  test('path outside /ari → 404 JSON', async () => {
    const response = await fetch(`${server.url}/elsewhere`);
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), { message: 'Resource not found' });
  });

  test('trailing slash → 404 with a hint', async () => {
    const response = await server.ari('/asterisk/ping/');
    assert.equal(response.status, 404);
    const body = await response.json();
    assert.match(body.message, /trailing slash/);
  });

  test('known path, wrong method → 405 with Allow', async () => {
    const response = await server.ari('/asterisk/ping', { method: 'DELETE' });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'OPTIONS,GET');
    assert.deepEqual(await response.json(), { message: 'Invalid method' });
  });

  test('OPTIONS → 204 with Allow', async () => {
    const response = await server.ari('/asterisk/modules/res_ari.so', { method: 'OPTIONS' });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('allow'), 'OPTIONS,GET,POST,DELETE,PUT');
  });

  test('unparsable JSON body → 400', async () => {
    const response = await server.ari('/asterisk/variable', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"variable": ',
    });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), { message: 'Error parsing request body' });
  });

  test('body over the limit → 413', async () => {
    const response = await server.ari('/asterisk/variable', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ variable: 'X', value: 'y'.repeat(10_000) }),
    });
    assert.equal(response.status, 413);
    assert.match((await response.json()).message, /larger than 4096/);
  });

  test('literal segments win over parameters: /channels/create is the create operation', async () => {
    const response = await server.ari('/channels/create');
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'OPTIONS,POST');
  });

  test('/system/logging/{name}/rotate is the rotate operation, not a config object', async () => {
    const response = await server.ari('/system/logging/nosuch.log/rotate', { method: 'PUT' });
    assert.equal(response.status, 404);
    assert.match((await response.json()).message, /log channel/i);
    const wrongMethod = await server.ari('/system/logging/nosuch.log/rotate');
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'OPTIONS,PUT');
  });
});

describe('parameters', () => {
  test('JSON body keys are parameters and override the query', async () => {
    const set = await server.ari('/asterisk/variable?variable=FROMQUERY&value=q', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ variable: 'FROMBODY', value: 'b' }),
    });
    assert.equal(set.status, 204);
    assert.deepEqual(await (await server.ari('/asterisk/variable?variable=FROMBODY')).json(), { value: 'b' });
    assert.deepEqual(await (await server.ari('/asterisk/variable?variable=FROMQUERY')).json(), { value: '' });
  });

  test('form bodies are parameters; the query string wins over them', async () => {
    const response = await server.ari('/asterisk/variable?value=fromquery', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'variable=FORMVAR&value=fromform',
    });
    assert.equal(response.status, 204);
    assert.deepEqual(await (await server.ari('/asterisk/variable?variable=FORMVAR')).json(), { value: 'fromquery' });
  });

  test('missing required parameter → 400 naming it', async () => {
    const response = await server.ari('/asterisk/variable');
    assert.equal(response.status, 400);
    assert.match((await response.json()).message, /variable/);
  });

  test('value outside the allowed list → 400 naming parameter and allowed values', async () => {
    const response = await server.ari('/asterisk/info?only=build,bogus');
    assert.equal(response.status, 400);
    const { message } = await response.json();
    assert.match(message, /only/);
    assert.match(message, /bogus/);
    assert.match(message, /build, system, config, status/);
  });

  test('allowed values match case-insensitively where declared so', async () => {
    const response = await server.ari('/asterisk/info?only=BUILD');
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(await response.json()), ['build']);
  });

  test('device state values outside the list → 400 (Asterisk answers 500)', async () => {
    const response = await server.ari('/deviceStates/Stasis:lamp?deviceState=SHINY', { method: 'PUT' });
    assert.equal(response.status, 400);
    assert.match((await response.json()).message, /deviceState.*NOT_INUSE/);
  });

  test('unknown bridge type token → 400', async () => {
    const response = await server.ari('/bridges?type=mixing,sparkly', { method: 'POST' });
    assert.equal(response.status, 400);
    assert.match((await response.json()).message, /type.*sparkly/);
  });

  test('integer parameters reject garbage and enforce ranges', async () => {
    const garbage = await server.ari('/channels/x/record?name=a&format=wav&maxDurationSeconds=ten', { method: 'POST' });
    assert.equal(garbage.status, 400);
    assert.match((await garbage.json()).message, /maxDurationSeconds/);
    const negative = await server.ari('/channels/x/record?name=a&format=wav&maxSilenceSeconds=-1', { method: 'POST' });
    assert.equal(negative.status, 400);
    assert.match((await negative.json()).message, /maxSilenceSeconds.*>= 0/);
  });

  test('boolean parameters reject garbage', async () => {
    const response = await server.ari('/channels/x/record?name=a&format=wav&beep=perhaps', { method: 'POST' });
    assert.equal(response.status, 400);
    assert.match((await response.json()).message, /beep/);
  });

  test('128 or more list values → 400', async () => {
    const many = Array.from({ length: 128 }, (_, i) => `sound:s${i}`).join(',');
    const response = await server.ari(`/channels/x/play?media=${many}`, { method: 'POST' });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), { message: 'Too many values for media' });
  });
});

describe('CORS', () => {
  test('allowed origin gets CORS headers; preflight echoes headers', async () => {
    const response = await server.ari('/asterisk/ping', {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-thing' },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), 'http://app.example');
    assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /GET/);
    assert.equal(response.headers.get('access-control-allow-headers'), 'x-thing');
  });

  test('other origins get no CORS headers', async () => {
    const response = await server.ari('/asterisk/ping', { headers: { origin: 'http://evil.example' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
  });
});
