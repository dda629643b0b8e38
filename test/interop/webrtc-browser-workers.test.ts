// A browser's WebRTC call with its stream in a media worker (media.workers: 1, issue 25): headless
// Chromium (playwright-core) with JsSIP registers over WebSocket and calls in with its fake
// microphone playing a 1000 Hz tone; once on an endpoint allowing G.711 only, once Opus too (the
// browser's first choice, coded in the worker: media.worker_opus). The worker answers the ICE checks and runs SRTP, the main
// thread the DTLS handshake. Both ways are checked: a 440 Hz tone played to the browser is heard by
// Web Audio in the page, the browser's tone is recorded, SRTCP gives a round trip; /metrics counts
// the stream on the worker. Last, the worker is killed: the call ends with cause 38.
// Skipped with a message when Chromium or sox is not installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { browserPjsipConf, CHROMIUM, chromiumArgs, jssipBundle, jssipPage, type PageState, writeBrowserTone } from '../helpers/jssip-browser.ts';
import { parsePrometheus, sumOf } from '../helpers/prometheus.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { dominantTone } from '../helpers/rtp-tone.ts';
import { startTestServer } from '../helpers/server.ts';
import { nextEvent, waitFor } from './sipp-peer.ts';
import { waitForWorkers } from './sipp-worker-calls.ts';

const TONE_HZ = 1000;
const HAVE_SOX = spawnSync('sox', ['--version']).error === undefined;
const SKIP = !existsSync(CHROMIUM) ? 'Chromium is not installed (Debian package chromium)' : !HAVE_SOX ? 'sox is not installed' : false;
const AUTH = { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` };

for (const allow of ['ulaw', 'opus,ulaw'] as const) {
test(`a browser's WebRTC call (allow=${allow}) with its stream in a media worker: audio both ways, SRTCP, the stream on the worker; a dying worker ends it with cause 38`, { timeout: 180_000, skip: SKIP }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'patchbay-webrtc-worker-'));
  const tone = writeBrowserTone(work, TONE_HZ);
  const conf = join(work, 'pjsip.conf');
  writeFileSync(
    conf,
    [...browserPjsipConf(allow)].join('\n'),
  );
  const dialplan = join(work, 'extensions.conf');
  writeFileSync(dialplan, '[webrtc-in]\nexten => 100,1,Stasis(webrtc)\n');
  const server = await startTestServer({ media: { workers: 1 }, sip: { pjsip_conf: conf }, dialplan: { file: dialplan } } as never);
  const events = await server.events('app=webrtc');
  const bundle = await jssipBundle();
  const site = http.createServer((request, response) => {
    if (request.url === '/jssip.js') return void response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
    response.writeHead(200, { 'Content-Type': 'text/html' }).end(jssipPage(`${server.url.replace('http', 'ws')}/ws`));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs(tone) });
  const tab = await browser.newPage();
  const pageWaits = async (what: string, predicate: string, timeoutMs = 30_000): Promise<void> => {
    await tab.waitForFunction(predicate, undefined, { timeout: timeoutMs }).catch(async (error: unknown) => {
      const state = (await tab.evaluate(() => window.state)) as PageState;
      const notes = server.logLines.filter((line) => /WebRTC|DTLS|worker|"level":50/i.test(line)).slice(-5).join('');
      throw new Error(`${what}: ${String(error)}; page: ${JSON.stringify(state)}; server: ${notes}`);
    });
  };
  const metrics = async () => parsePrometheus(await (await fetch(`${server.url}/metrics`, { headers: AUTH })).text());
  try {
    const pool = server.core.pjsip.mediaWorkers;
    assert.ok(pool, 'the server runs a media worker');
    await waitForWorkers(server);
    await tab.goto(`http://127.0.0.1:${(site.address() as { port: number }).port}/`);
    await pageWaits('registered', 'window.state.registered');
    await tab.evaluate(() => window.dial('sip:100@127.0.0.1'));
    const start = await nextEvent(events, (e) => e.type === 'StasisStart', 60_000);
    const channel = start.channel as { id: string; name: string };
    assert.equal((await server.ari(`/channels/${channel.id}/answer`, { method: 'POST' })).status, 204);
    await pageWaits('media connected', "window.state.log.includes('pc connected')");
    // The browser's first packets may beat the exported keys to the worker (they are dropped and counted, as
    // on the main thread when they beat the handshake's end): from now on nothing more may be refused.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const refusedAtStart = sumOf(await metrics(), 'patchbay_sip_srtp_refused_packets_total');
    await waitFor('the WebRTC stream counted on the worker', async () => (sumOf(await metrics(), 'patchbay_media_worker_streams') === 1 ? true : undefined), 20_000);
    // The browser offers Opus first: with it allowed the call is Opus, coded in the worker (media.worker_opus).
    const format = (await (await server.ari(`/channels/${channel.id}/variable?variable=${encodeURIComponent('CHANNEL(audionativeformat)')}`)).json()) as { value: string };
    assert.equal(format.value, allow === 'ulaw' ? 'ulaw' : 'opus');

    // To the browser: a tone, heard by Web Audio in the page (SRTP protected in the worker).
    assert.equal((await server.ari(`/channels/${channel.id}/play?media=${encodeURIComponent('tone:440')}`, { method: 'POST' })).status, 201);
    await pageWaits('the tone heard in the browser', 'window.state.heardHz !== undefined && Math.abs(window.state.heardHz - 440) < 15', 30_000);
    // From the browser: its tone recorded (SRTP checked and decrypted in the worker).
    const record = await server.ari(`/channels/${channel.id}/record?name=webrtc-worker&format=wav&maxDurationSeconds=3`, { method: 'POST' });
    assert.equal(record.status, 201, await record.text());
    await nextEvent(events, (e) => e.type === 'RecordingFinished', 30_000);
    const file = findFile(join(server.dataDir, 'recordings'), 'webrtc-worker.wav');
    assert.ok(file, 'the recording exists');
    const recorded = dominantTone(wavSamples(file), TONE_HZ);
    assert.ok(Math.abs(recorded.frequency - TONE_HZ) < 25, `the browser's tone recorded at ${recorded.frequency.toFixed(1)} Hz`);
    assert.ok(recorded.amplitude > 500, `${TONE_HZ} Hz amplitude ${recorded.amplitude.toFixed(0)}`);
    // SRTCP both ways in the worker: the browser's reports about our stream give a round trip.
    const rtt = await waitFor('a round trip from the browser\'s SRTCP', async () => {
      const statistics = (await (await server.ari(`/channels/${channel.id}/rtp_statistics`)).json()) as { rtt?: number };
      return statistics.rtt !== undefined && statistics.rtt > 0 ? statistics.rtt : undefined;
    }, 30_000);
    assert.ok(rtt < 3, `rtt ${rtt}`);
    assert.equal(sumOf(await metrics(), 'patchbay_sip_srtp_refused_packets_total'), refusedAtStart, 'every packet of the browser authenticated once keyed');

    await pool.kill(0);
    const destroyed = await nextEvent(events, (e) => e.type === 'ChannelDestroyed' && (e.channel as { id?: string } | undefined)?.id === channel.id, 30_000);
    assert.equal(destroyed.cause, 38, 'network out of order, as a plain call whose worker died');
    await pageWaits('the call to end in the browser', 'window.state.ended', 20_000);
  } finally {
    await events.close();
    await browser.close();
    site.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
});
}
