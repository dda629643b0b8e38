// A browser registered over WebSocket through member A, called from member B (docs/cluster.md,
// "Registrations"): JsSIP in headless Chromium registers on A's /ws; B originates PJSIP/browser and
// the call's SIP runs over A's WebSocket while its WebRTC media (ICE, DTLS-SRTP) terminates on B:
// the page hears the tone B plays, B records the browser's tone. Skipped with a message without
// Chromium or nats-server.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { browserPjsipConf, CHROMIUM, chromiumArgs, jssipBundle, jssipPage, type PageState, writeBrowserTone } from '../helpers/jssip-browser.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { clusterStatus, type Json, NO_NATS, until } from './cluster-fixture.ts';

const TONE_HZ = 1000;
const skip = NO_NATS || existsSync(CHROMIUM) ? false : 'Chromium is not installed (Debian package chromium)';

describe('a browser registered over WebSocket through member A, called from member B over WebRTC', { skip }, () => {
  let work: string;
  let nats: NatsServer;
  let a: TestServer;
  let b: TestServer;
  let site: http.Server;
  let browser: Browser;
  let tab: Page;
  let events: EventSocket;
  const status = async (server: TestServer): Promise<Json> => clusterStatus(server.url);
  const pageState = (): Promise<PageState> => tab.evaluate(() => window.state);
  async function pageWaits(what: string, predicate: string, timeoutMs = 30_000): Promise<void> {
    await tab.waitForFunction(predicate, undefined, { timeout: timeoutMs }).catch(async (error: unknown) => {
      const notes = b.logLines.filter((line) => /WebRTC|DTLS|"level":50/i.test(line)).slice(-5).join('');
      throw new Error(`${what}: ${String(error)}; page: ${JSON.stringify(await pageState())}; B: ${notes}`);
    });
  }
  /** The next event of `type`; a timeout says which one and what came instead (CI once gave only "timed out"). */
  async function nextEvent(type: string, timeoutMs = 60_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    const skipped: string[] = [];
    for (;;) {
      const event = (await events.next(Math.max(1, deadline - Date.now())).catch(async (error: unknown) => {
        const notes = b.logLines.filter((line) => /WebRTC|DTLS|record|"level":(40|50)/i.test(line)).slice(-8).join('');
        throw new Error(`no ${type} in ${timeoutMs} ms (${String(error)}); events instead: ${skipped.join(', ') || 'none'}; page: ${JSON.stringify(await pageState())}; B: ${notes}`);
      })) as Json;
      if (event.type === type) return event;
      if (skipped.length < 50) skipped.push(String(event.type));
    }
  }

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-cluster-webrtc-relay-'));
    const tone = writeBrowserTone(work, TONE_HZ);
    const conf = join(work, 'pjsip.conf');
    // docs/webrtc.md's configuration, the same on both members.
    writeFileSync(
      conf,
      [...browserPjsipConf()].join('\n'),
    );
    nats = await startNatsServer();
    // Nothing here is about a member's death, and Chromium beside two members loads the machine
    // (≈ 15): a 3 s heartbeat miss once declared A dead mid-call. A generous grace instead; the
    // members leave with a last heartbeat that says so, so no wait comes of it.
    const settings = (node: string, serverId: string): Json => ({ server_id: serverId, sip: { pjsip_conf: conf }, cluster: { nats_url: nats.url, node_id: node, failure_seconds: 60 } });
    a = await startTestServer(settings('nodeA', '02:00:00:00:4a:01'));
    b = await startTestServer(settings('nodeB', '02:00:00:00:4b:01'));
    await until('the members know each other', async () => (await status(a)).members.length === 2 && (await status(b)).members.length === 2);
    events = await b.events('app=webrtc-relay');
    const bundle = await jssipBundle();
    // The browser's WebSocket goes to member A.
    const wsUrl = `${a.url.replace('http', 'ws')}/ws`;
    site = http.createServer((request, response) => {
      if (request.url === '/jssip.js') return void response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
      response.writeHead(200, { 'Content-Type': 'text/html' }).end(jssipPage(wsUrl));
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs(tone) });
    tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${(site.address() as { port: number }).port}/`);
    await pageWaits('registered', 'window.state.registered');
    await until('B knows the WebSocket contact registered on A', async () => (await status(b)).contacts.known_elsewhere === 1);
  });

  after(async () => {
    await events?.close();
    await browser?.close();
    site?.close();
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("B originates PJSIP/browser: SIP over A's WebSocket, WebRTC media with B both ways", async () => {
    const created = await b.ari('/channels?endpoint=PJSIP/browser&app=webrtc-relay&channelId=webrtc-relay-1', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    await nextEvent('StasisStart');
    await pageWaits('media connected', "window.state.incoming === 1 && window.state.log.includes('pc connected')");
    assert.equal(a.core.channels.size, 0, 'A holds no channel: it only lent its WebSocket');
    assert.equal((await b.ari(`/channels/webrtc-relay-1/play?media=${encodeURIComponent('tone:440')}`, { method: 'POST' })).status, 201);
    await pageWaits('the tone heard', 'window.state.heardHz !== undefined && Math.abs(window.state.heardHz - 440) < 15', 20_000);
    const record = await b.ari('/channels/webrtc-relay-1/record?name=webrtc-relay&format=wav&maxDurationSeconds=3', { method: 'POST' });
    assert.equal(record.status, 201, await record.text());
    await nextEvent('RecordingFinished');
    const file = join(work, 'heard-on-b.wav');
    writeFileSync(file, Buffer.from(await (await b.ari('/recordings/stored/webrtc-relay/file')).arrayBuffer()));
    const heard = readWavFile(file);
    const [atTone, offTone] = [tonePower(heard.samples, TONE_HZ, heard.rate), tonePower(heard.samples, 440, heard.rate)];
    assert.ok(atTone > 20 * Math.max(offTone, 1), `B hears the browser's ${TONE_HZ} Hz: ${atTone} against 440 Hz ${offTone}`);
    assert.equal((await b.ari('/channels/webrtc-relay-1', { method: 'DELETE' })).status, 204);
    await pageWaits('the call to end', 'window.state.ended', 20_000);
    await until('no relayed dialog left', async () => (await status(b)).relayed_dialogs.through_others === 0 && (await status(a)).relayed_dialogs.lent === 0);
  });
});
