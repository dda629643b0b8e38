// @ts-check
// Listening in from the web console: media over WebSocket joined to a snoop of a channel or to a
// bridge, measured for the level meters and played through Web Audio.
import { ari } from './ari.js';
import { LISTEN_FORMAT, LISTEN_RATE, randomId, SILENCE_THRESHOLD, state } from './state.js';

/** @type {AudioContext | null} */
let audioContext = null;

/** Figures of every listen-in, for the page's meters and for tests. */
export function listenStats() {
  return [...state.listens.entries()].map(([key, l]) => ({ key, ...l.stats, level: l.level }));
}

function waitForStasis(channelId, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      state.stasisWaiters.delete(channelId);
      reject(new Error('the listen-in channel did not start'));
    }, timeoutMs);
    state.stasisWaiters.set(channelId, () => {
      clearTimeout(timer);
      state.stasisWaiters.delete(channelId);
      resolve(undefined);
    });
  });
}

/**
 * Listens to a channel (a snoop channel spying both ways, bridged with a media WebSocket channel)
 * or a bridge (the media WebSocket channel joins it and hears its mix). The audio arrives as
 * 16-bit 8 kHz frames, is measured for the level meter and played through Web Audio.
 */
export async function listen(kind, targetId, changed) {
  const key = `${kind}:${targetId}`;
  if (state.listens.has(key)) return;
  audioContext ??= new AudioContext();
  await audioContext.resume().catch(() => {});
  const listenState = { key, level: 0, stats: { messages: 0, samples: 0, nonSilentSamples: 0, peak: 0 }, stop: () => {} };
  state.listens.set(key, listenState);
  changed();
  const cleanups = [];
  let stopped = false;
  listenState.stop = () => {
    if (stopped) return;
    stopped = true;
    state.listens.delete(key);
    for (const cleanup of cleanups.reverse()) cleanup();
    changed();
  };
  try {
    const media = await ari('POST', 'channels/externalMedia', {
      app: state.app,
      transport: 'websocket',
      encapsulation: 'none',
      connection_type: 'server',
      format: LISTEN_FORMAT,
      direction: 'in',
    });
    state.own.add(media.id);
    cleanups.push(() => ari('DELETE', `channels/${encodeURIComponent(media.id)}`).catch(() => {}));
    const connectionId = media.channelvars?.MEDIA_WEBSOCKET_CONNECTION_ID;
    if (!connectionId) throw new Error('the server gave no media connection id');
    const started = waitForStasis(media.id, 10000);
    const url = new URL(`media/${encodeURIComponent(connectionId)}`, location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    // /media/ asks for a read-write user's credentials besides the id; a browser WebSocket sends no headers.
    url.searchParams.set('api_key', `${state.user}:${state.password}`);
    const socket = new WebSocket(url, 'media');
    socket.binaryType = 'arraybuffer';
    cleanups.push(() => socket.close());
    const output = audioContext.createGain();
    output.connect(audioContext.destination);
    cleanups.push(() => output.disconnect());
    let playAt = 0;
    socket.onmessage = (message) => {
      if (!(message.data instanceof ArrayBuffer)) return;
      const samples = new Int16Array(message.data, 0, message.data.byteLength >> 1);
      let sumSquares = 0;
      let peak = 0;
      let nonSilent = 0;
      const floats = new Float32Array(samples.length);
      for (let i = 0; i < samples.length; i++) {
        const s = samples[i];
        const magnitude = s < 0 ? -s : s;
        if (magnitude > peak) peak = magnitude;
        if (magnitude > SILENCE_THRESHOLD) nonSilent++;
        sumSquares += s * s;
        floats[i] = s / 32768;
      }
      const stats = listenState.stats;
      stats.messages++;
      stats.samples += samples.length;
      stats.nonSilentSamples += nonSilent;
      stats.peak = Math.max(stats.peak, peak);
      // The meter shows RMS on a 60 dB scale, falling back slowly like a VU meter.
      const rms = Math.sqrt(sumSquares / Math.max(1, samples.length)) / 32768;
      const db = rms > 0 ? 20 * Math.log10(rms) : -90;
      const level = Math.max(0, Math.min(1, (db + 60) / 60));
      listenState.level = Math.max(level, listenState.level * 0.85);
      const node = document.querySelector(`meter[data-meter="${CSS.escape(key)}"]`);
      if (node) /** @type {HTMLMeterElement} */ (node).value = listenState.level;
      if (!audioContext || samples.length === 0) return;
      const buffer = audioContext.createBuffer(1, samples.length, LISTEN_RATE);
      buffer.copyToChannel(floats, 0);
      const source = audioContext.createBufferSource();
      source.buffer = buffer;
      source.connect(output);
      // A little latency absorbs network jitter; fall back to "now" after a gap.
      const now = audioContext.currentTime;
      if (playAt < now + 0.02 || playAt > now + 1) playAt = now + 0.1;
      source.start(playAt);
      playAt += buffer.duration;
    };
    socket.onclose = () => listenState.stop();
    await started;
    if (stopped) return;
    if (kind === 'channel') {
      const snoop = await ari('POST', `channels/${encodeURIComponent(targetId)}/snoop`, { app: state.app, spy: 'both' });
      state.own.add(snoop.id);
      cleanups.push(() => ari('DELETE', `channels/${encodeURIComponent(snoop.id)}`).catch(() => {}));
      const bridge = await ari('POST', 'bridges', { type: 'mixing', name: `console-listen-${randomId().slice(0, 6)}` });
      state.own.add(bridge.id);
      cleanups.push(() => ari('DELETE', `bridges/${encodeURIComponent(bridge.id)}`).catch(() => {}));
      await ari('POST', `bridges/${encodeURIComponent(bridge.id)}/addChannel`, { channel: `${snoop.id},${media.id}` });
    } else {
      await ari('POST', `bridges/${encodeURIComponent(targetId)}/addChannel`, { channel: media.id });
    }
  } catch (err) {
    listenState.stop();
    throw err;
  }
}
