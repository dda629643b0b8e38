// History after a restart, in headless Chromium: a SIP call (SIPp) and a call of two Local
// channels an ARI application bridges end on one server; a second server started on the same data
// directory shows, in History, the SIP call's ladder read back from the database (sip_ladder) and
// both calls' timelines drawn from their CEL events — a lane per channel and one for the bridge.
//
// PATCHBAY_SCREENSHOTS=1 writes docs/images/console-history-cel.png.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, HAVE_SOX, sipp, waitFor } from '../interop/sipp-peer.ts';
import { signInToConsole } from './console-page.ts';

const CHROMIUM = process.env.PATCHBAY_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env.PATCHBAY_SCREENSHOTS === '1' ? new URL('../../docs/images/', import.meta.url).pathname : undefined;
const skip = !existsSync(CHROMIUM) ? `no Chromium binary at ${CHROMIUM}` : !HAVE_SIPP || !HAVE_SOX ? 'sipp or sox is not installed' : false;

/** An RTP range of its own (a fresh server starts at the bottom of its range; other tests' servers hold the default's). */
const RTP_START = 41000 + 2 * Math.floor(Math.random() * 4000);

const DIALPLAN = `
[history-in]
exten => 200,1,Answer()
 same => n,Wait(1)
 same => n,Hangup()

[history-local]
exten => talk,1,Answer()
 same => n,Wait(30)
`;

describe('operator console: History after a restart (stored ladder, timeline from CEL)', { skip }, () => {
  let work: string;
  let dataDir: string;
  let browser: Browser;
  const servers: TestServer[] = [];

  const start = async (): Promise<TestServer> => {
    const server = await startTestServer(
      {
        dialplan: { file: join(work, 'extensions.conf') },
        cdr: { flush_ms: 50 },
        sip: { rtp_port_start: RTP_START, rtp_port_end: RTP_START + 200 },
        cel: { enabled: true, events: 'ALL' },
        config_objects: { res_pjsip: { endpoint: { bob: { context: 'history-in', allow: 'ulaw' } } } },
      },
      { dataDir },
    );
    servers.push(server);
    return server;
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-operator-history-'));
    dataDir = join(work, 'data');
    writeFileSync(join(work, 'extensions.conf'), DIALPLAN);
    spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '4', 'sine', '1000', 'vol', '0.5']);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--mute-audio'] });
  });

  after(async () => {
    await browser?.close();
    for (const server of servers) await server.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const signIn = (server: TestServer): Promise<Page> => signInToConsole(browser, server.url, { viewport: { width: 1280, height: 1000 } });

  test('the ladder and the CEL timeline of calls that ended before the restart', { timeout: 180_000 }, async () => {
    const first = await start();
    // A SIP call: SIPp calls 200, Patchbay answers and hangs up after a second.
    const run = sipp('call-wait-bye.xml', [`127.0.0.1:${first.core.pjsip.port}`, '-s', '200', '-set', 'caller', 'bob'], { cwd: work, timeoutMs: 30_000 });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    // Two Local channels an application bridges, then hangs up.
    const events = await first.events('app=history-app');
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const response = await first.ari('/channels?endpoint=Local/talk@history-local&app=history-app', { method: 'POST' });
      assert.equal(response.status, 200);
      ids.push(((await response.json()) as { id: string }).id);
    }
    await waitFor('both in the application', () => (ids.every((id) => first.core.channels.get(id)?.state === 'Up') ? true : undefined), 10_000);
    const bridge = (await (await first.ari('/bridges?type=mixing', { method: 'POST' })).json()) as { id: string };
    for (const id of ids) assert.equal((await first.ari(`/bridges/${bridge.id}/addChannel?channel=${id}`, { method: 'POST' })).status, 204);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const id of ids) assert.equal((await first.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    await events.close();
    await waitFor('every channel to end', () => (first.core.channels.size === 0 ? true : undefined), 20_000);
    // stop() writes the ladders still settling and the queued records before the database closes.
    await first.stop();

    const second = await start();
    const page = await signIn(second);
    await page.click('#tabs [data-view="history"]');
    const sipRow = page.locator('#history tbody tr[data-channel^="PJSIP/bob-"]').first();
    await sipRow.waitFor({ timeout: 15_000 });
    await sipRow.click();
    await page.waitForFunction(() => document.querySelectorAll('#history-ladder .step').length >= 5, undefined, { timeout: 15_000 });
    const summaries = await page.$$eval('#history-ladder .step', (nodes) => nodes.map((n) => (n.getAttribute('data-summary') ?? '').split(' ')[0]));
    for (const expected of ['INVITE', '200', 'ACK', 'BYE']) assert.ok(summaries.includes(expected), `ladder ${summaries.join(', ')}`);
    await page.waitForFunction(() => document.querySelectorAll('#history-cel .step').length >= 4, undefined, { timeout: 15_000 });
    const sipEvents = await page.$$eval('#history-cel .step', (nodes) => nodes.map((n) => n.getAttribute('data-event')));
    for (const expected of ['CHAN_START', 'ANSWER', 'HANGUP', 'CHAN_END']) assert.ok(sipEvents.includes(expected), `CEL ${sipEvents.join(', ')}`);

    // A bridged Local call (its two halves share a linkedid): a lane for each half and one for the bridge, an arrow into it.
    const localRow = page.locator('#history tbody tr[data-channel^="Local/talk@history-local-"]').first();
    await localRow.click();
    await page.waitForFunction(() => [...document.querySelectorAll('#history-cel .step')].some((n) => n.getAttribute('data-event') === 'BRIDGE_ENTER'), undefined, { timeout: 15_000 });
    const lanes = await page.$$eval('#history-cel .lane-head', (nodes) => nodes.map((n) => n.getAttribute('data-lane') ?? ''));
    assert.ok(lanes.filter((name) => name.startsWith('Local/talk@history-local-')).length >= 2, `lanes ${lanes.join(', ')}`);
    assert.ok(lanes.some((name) => name === `bridge ${bridge.id.slice(0, 8)}`), `lanes ${lanes.join(', ')}`);
    const arrows = await page.$$eval('#history-cel .step[data-event="BRIDGE_ENTER"] line.arrow', (nodes) => nodes.length);
    assert.ok(arrows >= 1, `${arrows} arrows into the bridge`);
    const directory = SCREENSHOTS ?? second.dataDir;
    mkdirSync(directory, { recursive: true });
    await page.screenshot({ path: join(directory, 'console-history-cel.png'), fullPage: true });
    await page.close();
  });
});
