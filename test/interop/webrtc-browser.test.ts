// A browser as a phone: headless Chromium (Debian's, driven by playwright-core) loads a page served
// here with the npm JsSIP client, registers over SIP over WebSocket (/ws), and calls 100 with its
// fake microphone playing a 1000 Hz tone file. The call is WebRTC end to end: ICE-lite checks,
// DTLS-SRTP, rtcp-mux, BUNDLE, SAVPF, Opus (G.711 beside it). The app answers and records: the recording has the
// tone's frequency, and SRTCP both ways gives a round-trip time. Then an ARI originate calls the
// browser, the page answers and measures what it hears with Web Audio; and the browser is bridged
// with a baresip phone, audio checked both ways.
// Skipped with a message when Chromium (or, for the bridge, baresip) is not installed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { ctrl, HAVE_BARESIP, waitFor, writeBaresipHome } from '../helpers/baresip.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { browserPjsipConf, CHROMIUM, chromiumArgs, jssipBundle, jssipPage, type PageState, writeBrowserTone } from '../helpers/jssip-browser.ts';

const TONE_HZ = 1000;

async function nextEvent(events: EventSocket, type: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Record<string, unknown>;
    if (event.type === type) return event;
  }
  throw new Error(`no ${type}`);
}

const SKIP = existsSync(CHROMIUM) ? false : 'Chromium is not installed (Debian package chromium)';

let work: string;
let server: TestServer;
let site: http.Server;
let browser: Browser;
let tab: Page;
let events: EventSocket;

const pageState = (): Promise<PageState> => tab.evaluate(() => window.state);
async function pageWaits(what: string, predicate: string, timeoutMs = 30_000): Promise<void> {
  await tab.waitForFunction(predicate, undefined, { timeout: timeoutMs }).catch(async (error: unknown) => {
    const notes = server.logLines.filter((line) => /WebRTC|DTLS|"level":50/i.test(line)).slice(-5).join('');
    throw new Error(`${what}: ${String(error)}; page: ${JSON.stringify(await pageState())}; server: ${notes}`);
  });
}

before(async () => {
  if (SKIP) return;
  work = mkdtempSync(join(tmpdir(), 'patchbay-webrtc-'));
  const tone = writeBrowserTone(work, TONE_HZ);
  const conf = join(work, 'pjsip.conf');
  // docs/webrtc.md's configuration (and a UDP transport beside it).
  writeFileSync(
    conf,
    [...browserPjsipConf(),
      // A SIP phone (baresip) for the bridge test, dialled by its URI.
      '[baresip]', 'type=endpoint', 'context=webrtc-in', 'allow=ulaw', ''].join('\n'),
  );
  const dialplan = join(work, 'extensions.conf');
  writeFileSync(dialplan, '[webrtc-in]\nexten => 100,1,Stasis(webrtc)\n');
  server = await startTestServer({ sip: { pjsip_conf: conf }, dialplan: { file: dialplan } });
  const bundle = await jssipBundle();
  const wsUrl = `${server.url.replace('http', 'ws')}/ws`;
  site = http.createServer((request, response) => {
    if (request.url === '/jssip.js') return void response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
    response.writeHead(200, { 'Content-Type': 'text/html' }).end(jssipPage(wsUrl));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: chromiumArgs(tone),
  });
  events = await server.events('app=webrtc');
  tab = await browser.newPage();
  await tab.goto(`http://127.0.0.1:${(site.address() as { port: number }).port}/`);
  await pageWaits('registered', 'window.state.registered');
});

