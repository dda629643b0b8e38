// Issue 21 item 17: bridges, mailboxes and application-controlled (`Stasis:`) device states are
// bounded in number (max_bridges, max_mailboxes, max_device_states): beyond, 503; changing or
// deleting what exists always works.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer({ max_bridges: 3, max_mailboxes: 2, max_device_states: 2 });
});
after(() => server.stop());

const call = async (method: string, path: string): Promise<number> => {
  const response = await server.ari(path, { method });
  await response.arrayBuffer();
  return response.status;
};

test('bridges: the fourth is refused with 503; deleting one makes room', async () => {
  for (let i = 0; i < 3; i++) assert.equal(await call('POST', `/bridges/limit-${i}`), 200);
  assert.equal(await call('POST', '/bridges/limit-3'), 503);
  assert.equal(await call('POST', '/bridges'), 503);
  assert.equal(await call('DELETE', '/bridges/limit-0'), 204);
  assert.equal(await call('POST', '/bridges/limit-3'), 200);
});

test('mailboxes: a third is refused with 503; updating an existing one works', async () => {
  assert.equal(await call('PUT', '/mailboxes/m1?oldMessages=0&newMessages=1'), 204);
  assert.equal(await call('PUT', '/mailboxes/m2?oldMessages=0&newMessages=1'), 204);
  assert.equal(await call('PUT', '/mailboxes/m3?oldMessages=0&newMessages=1'), 503);
  assert.equal(await call('PUT', '/mailboxes/m1?oldMessages=1&newMessages=0'), 204);
  assert.equal(await call('DELETE', '/mailboxes/m2'), 204);
  assert.equal(await call('PUT', '/mailboxes/m3?oldMessages=0&newMessages=1'), 204);
});

test('Stasis: device states: a third is refused with 503; changing an existing one works', async () => {
  assert.equal(await call('PUT', '/deviceStates/Stasis:d1?deviceState=INUSE'), 204);
  assert.equal(await call('PUT', '/deviceStates/Stasis:d2?deviceState=INUSE'), 204);
  assert.equal(await call('PUT', '/deviceStates/Stasis:d3?deviceState=INUSE'), 503);
  assert.equal(await call('PUT', '/deviceStates/Stasis:d1?deviceState=BUSY'), 204);
});

test('the defaults are 10,000 each', () => {
  assert.equal(server.core.bridges.maxBridges, 3);
  return startTestServer().then(async (other) => {
    try {
      assert.deepEqual([other.config.maxBridges, other.config.maxMailboxes, other.config.maxDeviceStates], [10_000, 10_000, 10_000]);
    } finally {
      await other.stop();
    }
  });
});
