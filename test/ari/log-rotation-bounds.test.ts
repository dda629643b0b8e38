// Rotating a log channel whose name leaves no room for `.<N>` (issue 21, item 11): the file system
// answers ENAMETOOLONG, and ARI answers 409 with the reason — not a 500 — and the channel keeps logging.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

test('a 255-byte log channel name: rotate is 409, the channel still writes', async () => {
  const name = `${'n'.repeat(251)}.log`;
  const created = await server.ari(`/asterisk/logging/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ configuration: 'notice' }) });
  assert.equal(created.status, 204);
  server.core.logChannels.write('notice', 'before rotation');
  const rotated = await server.ari(`/asterisk/logging/${name}/rotate`, { method: 'PUT' });
  assert.equal(rotated.status, 409);
  assert.match(((await rotated.json()) as { message: string }).message, /rotated file name would be too long/);
  server.core.logChannels.write('notice', 'after rotation');
  await server.core.logChannels.flush();
  const text = readFileSync(join(server.config.dirs.logs, name), 'utf8');
  assert.match(text, /before rotation[\s\S]*after rotation/);
});