after(async () => {
  if (SKIP) return;
  await events?.close();
  await browser?.close();
  site?.close();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('a browser (JsSIP in Chromium) registers over WebSocket with digest and calls in over WebRTC: the recording has its tone', { timeout: 120_000, skip: SKIP }, async () => {
  assert.equal(server.core.pjsip.contacts().filter((contact) => contact.aor === 'browser').length, 1);
  const started = performance.now();
  await tab.evaluate(() => window.dial('sip:100@127.0.0.1'));
  const start = await nextEvent(events, 'StasisStart');
  const channel = start.channel as { id: string; name: string };
  assert.match(channel.name, /^PJSIP\/browser-/);
  assert.equal((await server.ari(`/channels/${channel.id}/answer`, { method: 'POST' })).status, 204);
  await pageWaits('media connected', "window.state.log.includes('pc connected')");
  const setupMs = performance.now() - started;
  // The browser offers Opus first and the endpoint allows it: the call is wideband.
  const format = (await (await server.ari(`/channels/${channel.id}/variable?variable=${encodeURIComponent('CHANNEL(audionativeformat)')}`)).json()) as { value: string };
  assert.equal(format.value, 'opus');

  // Media both ways while it records: a tone to the browser (its reports about our stream give the round trip).
  assert.equal((await server.ari(`/channels/${channel.id}/play?media=${encodeURIComponent('tone:440')}`, { method: 'POST' })).status, 201);
  // CPU of this process (server and test) while the call's media runs and is recorded: the per-call figure.
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const record = await server.ari(`/channels/${channel.id}/record?name=webrtc-browser&format=wav&maxDurationSeconds=3`, { method: 'POST' });
  assert.equal(record.status, 201, await record.text());
  await nextEvent(events, 'RecordingFinished');
  const cpu = process.cpuUsage(cpuBefore);
  const cpuShare = (cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore);
  const wav = Buffer.from(await (await server.ari('/recordings/stored/webrtc-browser/file')).arrayBuffer());
  const { frequency, rms } = toneOf(wav);
  assert.ok(rms > 500, 'the recording has sound');
  assert.ok(Math.abs(frequency - TONE_HZ) < 25, `the browser's tone recorded at ${frequency.toFixed(1)} Hz`);
  // SRTCP both ways: the browser's reports about our stream come back with a round-trip time (on
  // loopback; a bound of seconds only rejects garbage — at load 16 a browser's report took 0.503 s).
  const deadline = Date.now() + 20_000;
  let statistics: { rtt?: number; rxcount?: number; txcount?: number } = {};
  while (Date.now() < deadline && !(statistics.rtt && statistics.rtt > 0)) {
    statistics = (await (await server.ari(`/channels/${channel.id}/rtp_statistics`)).json()) as typeof statistics;
    if (!(statistics.rtt && statistics.rtt > 0)) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.ok((statistics.rxcount ?? 0) > 100 && (statistics.txcount ?? 0) > 100, JSON.stringify(statistics));
  assert.ok(statistics.rtt !== undefined && statistics.rtt > 0 && statistics.rtt < 3, `a round trip from the browser's RTCP: ${JSON.stringify(statistics)}`);
  // Figures for docs/webrtc.md, measured on a loaded 2-core machine.
  console.log(`webrtc: call set-up (dial to DTLS-SRTP connected) ${Math.round(setupMs)} ms; CPU while recording the call ${(cpuShare * 100).toFixed(1)} % of one core`);
  assert.equal((await server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
  await pageWaits('the call to end', 'window.state.ended', 20_000);
});

test('an ARI originate calls the browser, which answers; Web Audio in the page hears the tone played to it', { timeout: 120_000, skip: SKIP }, async () => {
  const created = await server.ari('/channels?endpoint=PJSIP/browser&app=webrtc', { method: 'POST' });
  const body = await created.text();
  assert.equal(created.status, 200, body);
  const channel = JSON.parse(body) as { id: string };
  await nextEvent(events, 'StasisStart');
  await pageWaits('media connected', "window.state.incoming === 1 && window.state.log.filter((line) => line === 'pc connected').length >= 2");
  assert.equal((await server.ari(`/channels/${channel.id}/play?media=${encodeURIComponent('tone:440')}`, { method: 'POST' })).status, 201);
  await pageWaits('the tone heard', 'window.state.heardHz !== undefined && Math.abs(window.state.heardHz - 440) < 15', 20_000);
  assert.equal((await server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
  await pageWaits('the call to end', 'window.state.ended', 20_000);
});

test(
  'a browser and a SIP phone (baresip) bridged: the browser hears the phone, the phone is sent the browser',
  { timeout: 120_000, skip: SKIP || (HAVE_BARESIP ? false : 'baresip is not installed (Debian package baresip)') },
  async () => {
    const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
    const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort });
    writeFileSync(join(home, 'accounts'), `<sip:baresip@127.0.0.1:${server.core.pjsip.port};transport=udp>;regint=0;answermode=auto;audio_codecs=PCMU\n`);
    const phone = spawn('baresip', ['-f', home], { cwd: work, stdio: ['ignore', 'ignore', 'ignore'] });
    try {
      await waitFor('baresip', () => ctrl(ctrlPort, 'reginfo', '').catch(() => undefined));
      await tab.evaluate(() => window.dial('sip:100@127.0.0.1'));
      const browserChannel = (await nextEvent(events, 'StasisStart')).channel as { id: string };
      assert.equal((await server.ari(`/channels/${browserChannel.id}/answer`, { method: 'POST' })).status, 204);
      const dialled = await server.ari(`/channels?endpoint=${encodeURIComponent(`PJSIP/baresip/sip:baresip@127.0.0.1:${phonePort}`)}&app=webrtc`, { method: 'POST' });
      const dialledBody = await dialled.text();
      assert.equal(dialled.status, 200, dialledBody);
      const phoneChannel = JSON.parse(dialledBody) as { id: string };
      await nextEvent(events, 'StasisStart');
      const bridge = JSON.parse(await (await server.ari('/bridges?type=mixing', { method: 'POST' })).text()) as { id: string };
      assert.equal((await server.ari(`/bridges/${bridge.id}/addChannel?channel=${browserChannel.id},${phoneChannel.id}`, { method: 'POST' })).status, 204);
      await pageWaits('media connected', "window.state.confirmed && window.state.log.filter((line) => line === 'pc connected').length >= 3");

      // Phone to browser: baresip's 440 Hz, heard by Web Audio in the page.
      await pageWaits("the phone's tone heard in the browser", 'window.state.heardHz !== undefined && Math.abs(window.state.heardHz - 440) < 15', 20_000);
      // Browser to phone: what Patchbay sends baresip (a snoop on its channel, spying out) is the browser's 1000 Hz.
      const snoop = await server.ari(`/channels/${phoneChannel.id}/snoop?spy=out&app=webrtc`, { method: 'POST' });
      const snoopBody = await snoop.text();
      assert.equal(snoop.status, 200, snoopBody);
      const snoopChannel = JSON.parse(snoopBody) as { id: string };
      const record = await server.ari(`/channels/${snoopChannel.id}/record?name=webrtc-to-phone&format=wav&maxDurationSeconds=3`, { method: 'POST' });
      assert.equal(record.status, 201, await record.text());
      await nextEvent(events, 'RecordingFinished');
      const { frequency, rms } = toneOf(Buffer.from(await (await server.ari('/recordings/stored/webrtc-to-phone/file')).arrayBuffer()));
      assert.ok(rms > 500, 'the phone is sent sound');
      assert.ok(Math.abs(frequency - TONE_HZ) < 25, `the phone is sent the browser's tone: ${frequency.toFixed(1)} Hz`);
      for (const id of [snoopChannel.id, phoneChannel.id, browserChannel.id]) await server.ari(`/channels/${id}`, { method: 'DELETE' });
      await pageWaits('the call to end', 'window.state.ended', 20_000);
    } finally {
      phone.kill('SIGTERM');
    }
  },
);

/** The dominant frequency (zero crossings) and level of a PCM16 WAV's audio after its first 200 ms. */
function toneOf(wav: Buffer): { frequency: number; rms: number } {
  const data = wav.indexOf('data');
  assert.ok(data > 0, 'a WAV file');
  const samples = new Int16Array((wav.length - data - 8) >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(data + 8 + i * 2);
  const loud = samples.subarray(1600);
  // The frequency is counted over the 20 ms windows that carry sound: a starved browser or machine
  // leaves gaps of silence in what it sent, which would lower a count over the whole recording
  // without the tone itself being any other.
  const WINDOW = 160;
  let crossings = 0;
  let energy = 0;
  let soundingSamples = 0;
  for (let start = 0; start + WINDOW <= loud.length; start += WINDOW) {
    let windowEnergy = 0;
    let windowCrossings = 0;
    for (let i = start; i < start + WINDOW; i++) {
      windowEnergy += loud[i]! * loud[i]!;
      if (i > start && loud[i - 1]! < 0 !== loud[i]! < 0) windowCrossings++;
    }
    energy += windowEnergy;
    if (Math.sqrt(windowEnergy / WINDOW) < 300) continue;
    crossings += windowCrossings;
    soundingSamples += WINDOW - 1;
  }
  const frequency = soundingSamples === 0 ? 0 : (crossings / 2) * (8000 / soundingSamples);
  return { frequency, rms: Math.sqrt(energy / loud.length) };
}
