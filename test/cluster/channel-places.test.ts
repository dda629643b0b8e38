// Which member each channel is on (GET /admin/cluster/channels, the web console's Member column):
// asked of either member, the answer places every channel of both; a single server answers 404
// (the console hides the column); in headless Chromium (where installed) the console connected to
// B shows the column with each channel's member. A real nats-server -js; both members in this process.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { decodeIds, MAX_CHANNEL_IDS } from '../../src/cluster/channel-places.ts';
import { clusterStatus, type Json, memberSettings, NO_NATS, until } from './cluster-fixture.ts';

const ID = { a: '02:00:00:00:3a:01', b: '02:00:00:00:3b:01' };
const CHROMIUM = process.env.PATCHBAY_CHROMIUM ?? '/usr/bin/chromium';
const skip = NO_NATS;

describe('which member each channel is on', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  const places = async (server: TestServer): Promise<Response> => fetch(`${server.url}/admin/cluster/channels`, { headers: { authorization: AUTH } });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'patchbay-cluster-places-'));
    writeFileSync(join(dir, 'extensions.conf'), '[park]\nexten => s,1,Answer()\n same => n,Wait(60)\n');
    nats = await startNatsServer();
    const settings = (node: string, serverId: string): Json => memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3 });
    a = await startTestServer(settings('nodeA', ID.a));
    b = await startTestServer(settings('nodeB', ID.b));
    await until('both members see each other', async () => ((await clusterStatus(b.url)).members as Json[]).length === 2);
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("places A's and B's channels, asked of either member", async () => {
    assert.equal((await a.ari('/channels?endpoint=Local/s@park&extension=s&context=park&channelId=on-a&otherChannelId=on-a-2', { method: 'POST' })).status, 200);
    assert.equal((await b.ari('/channels?endpoint=Local/s@park&extension=s&context=park&channelId=on-b&otherChannelId=on-b-2', { method: 'POST' })).status, 200);
    for (const server of [a, b]) {
      const response = await places(server);
      assert.equal(response.status, 200);
      const answer = (await response.json()) as Json;
      assert.equal(answer.channels['on-a'], 'nodeA');
      assert.equal(answer.channels['on-a-2'], 'nodeA');
      assert.equal(answer.channels['on-b'], 'nodeB');
      assert.deepEqual(answer.members, { [ID.a]: 'nodeA', [ID.b]: 'nodeB' });
      assert.deepEqual(answer.unanswered, []);
    }
    assert.equal((await a.ari('/channels/on-a', { method: 'DELETE' })).status, 204);
    assert.equal((await b.ari('/channels/on-b', { method: 'DELETE' })).status, 204);
  });

  it("another member's answer is bounded and checked", () => {
    assert.deepEqual(decodeIds(Buffer.from('not json')), []);
    assert.deepEqual(decodeIds(Buffer.from(JSON.stringify({ ids: ['x'] }))), []);
    assert.deepEqual(decodeIds(Buffer.from(JSON.stringify(['ok', 5, '', 'x'.repeat(300), null]))), ['ok']);
    assert.equal(decodeIds(Buffer.from(JSON.stringify(Array.from({ length: MAX_CHANNEL_IDS + 10 }, (_, i) => `c${i}`)))).length, MAX_CHANNEL_IDS);
  });

  it('the web console on B shows the Member column with each channel\'s member', { skip: existsSync(CHROMIUM) ? false : `no Chromium binary at ${CHROMIUM}` }, async () => {
    assert.equal((await a.ari('/channels?endpoint=Local/s@park&extension=s&context=park&channelId=seen-a&otherChannelId=seen-a-2', { method: 'POST' })).status, 200);
    assert.equal((await b.ari('/channels?endpoint=Local/s@park&extension=s&context=park&channelId=seen-b&otherChannelId=seen-b-2', { method: 'POST' })).status, 200);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--mute-audio'] });
    try {
      const page = await browser.newPage();
      await page.goto(`${b.url}/console`);
      await page.fill('#login-user', 'asterisk');
      await page.fill('#login-password', 'asterisk');
      await page.click('#login-submit');
      await page.waitForSelector('#main-view:not([hidden])');
      await page.locator('#channels.clustered').waitFor({ timeout: 30_000 });
      assert.equal(await page.locator('#channels th.member').isVisible(), true);
      const memberCell = (id: string) => page.locator(`#channels tbody tr[data-channel-id="${id}"] td:nth-child(10)`);
      await page.waitForFunction(() => document.querySelector('#channels tbody tr[data-channel-id="seen-a"] td:nth-child(10)')?.textContent === 'nodeA', undefined, { timeout: 30_000 });
      assert.equal(await memberCell('seen-a').textContent(), 'nodeA');
      assert.equal(await memberCell('seen-b').textContent(), 'nodeB');
    } finally {
      await browser.close();
      await a.ari('/channels/seen-a', { method: 'DELETE' });
      await b.ari('/channels/seen-b', { method: 'DELETE' });
    }
  });

  it('a single server answers 404 (the console hides the column)', async () => {
    const single = await startTestServer({});
    try {
      assert.equal((await places(single)).status, 404);
    } finally {
      await single.stop();
    }
  });
});
