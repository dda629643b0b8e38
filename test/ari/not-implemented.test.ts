// Every declared operation either has a handler or is listed, honestly, as not implemented; the
// listed ones answer 501 naming the operation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { NOT_IMPLEMENTED } from '../../src/ari/not-implemented.ts';
import { SERVED_RESOURCES } from '../../src/ari/resources.ts';
import { DECLARED_RESOURCES } from '../../src/spec/index.ts';
import { buildHandlerMap } from '../../src/server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const handlers = buildHandlerMap();

test('the not-implemented list is exactly the operations without a handler', () => {
  for (const [name, resource] of Object.entries(DECLARED_RESOURCES)) {
    const table = handlers.get(name)?.handlers ?? {};
    const missing = resource.operations
      .map((operation) => operation.nickname)
      .filter((nickname) => !(nickname in table) && nickname !== 'eventWebsocket');
    assert.deepEqual(missing, [...(NOT_IMPLEMENTED[name as keyof typeof NOT_IMPLEMENTED] ?? [])], name);
  }
});

test('system shares the asterisk handlers', () => {
  assert.equal(handlers.get('system'), handlers.get('asterisk'));
  assert.ok(SERVED_RESOURCES.some((resource) => resource.name === 'system'));
});

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

test('the last operations that answered 501 (REFER, transfer_progress) now answer for themselves', async () => {
  assert.deepEqual(NOT_IMPLEMENTED, {});
  const progress = await server.ari('/channels/a/transfer_progress?states=channel_progress', { method: 'POST' });
  assert.equal(progress.status, 404);
  const refer = await server.ari('/endpoints/PJSIP/nobody/refer?from=x&refer_to=sip:y', { method: 'POST' });
  assert.equal(refer.status, 404);
});
