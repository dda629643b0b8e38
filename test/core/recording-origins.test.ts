// Where a stored recording came from (src/core/recordings/recording-origins.ts): a channel recorded
// through ARI is listed by GET /admin/recordings with the channel's name and its call's linkedid,
// and still after a restart on the same data directory — the console's "Call" column for
// recordings it did not see start.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../interop/sipp-peer.ts';

const work = mkdtempSync(join(tmpdir(), 'patchbay-recording-origins-'));
const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Listed {
  name: string;
  call: { target_uri: string; target_name: string; linkedid: string } | null;
}

async function listed(server: TestServer): Promise<Listed[]> {
  const response = await fetch(`${server.url}/admin/recordings`, { headers: { authorization: AUTH } });
  assert.equal(response.status, 200);
  return (await response.json()) as Listed[];
}

test('a recording is listed with the channel it recorded and its call, also after a restart', async () => {
  const dataDir = join(work, 'data');
  const first = await startTestServer({}, { dataDir });
  servers.push(first);
  const events = await first.events('app=origin-app');
  const created = await first.ari('/channels?endpoint=Local/answer@default&app=origin-app', { method: 'POST' });
  assert.equal(created.status, 200);
  const channel = (await created.json()) as { id: string; name: string };
  await waitFor('the channel in the application', () => (first.core.channels.get(channel.id) ? true : undefined));
  // In the application (its StasisStart), not 200 ms later: a loaded machine may take longer.
  await events.nextOfType('StasisStart', 15_000);
  const record = await first.ari(`/channels/${channel.id}/record?name=origin-test&format=wav`, { method: 'POST' });
  assert.equal(record.status, 201, await record.text());
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await first.ari('/recordings/live/origin-test/stop', { method: 'POST' })).status, 204);
  const seen = await waitFor('the stored recording', async () => (await listed(first)).find((r) => r.name === 'origin-test'));
  assert.ok(seen.call, JSON.stringify(seen));
  assert.deepEqual([seen.call.target_uri, seen.call.target_name, seen.call.linkedid], [`channel:${channel.id}`, channel.name, channel.id]);
  await first.ari(`/channels/${channel.id}`, { method: 'DELETE' });
  await events.close();
  await first.stop();

  const second = await startTestServer({}, { dataDir });
  servers.push(second);
  const again = (await listed(second)).find((r) => r.name === 'origin-test');
  assert.equal(again?.call?.target_name, channel.name);
});
