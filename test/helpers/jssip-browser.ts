// A browser as a SIP phone for the tests: the npm JsSIP client bundled for a page that registers
// over SIP over WebSocket, answers every call at once, dials on request and measures what it hears
// with Web Audio (the loudest FFT bin); driven in Debian's headless Chromium through playwright-core.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';

export const CHROMIUM = '/usr/bin/chromium';

/** Chromium's flags for a fake microphone playing `toneFile` and no prompts. */
export function chromiumArgs(toneFile: string): string[] {
  return [
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-audio-capture=${toneFile}`,
    '--disable-features=WebRtcHideLocalIpsWithMdns',
    '--autoplay-policy=no-user-gesture-required',
    '--no-sandbox',
  ];
}

/** Writes `tone.wav` in `work` (60 s of `hz` at 48 kHz, for Chromium's fake microphone) with sox; returns its path. */
export function writeBrowserTone(work: string, hz: number): string {
  const tone = join(work, 'tone.wav');
  execFileSync('sox', ['-n', '-r', '48000', '-c', '1', '-b', '16', tone, 'synth', '60', 'sine', String(hz), 'vol', '0.5']);
  return tone;
}

/**
 * pjsip.conf lines of docs/webrtc.md's configuration: a UDP and a WebSocket transport, and the
 * `browser` endpoint (WebRTC, `allow`) registering with digest (the page's password) into webrtc-in.
 */
export function browserPjsipConf(allow = 'opus,ulaw'): string[] {
  return ['[udp]', 'type=transport', 'protocol=udp', 'bind=127.0.0.1:0', '', '[ws]', 'type=transport', 'protocol=ws', '',
    '[browser]', 'type=endpoint', 'context=webrtc-in', `allow=${allow}`, 'aors=browser', 'auth=browser', 'webrtc=yes', '',
    '[browser]', 'type=aor', 'max_contacts=1', 'remove_existing=yes', '',
    '[browser]', 'type=auth', 'username=browser', 'password=browser-secret', ''];
}

/** JsSIP (CommonJS) bundled for the page as the global `JsSIP`. */
export async function jssipBundle(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('jssip');
  const result = await build({ entryPoints: [entry], bundle: true, format: 'iife', globalName: 'JsSIP', platform: 'browser', write: false, logLevel: 'silent' });
  return result.outputFiles[0]!.text;
}

export function jssipPage(wsUrl: string, uri = 'sip:browser@127.0.0.1', password = 'browser-secret'): string {
  return `<!doctype html><meta charset="utf-8"><title>patchbay webrtc</title><script src="/jssip.js"></script>
<script>
window.state = { registered: false, confirmed: false, ended: false, incoming: 0, heardHz: undefined, log: [] };
const ua = new JsSIP.UA({ sockets: [new JsSIP.WebSocketInterface(${JSON.stringify(wsUrl)})], uri: ${JSON.stringify(uri)}, password: ${JSON.stringify(password)}, register: true });
ua.on('registered', () => { window.state.registered = true; });
ua.on('registrationFailed', (e) => window.state.log.push('registration failed ' + e.cause));
// Every call: its state, and what it hears measured with Web Audio (the loudest FFT bin).
function watch(session) {
  window.state.confirmed = false;
  window.state.ended = false;
  window.state.heardHz = undefined;
  session.on('confirmed', () => { window.state.confirmed = true; });
  session.on('failed', (e) => { window.state.log.push('failed ' + e.cause); window.state.ended = true; });
  session.on('ended', () => { window.state.ended = true; });
  session.on('peerconnection', ({ peerconnection }) => listen(peerconnection));
  if (session.connection) listen(session.connection);
}
function listen(connection) {
  connection.addEventListener('connectionstatechange', () => window.state.log.push('pc ' + connection.connectionState));
  connection.addEventListener('track', (event) => {
    const stream = event.streams[0] || new MediaStream([event.track]);
    // Chrome feeds a remote track to Web Audio only while a media element plays it.
    const element = new Audio(); element.muted = true; element.srcObject = stream; element.play().catch(() => undefined);
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    analyser.fftSize = 8192;
    context.createMediaStreamSource(stream).connect(analyser);
    const bins = new Float32Array(analyser.frequencyBinCount);
    const timer = setInterval(() => {
      analyser.getFloatFrequencyData(bins);
      let best = 1;
      for (let i = 2; i < bins.length; i++) if (bins[i] > bins[best]) best = i;
      if (bins[best] > -60) window.state.heardHz = best * context.sampleRate / analyser.fftSize;
      if (window.state.ended) { clearInterval(timer); context.close(); }
    }, 250);
  });
}
window.dial = (target) => {
  const session = ua.call(target, { mediaConstraints: { audio: true, video: false }, pcConfig: { iceServers: [] } });
  watch(session);
};
// A call from the server: answered at once.
ua.on('newRTCSession', ({ session, originator }) => {
  if (originator !== 'remote') return;
  window.state.incoming += 1;
  watch(session);
  session.answer({ mediaConstraints: { audio: true, video: false }, pcConfig: { iceServers: [] } });
});
ua.start();
</script>`;
}

export interface PageState {
  registered: boolean;
  confirmed: boolean;
  ended: boolean;
  incoming: number;
  heardHz?: number;
  log: string[];
}

// What the page's script defines, as the functions evaluated in it see the window.
declare global {
  interface Window {
    state: PageState;
    dial(target: string): void;
  }
}

