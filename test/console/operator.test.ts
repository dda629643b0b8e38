// The operator console's views end to end in headless Chromium (playwright-core, Debian's
// chromium): a baresip call's SIP ladder (INVITE/100/180/200/ACK/BYE/200 between the right
// parties, the full message on click, digest responses masked) and its registration; call quality
// of two raw RTP calls, one with every 20th packet left out (loss ≈ 5 %, a lower MOS); the charts
// moving while calls run; finished SIP and Local calls in History with their CDR fields.
//
// PATCHBAY_SCREENSHOTS=1 writes a screenshot of each view to docs/images/ (docs/console.md shows
// them); otherwise they go to the test server's data directory, so CI leaves the tree clean.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { ctrl, HAVE_BARESIP, waitFor } from '../helpers/baresip.ts';
import { writeBaresipHome } from '../helpers/baresip.ts';
import { RawPhone } from '../interop/raw-phone.ts';
import { originate } from '../pbx/pbx-helpers.ts';
import { signInToConsole } from './console-page.ts';

const CHROMIUM = process.env.PATCHBAY_CHROMIUM ?? '/usr/bin/chromium';
const skip = !existsSync(CHROMIUM) ? `no Chromium binary at ${CHROMIUM}` : false;
const SCREENSHOTS = process.env.PATCHBAY_SCREENSHOTS === '1' ? new URL('../../docs/images/', import.meta.url).pathname : undefined;

const DIALPLAN = `
[sip-in]
; Patchbay answers an INVITE with 100 Trying at once, as Asterisk does; the half second before
; Ringing keeps the ladder's steps apart.
exten => 100,1,Wait(0.5)
 same => n,Ringing()
 same => n,Wait(1)
 same => n,Answer()
 same => n,Wait(2)
 same => n,Hangup()
exten => 200,1,Answer()
 same => n,Wait(30)
 same => n,Hangup()

[default]
exten => answer,1,Answer()
 same => n,Wait(2)
 same => n,Hangup()
; The unanswered flows of test/core/cdr/records-dial.test.ts (whose records match Asterisk 22's).
exten => busy,1,Busy()
exten => congested,1,Congestion(5)
exten => ringing,1,Ringing()
 same => n,Wait(10)
exten => caller-busy,1,Dial(Local/busy@default)
 same => n,Hangup()
exten => caller-noanswer,1,Dial(Local/ringing@default,1)
 same => n,Hangup()
exten => caller-failed,1,Dial(Local/congested@default)
 same => n,Hangup()
`;

interface LadderStep {
  summary: string;
  from: string;
  to: string;
}

/** Sends PCMU packets every 20 ms to `port`; `skipEvery` > 0 leaves out every n-th (its sequence number is used up). */
function sendRtp(phone: RawPhone, port: number, skipEvery: number): () => void {
  let seq = 1000;
  let timestamp = 0;
  const ssrc = Math.floor(Math.random() * 2 ** 31);
  const payload = Buffer.alloc(160, 0xff);
  const started = Date.now();
  let sent = 0;
  // Paced from the start time, so a late timer sends what is due rather than drifting.
  const timer = setInterval(() => {
    while (sent < Math.floor((Date.now() - started) / 20)) {
      sent += 1;
      seq = (seq + 1) & 0xffff;
      timestamp += 160;
      if (skipEvery > 0 && sent % skipEvery === 0) continue;
      const header = Buffer.alloc(12);
      header[0] = 0x80;
      header[1] = 0;
      header.writeUInt16BE(seq, 2);
      header.writeUInt32BE(timestamp >>> 0, 4);
      header.writeUInt32BE(ssrc, 8);
      phone.rtp.send(Buffer.concat([header, payload]), port, '127.0.0.1');
    }
  }, 10);
  return () => clearInterval(timer);
}

