// The web console end to end in headless Chromium (Debian's `chromium`, driven by playwright-core):
// sign in, originate from the page and watch the call's states, see a bridge another application
// builds with two members, listen in while a prompt plays (the level meter moves and the page
// receives non-silent audio), hang up from the page, and a read-only user who sees but cannot act.
// Skipped, with the reason, where no Chromium binary exists; CI installs it (.ci/run).
//
// PATCHBAY_CONSOLE_SCREENSHOT=docs/console.png writes the screenshot there (the one in docs/ was
// made that way); otherwise it goes to the test's temporary directory.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const CHROMIUM = process.env.PATCHBAY_CHROMIUM ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium binary at ${CHROMIUM} (apt-get install chromium, or set PATCHBAY_CHROMIUM)`;
/** A prompt when Asterisk's sounds are installed (CI installs them), else a tone from the same play button. */
const PROMPT = existsSync('/usr/share/asterisk/sounds/en/hello-world.wav') ? 'sound:hello-world' : 'tone:440;tonezone=us';

interface ListenFigures {
  key: string;
  messages: number;
  samples: number;
  nonSilentSamples: number;
  peak: number;
  level: number;
}

describe('web console in Chromium', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let demo: EventSocket;

  before(async () => {
    server = await startTestServer({
      ari: {
        users: [
          { name: 'asterisk', password: 'asterisk' },
          { name: 'viewer', password: 'look-only', read_only: true },
        ],
      },
      // A phone that registers without a password, for the endpoints table.
      config_objects: { res_pjsip: { endpoint: { bob: { context: 'default', allow: 'ulaw', aors: 'bob' } }, aor: { bob: { max_contacts: 1 } } } },
    });
    // Another ARI application, as a user's app would be: it bridges the calls that reach it.
    demo = await server.events('app=demo');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
    });
  });

  after(async () => {
    await browser?.close();
    await demo?.close();
    await server?.stop();
  });

  async function signIn(user: string, password: string): Promise<Page> {
    const page = await browser.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    await page.goto(`${server.url}/console`);
    await page.fill('#login-user', user);
    await page.fill('#login-password', password);
    await page.click('#login-submit');
    await page.waitForSelector('#main-view:not([hidden])');
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'live');
    return page;
  }

  const channelRow = (page: Page, namePrefix: string) => page.locator('#channels tbody tr', { hasText: namePrefix });

  test('under an http.prefix the page reaches ARI and its events through the prefix', async () => {
    const prefixed = await startTestServer({ http: { prefix: 'asterisk' } });
    try {
      const page = await browser.newPage();
      await page.goto(`${prefixed.url}/asterisk/console`);
      await page.fill('#login-user', 'asterisk');
      await page.fill('#login-password', 'asterisk');
      await page.click('#login-submit');
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'live');
      // Originate to an extension this time: two Local halves, both answered by the dialplan.
      await page.fill('#originate-endpoint', 'Local/answer@default');
      await page.fill('#originate-extension', 'answer');
      await page.click('#originate-submit');
      await page.waitForFunction(() => document.querySelectorAll('#channels tbody tr[data-state="Up"]').length === 2);
      assert.match(await page.innerText('#channels tbody'), /Wait\(3600\)/);
      await page.close();
    } finally {
      await prefixed.stop();
    }
  });

  test('endpoints show their registration state as a phone registers and unregisters', async () => {
    const page = await signIn('asterisk', 'asterisk');
    const state = () => page.locator('#endpoints tr[data-endpoint="PJSIP/bob"]').getAttribute('data-state');
    await page.locator('#endpoints tr[data-endpoint="PJSIP/bob"]').waitFor();
    assert.equal(await state(), 'offline');
    const phone = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => phone.bind(0, '127.0.0.1', resolve));
    const register = (expires: number, cseq: number): Promise<string> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no answer to REGISTER')), 3000);
        phone.once('message', (message) => {
          clearTimeout(timer);
          resolve(message.toString().split('\r\n')[0]);
        });
        const sipPort = server.core.pjsip.port;
        const lines = [
          `REGISTER sip:127.0.0.1:${sipPort} SIP/2.0`,
          `Via: SIP/2.0/UDP 127.0.0.1:${phone.address().port};branch=z9hG4bK-console-${cseq};rport`,
          'Max-Forwards: 70',
          'From: <sip:bob@127.0.0.1>;tag=console',
          'To: <sip:bob@127.0.0.1>',
          'Call-ID: console-register',
          `CSeq: ${cseq} REGISTER`,
          `Contact: <sip:bob@127.0.0.1:${phone.address().port}>`,
          `Expires: ${expires}`,
          'Content-Length: 0',
          '',
          '',
        ];
        phone.send(lines.join('\r\n'), sipPort, '127.0.0.1');
      });
    try {
      assert.equal(await register(120, 1), 'SIP/2.0 200 OK');
      await page.waitForFunction(() => document.querySelector('#endpoints tr[data-endpoint="PJSIP/bob"]')?.getAttribute('data-state') === 'online');
      assert.equal(await register(0, 2), 'SIP/2.0 200 OK');
      await page.waitForFunction(() => document.querySelector('#endpoints tr[data-endpoint="PJSIP/bob"]')?.getAttribute('data-state') === 'offline');
    } finally {
      phone.close();
      await page.close();
    }
  });

  test('a wrong password is refused in the form', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/console`);
    await page.fill('#login-user', 'asterisk');
    await page.fill('#login-password', 'wrong');
    await page.click('#login-submit');
    await page.waitForFunction(() => document.getElementById('login-error')?.textContent === 'Wrong user or password');
    assert.equal(await page.isVisible('#main-view'), false);
    await page.close();
  });

  test('originate, watch states and a bridge, listen while a prompt plays, hang up; a read-only user cannot act', async () => {
    const page = await signIn('asterisk', 'asterisk');
    assert.equal(await page.isDisabled('#originate-submit'), false);

    // Originate from the page into the application `demo`.
    await page.fill('#originate-endpoint', 'Local/answer@default');
    await page.fill('#originate-app', 'demo');
    await page.click('#originate-submit');
    const start = await demo.nextOfType('StasisStart', 5000);
    const first = start.channel as { id: string; name: string };
    assert.match(first.name, /^Local\/answer@default-[0-9a-f]+;1$/);
    const firstRow = page.locator(`#channels tr[data-channel-id="${first.id}"]`);
    await firstRow.waitFor();
    await page.waitForFunction((id) => document.querySelector(`#channels tr[data-channel-id="${id}"]`)?.getAttribute('data-state') === 'Up', first.id);
    assert.match(await firstRow.innerText(), /demo/);
    // Codec: CHANNEL(audionativeformat), asked once (a Local channel carries signed linear audio).
    await page.waitForFunction((id) => document.querySelector(`#channels tr[data-channel-id="${id}"] td:nth-child(7)`)?.textContent === 'slin', first.id);

    // Its timeline shows how it got there, in order.
    await firstRow.locator('button[data-action="timeline"]').click();
    // The timeline fills as the events come: the first ChannelDialplan (AppDial2) can be shown
    // before the one entering Stasis(demo) (CI once read it in between). Wait for the last one.
    await page.waitForSelector('#timeline tbody tr[data-event="ChannelDialplan"]');
    await page.waitForFunction(() => document.querySelector('#timeline tbody')?.textContent?.includes('Stasis(demo)') === true);
    const events = await page.$$eval('#timeline tbody tr', (rows) => rows.map((r) => r.getAttribute('data-event')));
    assert.ok(events.indexOf('ChannelCreated') < events.indexOf('ChannelStateChange'), events.join(','));
    assert.ok(events.indexOf('ChannelStateChange') < events.lastIndexOf('ChannelDialplan'), events.join(','));
    assert.match(await page.innerText('#timeline tbody'), /Stasis\(demo\)/);
    // Lanes: the channel, its Local other half.
    assert.equal(await page.locator('#timeline thead th').count(), 5);
    await page.fill('#timeline-filter', 'channelcreated');
    await page.waitForFunction(() => document.querySelectorAll('#timeline tbody tr').length === 2);
    const download = page.waitForEvent('download');
    await page.click('#timeline-export');
    const stream = await (await download).createReadStream();
    const exported = JSON.parse(Buffer.concat(await stream.toArray()).toString()) as { channel: string; events: { type: string; channel: { name: string } }[] };
    assert.equal(exported.channel, first.id);
    assert.deepEqual(exported.events.map((e) => `${e.type} ${e.channel.name.slice(-2)}`), ['ChannelCreated ;1', 'ChannelCreated ;2']);
    await page.fill('#timeline-filter', '');

    // The app `demo` bridges it with a second call: the page shows the bridge with both members.
    const second = (await (await server.ari('/channels?endpoint=Local/answer@default&app=demo', { method: 'POST' })).json()) as { id: string };
    await demo.nextOfType('StasisStart', 5000);
    const bridge = (await (await server.ari('/bridges?type=mixing&name=demo-call', { method: 'POST' })).json()) as { id: string };
    assert.equal((await server.ari(`/bridges/${bridge.id}/addChannel?channel=${first.id},${second.id}`, { method: 'POST' })).status, 204);
    const bridgeRow = page.locator(`#bridges tr[data-bridge-id="${bridge.id}"]`);
    await page.waitForFunction((id) => document.querySelector(`#bridges tr[data-bridge-id="${id}"]`)?.getAttribute('data-members') === '2', bridge.id);
    assert.match(await bridgeRow.innerText(), /demo-call/);
    assert.equal(await bridgeRow.locator('li[data-member]').count(), 2);
    // Applications with their subscriptions: `demo` holds both calls.
    const demoRow = page.locator('#applications tbody tr', { hasText: /^demo/ });
    await page.waitForFunction((ids) => ids.every((id) => document.querySelector('#applications tbody')?.textContent?.includes(id)), [first.id, second.id]);
    assert.match(await demoRow.innerText(), new RegExp(first.id.replace('.', '\\.')));

    // Listen in to the first channel, then play a prompt to it from the page.
    await firstRow.locator('button[data-action="listen"]').click();
    await firstRow.locator('button[data-action="unlisten"]').waitFor();
    await page.fill('#play-media', PROMPT);
    await firstRow.locator('button[data-action="play"]').click();
    await page.waitForSelector('#playbacks tbody tr');
    await page.waitForFunction(
      (key) => {
        const meter = document.querySelector(`meter[data-meter="${key}"]`) as HTMLMeterElement | null;
        return meter !== null && meter.value > 0.3;
      },
      `channel:${first.id}`,
      { timeout: 10000 },
    );
    await page.waitForFunction(() => {
      const stats = (window as unknown as { patchbayConsole: { listenStats(): ListenFigures[] } }).patchbayConsole.listenStats();
      return stats.length === 1 && stats[0].nonSilentSamples > 4000;
    });
    const figures = await page.evaluate(() => (window as unknown as { patchbayConsole: { listenStats(): ListenFigures[] } }).patchbayConsole.listenStats());
    assert.equal(figures[0].key, `channel:${first.id}`);
    assert.ok(figures[0].peak > 1000, `peak ${figures[0].peak}`);
    // The listen-in's own helpers (snoop, media channel, bridge) are not shown.
    assert.equal(await page.locator('#channels tbody tr', { hasText: 'Snoop/' }).count(), 0);
    assert.equal(await page.locator('#channels tbody tr', { hasText: 'WebSocket/' }).count(), 0);
    assert.equal(await page.locator('#bridges tbody tr').count(), 1);

    const screenshot = process.env.PATCHBAY_CONSOLE_SCREENSHOT ?? join(server.dataDir, 'console.png');
    await page.screenshot({ path: screenshot, fullPage: true });

    // A read-only user sees the same calls but every action is disabled, and ARI refuses anyway.
    const viewer = await signIn('viewer', 'look-only');
    await viewer.locator(`#channels tr[data-channel-id="${first.id}"]`).waitFor();
    assert.equal(await viewer.isVisible('#read-only-note'), true);
    assert.equal(await viewer.isDisabled('#originate-submit'), true);
    const buttons = await viewer.$$eval('button.act', (nodes) => nodes.map((n) => (n as HTMLButtonElement).disabled));
    assert.ok(buttons.length >= 5);
    assert.ok(buttons.every(Boolean));
    const forced = await viewer.evaluate(async (id) => {
      const response = await fetch(`ari/channels/${id}`, { method: 'DELETE', credentials: 'omit', headers: { Authorization: `Basic ${btoa('viewer:look-only')}` } });
      return response.status;
    }, first.id);
    assert.equal(forced, 403);
    await viewer.close();

    // The bridge's own meter: listen to the bridge while a prompt plays to it.
    await bridgeRow.locator('button[data-action="listen"]').click();
    await bridgeRow.locator('button[data-action="unlisten"]').waitFor();
    await bridgeRow.locator('button[data-action="play"]').click();
    await page.waitForFunction(
      (key) => ((document.querySelector(`meter[data-meter="${key}"]`) as HTMLMeterElement | null)?.value ?? 0) > 0.3,
      `bridge:${bridge.id}`,
      { timeout: 10000 },
    );
    await bridgeRow.locator('button[data-action="unlisten"]').click();
    await bridgeRow.locator('button[data-action="listen"]').waitFor();
    // Leaving the bridge, the listen-in's media channel is gone from it again.
    await page.waitForFunction((id) => document.querySelector(`#bridges tr[data-bridge-id="${id}"]`)?.getAttribute('data-members') === '2', bridge.id);

    // Record the call (its bridge: a bridged channel itself cannot be recorded, 409) from the page,
    // stop, and play the stored file back in the page.
    await bridgeRow.locator('button[data-action="record"]').click();
    await page.waitForSelector('#recordings tbody tr[data-recording]', { timeout: 5000 }).catch(async (err: unknown) => {
      throw new Error(`no recording in progress; the page says: ${await page.textContent('#error')}`, { cause: err });
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    await bridgeRow.locator('button[data-action="stop-record"]').click();
    const storedRow = page.locator('#stored tbody tr[data-stored^="console-"]');
    await storedRow.waitFor();
    assert.equal(await page.locator('#recordings tbody tr').count(), 0);
    await storedRow.locator('button[data-action="play-stored"]').click();
    await page.waitForFunction(() => {
      const player = document.getElementById('recording-player') as HTMLAudioElement;
      return !player.hidden && player.src.startsWith('blob:') && player.duration > 0.3;
    });

    // Hang up from the page: the channel leaves the table and the listen-in ends with it.
    await page.click('#timeline-close');
    await firstRow.locator('button[data-action="hangup"]').click();
    await firstRow.waitFor({ state: 'detached' });
    await page.waitForFunction(() => (window as unknown as { patchbayConsole: { listenStats(): unknown[] } }).patchbayConsole.listenStats().length === 0);
    const left = (await (await server.ari('/channels')).json()) as { id: string; name: string }[];
    assert.equal(left.some((c) => c.id === first.id), false);
    // The console's snoop and media channels went with it.
    assert.equal(left.some((c) => c.name.startsWith('Snoop/') || c.name.startsWith('WebSocket/')), false);

    // The events connection drops; a call ends meanwhile; on reconnecting the page catches up.
    await page.evaluate(() => (window as unknown as { patchbayConsole: { state: { events: WebSocket } } }).patchbayConsole.state.events.close());
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'disconnected, retrying');
    assert.equal((await server.ari(`/channels/${second.id}`, { method: 'DELETE' })).status, 204);
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'live');
    await page.locator(`#channels tr[data-channel-id="${second.id}"]`).waitFor({ state: 'detached' });
    await page.close();
  });
});
