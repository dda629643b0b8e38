// Packet loss on a real media path, as the operator console shows it: two baresip phones call
// Patchbay's Echo() at once, one straight and one through a UDP relay that leaves out every 20th RTP
// packet it sends (test/helpers/lossy-relay.ts). Patchbay's RTP stack counts the gaps; the
// Quality view shows loss ≈ 5 % and a MOS lower than the clean call's, worst first, and History
// keeps both figures with the records.
//
// PATCHBAY_SCREENSHOTS=1 writes the Quality view to docs/images/console-quality-baresip.png.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { HAVE_BARESIP, waitFor } from '../helpers/baresip.ts';
import { BaresipParty, MISSING_PARTY_MODULES } from '../helpers/baresip-party.ts';
import { LossyRelay } from '../helpers/lossy-relay.ts';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';
import { signInToConsole } from './console-page.ts';

const CHROMIUM = process.env.PATCHBAY_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env.PATCHBAY_SCREENSHOTS === '1' ? new URL('../../docs/images/', import.meta.url).pathname : undefined;
const skip = !existsSync(CHROMIUM)
  ? `no Chromium binary at ${CHROMIUM}`
  : !HAVE_BARESIP
    ? 'baresip is not installed'
    : MISSING_PARTY_MODULES.length > 0
      ? `baresip modules missing: ${MISSING_PARTY_MODULES.join(', ')}`
      : false;

/** An RTP range of its own (a fresh server starts at the bottom of its range; other tests' servers hold the default's). */
const RTP_START = 41000 + 2 * Math.floor(Math.random() * 4000);

const DIALPLAN = `
[quality-in]
exten => 200,1,Answer()
 same => n,Echo()
 same => n,Hangup()
`;

interface QualityRow {
  channel: string;
  received: number;
  loss: number;
  mos: number;
}

describe('operator console: 5 % loss on a baresip call through a lossy relay', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-operator-loss-'));
    writeFileSync(join(work, 'extensions.conf'), DIALPLAN);
    server = await startTestServer({
      dialplan: { file: join(work, 'extensions.conf') },
      sip: { rtp_port_start: RTP_START, rtp_port_end: RTP_START + 200 },
      config_objects: {
        res_pjsip: {
          endpoint: {
            lossy: { context: 'quality-in', allow: 'ulaw' },
            clean: { context: 'quality-in', allow: 'ulaw' },
          },
        },
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--mute-audio'] });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const signIn = (): Promise<Page> => signInToConsole(browser, server.url, { viewport: { width: 1280, height: 860 } });

  test('the relayed call shows loss ≈ 5 % and a lower MOS than the straight one; History keeps both', { timeout: 180_000 }, async () => {
    const sipPort = server.core.pjsip.port;
    const relay = new LossyRelay(sipPort, 20);
    await relay.start();
    const lossy = new BaresipParty({ user: 'lossy', codec: 'PCMU/8000/1', source: 'ausine,440' }, join(work, 'lossy'));
    const clean = new BaresipParty({ user: 'clean', codec: 'PCMU/8000/1', source: 'ausine,440' }, join(work, 'clean'));
    try {
      await lossy.start(relay.sipPort);
      await clean.start(sipPort);
      const page = await signIn();
      await lossy.dial(`sip:200@127.0.0.1:${relay.sipPort}`);
      await clean.dial(`sip:200@127.0.0.1:${sipPort}`);
      await page.click('#tabs [data-view="quality"]');
      // At least 10 s of audio each (500 packets), so 5 % is 25 gaps, not a handful.
      await page.waitForFunction(
        () => [...document.querySelectorAll('#quality tbody tr')].filter((r) => Number(r.children[2]?.textContent) >= 500).length >= 2,
        undefined,
        { timeout: 60_000 },
      );
      const rows: QualityRow[] = await page.$$eval('#quality tbody tr', (nodes) =>
        nodes.map((r) => ({
          channel: r.getAttribute('data-channel') ?? '',
          received: Number(r.children[2]?.textContent),
          loss: Number(r.getAttribute('data-loss')),
          mos: Number(r.getAttribute('data-mos')),
        })),
      );
      const bad = rows.find((r) => r.channel.startsWith('PJSIP/lossy-'));
      const good = rows.find((r) => r.channel.startsWith('PJSIP/clean-'));
      assert.ok(bad && good, JSON.stringify(rows));
      assert.ok(relay.counts.dropped >= 25, `the relay dropped ${relay.counts.dropped}`);
      assert.ok(bad.loss > 4 && bad.loss < 6, `loss ${bad.loss} (${JSON.stringify(relay.counts)})`);
      assert.ok(good.loss < 0.5, `clean loss ${good.loss}`);
      assert.ok(bad.mos < good.mos - 0.2, `MOS ${bad.mos} vs ${good.mos}`);
      assert.equal(rows[0]!.channel, bad.channel, 'worst first');
      const directory = SCREENSHOTS ?? server.dataDir;
      mkdirSync(directory, { recursive: true });
      await page.screenshot({ path: join(directory, 'console-quality-baresip.png'), fullPage: true });

      await lossy.hangup();
      await clean.hangup();
      await waitFor('the calls to end', async () => (server.core.channels.size === 0 ? true : undefined), 20_000);
      await server.core.records.flush();
      const answer = (await (await fetch(`${server.url}/admin/cdr?number=lossy`, { headers: { Authorization: AUTH } })).json()) as {
        records: Array<{ quality: { loss_percent: number; mos: number } | null }>;
      };
      const stored = answer.records[0]?.quality;
      assert.ok(stored && stored.loss_percent > 4 && stored.loss_percent < 6 && stored.mos < good.mos - 0.2, JSON.stringify(answer.records[0]));
      await page.click('#tabs [data-view="history"]');
      const row = page.locator('#history tbody tr[data-channel^="PJSIP/lossy-"]').first();
      await row.waitFor({ timeout: 15_000 });
      assert.ok(Math.abs(Number(await row.locator('.mos').innerText()) - stored.mos) < 0.05);
      await page.close();
    } catch (error) {
      process.stdout.write(`# lossy baresip:\n${lossy.output.slice(-3000).replace(/^/gm, '# ')}\n`);
      throw error;
    } finally {
      await lossy.stop();
      await clean.stop();
      relay.close();
    }
  });
});