describe('operator console: SIP ladder, quality, charts, history', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let work: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-operator-'));
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, DIALPLAN);
    server = await startTestServer({
      dialplan: { file: dialplanFile },
      config_objects: {
        res_pjsip: {
          endpoint: {
            alice: { context: 'sip-in', allow: 'ulaw', auth: 'alice-auth', aors: 'alice' },
            lossy: { context: 'sip-in', allow: 'ulaw' },
            clean: { context: 'sip-in', allow: 'ulaw' },
          },
          auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: 'secret' } },
          aor: { alice: { max_contacts: 1, remove_existing: 'yes' } },
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

  async function screenshot(page: Page, name: string): Promise<void> {
    const directory = SCREENSHOTS ?? server.dataDir;
    mkdirSync(directory, { recursive: true });
    await page.screenshot({ path: join(directory, name), fullPage: true });
  }

  const view = (page: Page, name: string) => page.click(`#tabs [data-view="${name}"]`);

  test('a baresip call: its ladder, its registration, and its record in History with a Local call', { skip: HAVE_BARESIP ? false : 'baresip is not installed' }, async () => {
    const sipPort = server.core.pjsip.port;
    const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
    const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort });
    writeFileSync(join(home, 'accounts'), `<sip:alice@127.0.0.1:${sipPort};transport=udp>;auth_pass=secret;audio_codecs=PCMU;regint=60\n`);
    let baresip: ChildProcess | undefined;
    let output = '';
    try {
      baresip = spawn('baresip', ['-f', home, '-s'], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
      baresip.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      baresip.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await waitFor('PJSIP/alice online', async () => (server.core.endpoints.get('PJSIP', 'alice')?.state === 'online' ? true : undefined));
      const page = await signIn();

      const dialed = await waitFor('ctrl_tcp', () => ctrl(ctrlPort, 'dial', `sip:100@127.0.0.1:${sipPort}`).catch(() => undefined));
      assert.equal(dialed.ok, true);
      // A Local call beside it: two Local halves, answered by the dialplan.
      const local = await server.ari('/channels?endpoint=Local/answer@default&extension=answer&context=default&callerId=Console%20%3C555%3E', { method: 'POST' });
      assert.equal(local.status, 200);
      await waitFor('the SIP call', async () => (server.core.channels.list().some((c) => c.name.startsWith('PJSIP/alice-')) ? true : undefined));
      await waitFor('both calls to end', async () => (server.core.channels.size === 0 ? true : undefined), 20_000);
      await server.core.records.flush();

      await view(page, 'sip');
      const inviteRow = page.locator('#sip-dialogs tbody tr[data-kind="INVITE"]').first();
      await inviteRow.waitFor();
      assert.match(await inviteRow.innerText(), /PJSIP\/alice-/, 'the dialog is named after its channel');
      await page.locator('#sip-dialogs tbody tr[data-kind="REGISTER"]').first().waitFor();
      await inviteRow.click();
      await page.waitForFunction(() => document.querySelectorAll('#sip-ladder .step').length >= 7);
      const steps: LadderStep[] = await page.$$eval('#sip-ladder .step', (nodes) =>
        nodes.map((n) => ({ summary: n.getAttribute('data-summary') ?? '', from: n.getAttribute('data-from') ?? '', to: n.getAttribute('data-to') ?? '' })),
      );
      // After a digest challenge (INVITE, 401, ACK) the call itself, in order, between alice and Patchbay.
      const lastInvite = steps.map((s) => s.summary).lastIndexOf('INVITE');
      const call = steps.slice(lastInvite);
      const expected = ['INVITE', '100', '180', '200', 'ACK', 'BYE', '200'];
      let at = 0;
      for (const step of call) if (at < expected.length && step.summary.split(' ')[0] === expected[at]) at += 1;
      assert.equal(at, expected.length, `ladder ${call.map((s) => s.summary).join(', ')}`);
      const alice = `alice 127.0.0.1:${phonePort}`;
      const direction = (summary: string) => call.find((s) => s.summary.startsWith(summary));
      assert.deepEqual([direction('INVITE')?.from, direction('INVITE')?.to], [alice, 'Patchbay']);
      assert.deepEqual([direction('180')?.from, direction('180')?.to], ['Patchbay', alice]);
      assert.deepEqual([direction('ACK')?.from, direction('ACK')?.to], [alice, 'Patchbay']);
      assert.deepEqual([direction('BYE')?.from, direction('BYE')?.to], ['Patchbay', alice]);
      // The full message on click, the digest response masked.
      await page.locator('#sip-ladder .step').nth(lastInvite).click();
      const text = await page.innerText('#sip-message');
      assert.match(text, /^INVITE sip:100@/m);
      assert.match(text, /response="\[masked\]"/);
      await screenshot(page, 'console-sip.png');

      // History: the SIP call, answered after a second of ringing; and the Local call.
      await view(page, 'history');
      const sipRow = page.locator('#history tbody tr[data-channel^="PJSIP/alice-"]').first();
      await sipRow.waitFor({ timeout: 15_000 });
      assert.equal(await sipRow.getAttribute('data-disposition'), 'ANSWERED');
      await page.locator('#history tbody tr[data-channel^="Local/answer@default-"]').first().waitFor();
      await sipRow.click();
      const field = (name: string) => page.innerText(`#history-detail dd[data-field="${name}"]`);
      assert.equal(await field('disposition'), 'ANSWERED');
      assert.equal(await field('dst'), '100');
      assert.equal(await field('dcontext'), 'sip-in');
      assert.ok(Number(await field('duration')) >= Number(await field('billsec')) + 1, 'rang for a second before the answer');
      assert.ok(Number(await field('billsec')) >= 1);
      await page.waitForFunction(() => document.querySelectorAll('#history-ladder .step').length >= 7);
      // Search: a number that matches nothing leaves no row.
      await page.fill('#search', 'no-such-call-anywhere');
      assert.equal(await page.locator('#history tbody tr:not([hidden])').count(), 0);
      await page.fill('#search', '');
      await screenshot(page, 'console-history.png');
      await page.close();
    } catch (error) {
      process.stdout.write(`# baresip output:\n${output.slice(-4000).replace(/^/gm, '# ')}\n`);
      throw error;
    } finally {
      if (baresip && baresip.exitCode === null) {
        const exited = new Promise((resolve) => baresip!.once('exit', resolve));
        baresip.kill('SIGTERM');
        await exited;
      }
    }
  });

  test('5 % packet loss shows as loss ≈ 5 % and a lower MOS than a clean call; the charts move', async () => {
    const page = await signIn();
    await view(page, 'charts');
    await page.locator('svg.chart[data-series="calls"]').waitFor();
    const pointsBefore = Number(await page.getAttribute('svg.chart[data-series="calls"]', 'data-points'));

    const phones = [new RawPhone('lossy'), new RawPhone('clean')];
    const stops: Array<() => void> = [];
    try {
      for (const phone of phones) {
        await phone.open();
        phone.serverPort = server.core.pjsip.port;
      }
      const calls = [];
      for (const [index, phone] of phones.entries()) {
        const { dialog, final } = await phone.call('200');
        assert.match(final, /^SIP\/2\.0 200/);
        const port = Number(/^m=audio (\d+)/m.exec(final)?.[1]);
        stops.push(sendRtp(phone, port, index === 0 ? 20 : 0));
        calls.push(dialog);
      }
      // The charts move: new samples, and two calls at once.
      await page.waitForFunction(
        (before) => {
          const chart = document.querySelector('svg.chart[data-series="calls"]');
          return Number(chart?.getAttribute('data-points')) > before + 1 && Number(chart?.getAttribute('data-max')) >= 2;
        },
        pointsBefore,
        { timeout: 20_000 },
      );
      await screenshot(page, 'console-charts.png');

      await view(page, 'quality');
      await page.waitForFunction(() => [...document.querySelectorAll('#quality tbody tr')].filter((r) => Number(r.children[2]?.textContent) >= 250).length >= 2, undefined, { timeout: 30_000 });
      const figures = await page.$$eval('#quality tbody tr', (rows) =>
        rows.map((r) => ({ channel: r.getAttribute('data-channel') ?? '', loss: Number(r.getAttribute('data-loss')), mos: Number(r.getAttribute('data-mos')), rating: r.getAttribute('data-rating') })),
      );
      const lossy = figures.find((f) => f.channel.startsWith('PJSIP/lossy-'))!;
      const clean = figures.find((f) => f.channel.startsWith('PJSIP/clean-'))!;
      assert.ok(lossy && clean, JSON.stringify(figures));
      assert.ok(lossy.loss > 4 && lossy.loss < 6, `loss ${lossy.loss}`);
      assert.ok(clean.loss < 0.5, `clean loss ${clean.loss}`);
      assert.ok(lossy.mos < clean.mos - 0.2, `MOS ${lossy.mos} vs ${clean.mos}`);
      assert.equal(figures[0]!.channel, lossy.channel, 'worst first');
      await screenshot(page, 'console-quality.png');

      for (const stop of stops.splice(0)) stop();
      for (const [index, phone] of phones.entries()) await phone.request(calls[index]!, 'BYE');
      await waitFor('the calls to end', async () => (server.core.channels.size === 0 ? true : undefined));
      await server.core.records.flush();
      // The quality stays with the call's record.
      await view(page, 'history');
      const lossyRow = page.locator('#history tbody tr[data-channel^="PJSIP/lossy-"]').first();
      await lossyRow.waitFor({ timeout: 15_000 });
      const mos = Number(await lossyRow.locator('.mos').innerText());
      assert.ok(Math.abs(mos - lossy.mos) < 0.3, `history MOS ${mos}, live ${lossy.mos}`);
      // Stored with the record (cdr_quality, keyed by uniqueid), as GET /admin/cdr answers it.
      const answer = (await (await fetch(`${server.url}/admin/cdr?number=lossy`, { headers: { Authorization: AUTH } })).json()) as { records: Array<{ quality: { loss_percent: number; mos: number } | null }> };
      const stored = answer.records[0]?.quality;
      assert.ok(stored && stored.loss_percent > 4 && stored.loss_percent < 6, JSON.stringify(answer.records[0]));
      await page.close();
    } finally {
      for (const stop of stops) stop();
      for (const phone of phones) phone.close();
    }
  });

  test('History shows busy, unanswered and failed calls with their dispositions, billsec 0', async () => {
    const expected = new Map([
      ['caller-busy', 'BUSY'],
      ['caller-noanswer', 'NO ANSWER'],
      ['caller-failed', 'FAILED'],
    ]);
    const posted = new Set<string>();
    const unsubscribe = server.core.records.onRecord((record) => {
      if (expected.has(record.dst) && record.channel.endsWith(';2')) posted.add(record.dst);
    });
    try {
      for (const exten of expected.keys()) originate(server, `Local/${exten}@default`);
      await waitFor('the three records', async () => (posted.size === expected.size ? true : undefined));
    } finally {
      unsubscribe();
    }
    await server.core.records.flush();
    const page = await signIn();
    await view(page, 'history');
    for (const [exten, disposition] of expected) {
      const row = page.locator(`#history tbody tr[data-channel^="Local/${exten}@default-"][data-channel$=";2"]`).first();
      await row.waitFor();
      assert.equal(await row.getAttribute('data-disposition'), disposition, exten);
      await row.click();
      await page.waitForFunction((name) => document.querySelector('#history-detail dd[data-field="dst"]')?.textContent === name, exten);
      assert.equal(await page.innerText('#history-detail dd[data-field="billsec"]'), '0');
      assert.equal(await page.innerText('#history-detail dd[data-field="answer"]'), '');
      assert.equal(await page.innerText('#history-detail dd[data-field="lastapp"]'), 'Dial');
    }
    // Searching by disposition asks the server.
    await page.selectOption('#history-disposition', 'BUSY');
    await page.click('#history-search button[type="submit"]');
    await page.waitForFunction(() => [...document.querySelectorAll('#history tbody tr')].every((r) => r.getAttribute('data-disposition') === 'BUSY'));
    await page.close();
  });

  test('the live view in the dark theme, and the search shortcut', async () => {
    const page = await signIn();
    await page.click('#theme');
    assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'search');
    const local = await server.ari('/channels?endpoint=Local/answer@default&extension=answer&context=default', { method: 'POST' });
    assert.equal(local.status, 200);
    await page.waitForFunction(() => document.querySelectorAll('#channels tbody tr[data-state="Up"]').length === 2);
    await page.keyboard.type(';2');
    await page.waitForFunction(() => document.querySelectorAll('#channels tbody tr:not([hidden])').length === 1);
    await screenshot(page, 'console-live-dark.png');
    // The call's timeline as a sequence diagram: a lane per Local half, arrows between them.
    await page.locator('#channels tbody tr:not([hidden]) button[data-action="timeline"]').click();
    await page.waitForFunction(() => document.querySelectorAll('#timeline-diagram .lane-head').length >= 2 && document.querySelectorAll('#timeline-diagram .step').length >= 5);
    await page.click('#theme');
    await screenshot(page, 'console-timeline.png');
    await page.close();
  });
});
