// What survives a restart: controlled (`Stasis:`) device states and mailboxes live in the SQLite
// store of the data directory, so a second server started on the same directory sees them, and
// what was deleted before the restart stays deleted.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let dataDir: string;
before(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'patchbay-persist-'));
});
after(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs `body` against a server on the shared data directory, then stops it. */
async function withServer(body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({}, { dataDir });
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

async function call(server: TestServer, method: string, path: string): Promise<{ status: number; body: unknown }> {
  const response = await server.ari(path, { method });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);

describe('device states persist across a restart', () => {
  test('PUT survives, DELETE survives, read-only names are never stored', async () => {
    await withServer(async (server) => {
      assert.deepEqual((await call(server, 'GET', '/deviceStates')).body, []);
      assert.equal((await call(server, 'PUT', '/deviceStates/Stasis:lamp?deviceState=BUSY')).status, 204);
      assert.equal((await call(server, 'PUT', '/deviceStates/Stasis:door?deviceState=INUSE')).status, 204);
      assert.equal((await call(server, 'PUT', '/deviceStates/Stasis:gone?deviceState=RINGING')).status, 204);
      // The last write wins, also in the store.
      assert.equal((await call(server, 'PUT', '/deviceStates/Stasis:door?deviceState=ONHOLD')).status, 204);
      // Not controlled: 409, and nothing is stored.
      const readOnly = await call(server, 'PUT', '/deviceStates/PJSIP%2Falice?deviceState=BUSY');
      assert.equal(readOnly.status, 409);
      assert.match((readOnly.body as { message: string }).message, /Stasis:/);
    });

    await withServer(async (server) => {
      const listed = (await call(server, 'GET', '/deviceStates')).body as { name: string; state: string }[];
      assert.deepEqual(listed.sort(byName), [
        { name: 'Stasis:door', state: 'ONHOLD' },
        { name: 'Stasis:gone', state: 'RINGING' },
        { name: 'Stasis:lamp', state: 'BUSY' },
      ]);
      assert.deepEqual((await call(server, 'GET', '/deviceStates/Stasis:lamp')).body, { name: 'Stasis:lamp', state: 'BUSY' });
      assert.equal((await call(server, 'DELETE', '/deviceStates/Stasis:gone')).status, 204);
      // Deleted: reads as UNKNOWN and is no longer listed; deleting again is 404.
      assert.deepEqual((await call(server, 'GET', '/deviceStates/Stasis:gone')).body, { name: 'Stasis:gone', state: 'UNKNOWN' });
      const again = await call(server, 'DELETE', '/deviceStates/Stasis:gone');
      assert.equal(again.status, 404);
      assert.equal(typeof (again.body as { message: unknown }).message, 'string');
      assert.equal((await call(server, 'DELETE', '/deviceStates/PJSIP%2Falice')).status, 409);
    });

    await withServer(async (server) => {
      const listed = (await call(server, 'GET', '/deviceStates')).body as { name: string; state: string }[];
      assert.deepEqual(listed.sort(byName), [
        { name: 'Stasis:door', state: 'ONHOLD' },
        { name: 'Stasis:lamp', state: 'BUSY' },
      ]);
      assert.deepEqual((await call(server, 'GET', '/deviceStates/Stasis:gone')).body, { name: 'Stasis:gone', state: 'UNKNOWN' });
      // Clean up for the mailbox test, which shares the directory.
      assert.equal((await call(server, 'DELETE', '/deviceStates/Stasis:door')).status, 204);
      assert.equal((await call(server, 'DELETE', '/deviceStates/Stasis:lamp')).status, 204);
    });

    await withServer(async (server) => {
      assert.deepEqual((await call(server, 'GET', '/deviceStates')).body, []);
    });
  });
});

describe('mailboxes persist across a restart', () => {
  const box = (name: string): string => `/mailboxes/${encodeURIComponent(name)}`;

  test('list, get, update (create), delete and 404s, before and after a restart', async () => {
    await withServer(async (server) => {
      assert.deepEqual((await call(server, 'GET', '/mailboxes')).body, []);
      const missing = await call(server, 'GET', box('1000@default'));
      assert.equal(missing.status, 404);
      assert.equal(typeof (missing.body as { message: unknown }).message, 'string');
      assert.equal((await call(server, 'DELETE', box('1000@default'))).status, 404);

      // update creates ...
      assert.equal((await call(server, 'PUT', `${box('1000@default')}?oldMessages=1&newMessages=2`)).status, 204);
      assert.equal((await call(server, 'PUT', `${box('2000@default')}?oldMessages=0&newMessages=0`)).status, 204);
      assert.equal((await call(server, 'PUT', `${box('3000@other')}?oldMessages=7&newMessages=0`)).status, 204);
      assert.deepEqual((await call(server, 'GET', box('1000@default'))).body, { name: '1000@default', old_messages: 1, new_messages: 2 });
      // ... and then changes.
      assert.equal((await call(server, 'PUT', `${box('1000@default')}?oldMessages=3&newMessages=5`)).status, 204);
      assert.deepEqual((await call(server, 'GET', box('1000@default'))).body, { name: '1000@default', old_messages: 3, new_messages: 5 });
      // Both counts are required and must be integers.
      assert.equal((await call(server, 'PUT', `${box('4000@default')}?oldMessages=1`)).status, 400);
      assert.equal((await call(server, 'PUT', `${box('4000@default')}?oldMessages=x&newMessages=1`)).status, 400);
      assert.equal((await call(server, 'GET', box('4000@default'))).status, 404);
    });

    await withServer(async (server) => {
      assert.deepEqual((await call(server, 'GET', '/mailboxes')).body, [
        { name: '1000@default', old_messages: 3, new_messages: 5 },
        { name: '2000@default', old_messages: 0, new_messages: 0 },
        { name: '3000@other', old_messages: 7, new_messages: 0 },
      ]);
      assert.equal((await call(server, 'DELETE', box('2000@default'))).status, 204);
      assert.equal((await call(server, 'GET', box('2000@default'))).status, 404);
      assert.equal((await call(server, 'DELETE', box('2000@default'))).status, 404);
      assert.equal((await call(server, 'PUT', `${box('3000@other')}?oldMessages=8&newMessages=1`)).status, 204);
    });

    await withServer(async (server) => {
      assert.deepEqual((await call(server, 'GET', '/mailboxes')).body, [
        { name: '1000@default', old_messages: 3, new_messages: 5 },
        { name: '3000@other', old_messages: 8, new_messages: 1 },
      ]);
      assert.equal((await call(server, 'GET', box('2000@default'))).status, 404);
      assert.deepEqual((await call(server, 'GET', box('3000@other'))).body, { name: '3000@other', old_messages: 8, new_messages: 1 });
    });
  });
});
