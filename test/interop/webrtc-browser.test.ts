// A browser as a phone: headless Chromium (Debian's, driven by playwright-core) loads a page served
// here with the npm JsSIP client, registers over SIP over WebSocket (/ws), and calls 100 with its
// fake microphone playing a 1000 Hz tone file. The call is WebRTC end to end: ICE-lite checks,
// DTLS-SRTP, rtcp-mux, BUNDLE, SAVPF, G.711. The app answers and records: the recording has the
// tone's frequency. Skipped with a message when Chromium is not installed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { startTestServer, type EventSocket } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const TONE_HZ = 1000;

/** JsSIP (CommonJS) bundled for the page as the global `JsSIP`. */
async function jssipBundle(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('jssip');
  const result = await build({ entryPoints: [entry], bundle: true, format: 'iife', globalName: 'JsSIP', platform: 'browser', write: false, logLevel: 'silent' });
  return result.outputFiles[0]!.text;
}

function page(wsUrl: string): string {
  return `<!doctype html><meta charset="utf-8"><title>patchbay webrtc</title><script src="/jssip.js"></script>
<script>
window.state = { registered: false, confirmed: false, ended: false, log: [] };
const ua = new JsSIP.UA({ sockets: [new JsSIP.WebSocketInterface(${JSON.stringify(wsUrl)})], uri: 'sip:browser@127.0.0.1', register: true });
ua.on('registered', () => { window.state.registered = true; });
ua.on('registrationFailed', (e) => window.state.log.push('registration failed ' + e.cause));
window.dial = (target) => {
  const session = ua.call(target, { mediaConstraints: { audio: true, video: false }, pcConfig: { iceServers: [] } });
  session.on('confirmed', () => { window.state.confirmed = true; });
  session.on('failed', (e) => { window.state.log.push('failed ' + e.cause); window.state.ended = true; });
  session.on('ended', () => { window.state.ended = true; });
  session.connection.addEventListener('iceconnectionstatechange', () => window.state.log.push('ice ' + session.connection.iceConnectionState));
  session.connection.addEventListener('connectionstatechange', () => window.state.log.push('pc ' + session.connection.connectionState));
};
ua.start();
</script>`;
}

async function nextEvent(events: EventSocket, type: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Record<string, unknown>;
    if (event.type === type) return event;
  }
  throw new Error(`no ${type}`);
}

test(
  'a browser (JsSIP in Chromium) registers over WebSocket and calls in over WebRTC: the recording has its tone',
  { timeout: 150_000, skip: existsSync(CHROMIUM) ? false : 'Chromium is not installed (Debian package chromium)' },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-webrtc-'));
    const tone = join(work, 'tone.wav');
    execFileSync('sox', ['-n', '-r', '48000', '-c', '1', '-b', '16', tone, 'synth', '30', 'sine', String(TONE_HZ), 'vol', '0.5']);
    const conf = join(work, 'pjsip.conf');
    writeFileSync(
      conf,
      ['[udp]', 'type=transport', 'protocol=udp', 'bind=127.0.0.1:0', '', '[ws]', 'type=transport', 'protocol=ws', '',
        '[browser]', 'type=endpoint', 'context=webrtc-in', 'allow=ulaw', 'aors=browser', 'webrtc=yes', '',
        '[browser]', 'type=aor', 'max_contacts=1', 'remove_existing=yes', ''].join('\n'),
    );
    const dialplan = join(work, 'extensions.conf');
    writeFileSync(dialplan, '[webrtc-in]\nexten => 100,1,Stasis(webrtc)\n');
    const server = await startTestServer({ sip: { pjsip_conf: conf }, dialplan: { file: dialplan } });
    const bundle = await jssipBundle();
    const wsUrl = `${server.url.replace('http', 'ws')}/ws`;
    const site = http.createServer((request, response) => {
      if (request.url === '/jssip.js') return void response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
      response.writeHead(200, { 'Content-Type': 'text/html' }).end(page(wsUrl));
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
    const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${tone}`, '--disable-features=WebRtcHideLocalIpsWithMdns', '--no-sandbox'],
    });
    const events = await server.events('app=webrtc');
    try {
      const tab = await browser.newPage();
      const logs: string[] = [];
      tab.on('console', (message) => logs.push(message.text()));
      await tab.goto(siteUrl);
      await tab.waitForFunction(() => (window as unknown as { state: { registered: boolean } }).state.registered, undefined, { timeout: 30_000 });
      assert.equal(server.core.pjsip.contacts().filter((contact) => contact.aor === 'browser').length, 1);

      const started = performance.now();
      await tab.evaluate(() => (window as unknown as { dial(target: string): void }).dial('sip:100@127.0.0.1'));
      const start = await nextEvent(events, 'StasisStart');
      const channel = start.channel as { id: string };
      assert.equal((await server.ari(`/channels/${channel.id}/answer`, { method: 'POST' })).status, 204);
      await tab.waitForFunction(() => (window as unknown as { state: { log: string[] } }).state.log.includes('pc connected'), undefined, { timeout: 30_000 }).catch(async (error: unknown) => {
        throw new Error(`${String(error)}; page: ${JSON.stringify(await tab.evaluate(() => (window as unknown as { state: unknown }).state))}; server: ${server.logLines.filter((line) => /WebRTC|DTLS|error/i.test(line)).slice(-5).join('')}`);
      });
      const setupMs = performance.now() - started;

      // CPU of this process (server and test) while the call's media runs and is recorded: the per-call figure.
      const cpuBefore = process.cpuUsage();
      const wallBefore = performance.now();
      const record = await server.ari(`/channels/${channel.id}/record?name=webrtc-browser&format=wav&maxDurationSeconds=3`, { method: 'POST' });
      assert.equal(record.status, 201, await record.text());
      await nextEvent(events, 'RecordingFinished');
      const cpu = process.cpuUsage(cpuBefore);
      const cpuShare = (cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore);
      const wav = Buffer.from(await (await server.ari('/recordings/stored/webrtc-browser/file')).arrayBuffer());
      const data = wav.indexOf('data');
      assert.ok(data > 0, 'a WAV file');
      const samples = new Int16Array((wav.length - data - 8) >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(data + 8 + i * 2);
      const loud = samples.subarray(1600);
      let crossings = 0;
      let energy = 0;
      for (let i = 1; i < loud.length; i++) {
        if (loud[i - 1]! < 0 !== loud[i]! < 0) crossings++;
        energy += loud[i]! * loud[i]!;
      }
      const frequency = (crossings / 2) * (8000 / loud.length);
      assert.ok(Math.sqrt(energy / loud.length) > 500, 'the recording has sound');
      assert.ok(Math.abs(frequency - TONE_HZ) < 25, `the browser's tone recorded at ${frequency.toFixed(1)} Hz`);
      // One figure for docs/webrtc.md: INVITE to media secured (ICE, DTLS) on a loaded 2-core machine.
      console.log(`webrtc: call set-up (dial to DTLS-SRTP connected) ${Math.round(setupMs)} ms; CPU while recording the call ${(cpuShare * 100).toFixed(1)} % of one core`);
      await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
      await tab.waitForFunction(() => (window as unknown as { state: { ended: boolean } }).state.ended, undefined, { timeout: 20_000 });
    } finally {
      events.close();
      await browser.close();
      site.close();
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
