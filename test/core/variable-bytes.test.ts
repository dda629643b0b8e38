// Issue 21 item 16: variables are bounded in bytes, not only in count (4,096 × 64 KiB per
// channel and 16,384 × 64 KiB of globals were allowed).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const BIG = 'x'.repeat(65_536);
let server: TestServer;
before(async () => {
  server = await startTestServer({ variables: { max_global_bytes: 1024 * 1024 } });
});
after(() => server.stop());

const post = (path: string, body?: unknown) =>
  server.ari(path, { method: 'POST', headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });

test('one channel holds at most variables.max_channel_bytes (1 MiB) of variables; shrinking and unsetting still work', async () => {
  const events = await server.events('app=var-bytes');
  try {
    assert.equal((await post('/channels/create?endpoint=Local/s@default&app=var-bytes&channelId=var-bytes')).status, 200);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await post(`/channels/var-bytes/variable?variable=V${i}`, { value: BIG })).status);
    const accepted = statuses.filter((status) => status === 204).length;
    assert.ok(accepted >= 6 && accepted <= 7, `accepted ${accepted} of 64 KiB values: ${statuses.join(',')}`);
    const refused = await post('/channels/var-bytes/variable?variable=V99', { value: BIG });
    assert.equal(refused.status, 400);
    assert.match(((await refused.json()) as { message: string }).message, /variables\.max_channel_bytes/);
    const channel = server.core.channels.get('var-bytes')!;
    assert.ok(channel.variableBytes.held <= 1024 * 1024);
    assert.equal((await post('/channels/var-bytes/variable?variable=V0', { value: 'short' })).status, 204, 'shrinking works');
    assert.equal((await post('/channels/var-bytes/variable?variable=V0')).status, 204, 'unsetting works');
    // A variables body that would pass the bound is refused whole.
    const body = await post('/channels/var-bytes/variables', { variables: { A: BIG, B: BIG, C: BIG } });
    assert.equal(body.status, 400);
    assert.equal(channel.getVariable('A'), undefined);
  } finally {
    await server.ari('/channels/var-bytes', { method: 'DELETE' });
    events.close();
  }
});

test('global variables hold at most variables.max_global_bytes', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await post(`/asterisk/variable?variable=G${i}`, { value: BIG })).status);
  const accepted = statuses.filter((status) => status === 204).length;
  assert.ok(accepted >= 6 && accepted <= 7, `accepted ${accepted}: ${statuses.join(',')}`);
  assert.ok(server.core.globalVars.byteCount <= 1024 * 1024);
  assert.equal((await post('/asterisk/variable?variable=G0&value=')).status, 204, 'emptying one works');
  assert.equal(server.config.variables.maxChannelBytes, 1024 * 1024, 'the channel default');
});
