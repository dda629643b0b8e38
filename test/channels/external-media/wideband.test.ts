// Wideband through ARI, end to end over real UDP sockets: three external media channels (slin16,
// slin24 and ulaw) in one mixing bridge. The bridge mixes at 24 kHz (the highest member rate); a
// tone of 1.1 kHz + 6 kHz sent as slin16 RTP reaches the slin24 party with both components, and the
// ulaw (8 kHz) party hears the 1.1 kHz band-limited: nothing above 4 kHz, and no 6 kHz folded
// back to 2 kHz. An AudioSocket channel of format slin16 carries the same audio as 16 kHz 0x12
// messages, a WebSocket media channel of format slin24 as 24 kHz binary frames. Recording a
// wideband call keeps its wideband audio in a wideband format (sln16) and is narrowband in `wav`.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ulawDecode } from '../../../src/media/g711.ts';
import { goertzelPower, powerToAmplitude } from '../../../src/media/goertzel.ts';
import { meanSquare } from '../../../src/media/energy.ts';
import type { TestServer } from '../../helpers/server.ts';
import { EventLog, expectStatus, isEvent, appServerInSuite } from '../../ari/bridges-helpers.ts';
import { decodeSlin, MediaApp } from '../websocket/media-websocket-helpers.ts';

const APP = 'wideband-media';

let server: TestServer;
let log: EventLog;

appServerInSuite(APP, (started) => ({ server, log } = started));

/** An external media server's UDP socket on 127.0.0.1, keeping the payloads of the RTP it receives. */
class RtpPeer {
  readonly payloads: { payloadType: number; payload: Buffer }[] = [];

  private constructor(readonly socket: dgram.Socket) {
    socket.on('message', (message) => {
      if (message.length >= 12) this.payloads.push({ payloadType: message[1] & 0x7f, payload: Buffer.from(message.subarray(12)) });
    });
  }

  static async open(): Promise<RtpPeer> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new RtpPeer(socket);
  }

  get host(): string {
    return `127.0.0.1:${this.socket.address().port}`;
  }

  send(packet: Buffer, port: number): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(packet, port, '127.0.0.1', (error) => (error ? reject(error) : resolve())));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

async function externalMedia(peer: RtpPeer, id: string, format: string): Promise<{ id: string; localPort: number }> {
  const mark = log.mark();
  const params = new URLSearchParams({ app: APP, external_host: peer.host, format, channelId: id });
  const json = await expectStatus(server, `/channels/externalMedia?${params}`, 200);
  await log.waitFor(`StasisStart ${id}`, isEvent('StasisStart', id), mark);
  return { id, localPort: Number(json.channelvars.UNICASTRTP_LOCAL_PORT) };
}

const RATE_16K = 16000;
const AMPLITUDE = 6000;
const LOW = 1100;

/**
 * 1.1 kHz + 6 kHz at 16 kHz (1.1 kHz, not 1 kHz: G.711's own distortion puts harmonics of 1 kHz
 * at 2 kHz, where the 6 kHz would fold), each a whole number of periods per 20 ms, as slin16 RTP (payload type 118, L16 big-endian), paced at 20 ms. */
async function sendWidebandTone(peer: RtpPeer, port: number, packets: number): Promise<void> {
  const perPacket = RATE_16K / 50;
  const start = performance.now();
  for (let i = 0; i < packets; i++) {
    const wait = start + i * 20 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const packet = Buffer.alloc(12 + perPacket * 2);
    packet[0] = 0x80;
    packet[1] = 118;
    packet.writeUInt16BE(i, 2);
    packet.writeUInt32BE(i * perPacket, 4);
    packet.writeUInt32BE(0x16161616, 8);
    for (let n = 0; n < perPacket; n++) {
      const t = (i * perPacket + n) / RATE_16K;
      const sample = AMPLITUDE * Math.sin(2 * Math.PI * LOW * t) + AMPLITUDE * Math.sin(2 * Math.PI * 6000 * t);
      packet.writeInt16BE(Math.round(sample), 12 + n * 2);
    }
    await peer.send(packet, port);
  }
}

/**
 * The decoded blocks that carry the whole tone (their level within 10 % of `rms`), the first and
 * last two dropped (the edges), joined. A loaded machine may make the receive queue stutter (a
 * block half silent); such blocks say nothing of the mix and are left out. Both tones make a whole
 * number of periods in 20 ms, so leaving out whole blocks does not break the sine's phase.
 */
function toneSamples(blocks: readonly Int16Array[], rms: number): Int16Array {
  const loud = blocks.filter((block) => Math.abs(Math.sqrt(meanSquare(block)) - rms) < rms * 0.1).slice(2, -2);
  const out = new Int16Array(loud.reduce((total, block) => total + block.length, 0));
  let at = 0;
  for (const block of loud) {
    out.set(block, at);
    at += block.length;
  }
  return out;
}

/** The level of both tones together, and of the 1.1 kHz alone (what a narrowband party hears). */
const BOTH_RMS = AMPLITUDE;
const LOW_RMS = AMPLITUDE / Math.SQRT2;

/**
 * Waits until the tone heard has stopped growing for `quietMs` (bounded): the bridge's last frames
 * of it come within a few ticks of the last packet on an idle machine, seconds later on a loaded
 * one. (Silence goes on after it, so the count is of the tone's blocks, not of packets.)
 */
async function untilSettled(count: () => number, quietMs = 300, timeoutMs = 10_000): Promise<void> {
  let last = -1;
  let changedAt = Date.now();
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const now = count();
    if (now !== last) [last, changedAt] = [now, Date.now()];
    else if (now > 0 && Date.now() - changedAt >= quietMs) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function amplitudeAt(samples: Int16Array, frequency: number, rate: number): number {
  return powerToAmplitude(goertzelPower(samples, frequency, rate, 0, samples.length));
}

test('slin16, slin24 and ulaw external media in one bridge: 24 kHz mix, 6 kHz reaches slin24, the ulaw party hears it band-limited', async () => {
  const [p16, p24, p8] = await Promise.all([RtpPeer.open(), RtpPeer.open(), RtpPeer.open()]);
  const wide = await externalMedia(p16, 'wb-slin16', 'slin16');
  await externalMedia(p24, 'wb-slin24', 'slin24');
  await externalMedia(p8, 'wb-ulaw', 'ulaw');
  assert.equal((await expectStatus(server, '/channels/wb-slin24/variable?variable=CHANNEL(audionativeformat)', 200, 'GET')).value, 'slin24');
  await expectStatus(server, '/bridges/wb-bridge?type=mixing', 200);
  await expectStatus(server, '/bridges/wb-bridge/addChannel?channel=wb-slin16,wb-slin24,wb-ulaw', 204);

  await sendWidebandTone(p16, wide.localPort, 50);
  const slin24Blocks = (): Int16Array[] =>
    p24.payloads.filter((packet) => packet.payloadType === 123).map(({ payload }) => Int16Array.from({ length: payload.length >> 1 }, (_, i) => payload.readInt16BE(i * 2)));
  const ulawBlocks = (): Int16Array[] =>
    p8.payloads
      .filter((packet) => packet.payloadType === 0)
      .map(({ payload }) => {
        const samples = new Int16Array(payload.length);
        ulawDecode(payload, samples);
        return samples;
      });
  // What the bridge sends back arrives within a few ticks of the last packet (more under load):
  // wait for the tone to stop coming (the parties get silence after it).
  await untilSettled(() => toneSamples(slin24Blocks(), BOTH_RMS).length + toneSamples(ulawBlocks(), LOW_RMS).length);
  assert.equal(server.core.bridges.get('wb-bridge')?.rate, 24000, 'the bridge mixes at the highest member rate');

  // The slin24 party: 20 ms packets of 480 samples, payload type 123, both components at full level.
  const at24 = p24.payloads.filter((packet) => packet.payloadType === 123);
  assert.ok(at24.length > 0 && at24.every((packet) => packet.payload.length === 960), 'slin24 packets of 480 samples');
  const heard24 = toneSamples(slin24Blocks(), BOTH_RMS);
  assert.ok(heard24.length >= 24000 * 0.4, `${heard24.length} samples of tone at 24 kHz`);
  const six24 = amplitudeAt(heard24, 6000, 24000);
  const one24 = amplitudeAt(heard24, LOW, 24000);
  assert.ok(Math.abs(six24 - AMPLITUDE) < AMPLITUDE * 0.05, `6 kHz at 24 kHz: ${six24.toFixed(0)} (sent ${AMPLITUDE})`);
  assert.ok(Math.abs(one24 - AMPLITUDE) < AMPLITUDE * 0.05, `1.1 kHz at 24 kHz: ${one24.toFixed(0)} (sent ${AMPLITUDE})`);

  // The ulaw party: the 1.1 kHz at full level, nothing of the 6 kHz (which would alias to 2 kHz),
  // and the power is all in the 1.1 kHz (nothing else above the noise of G.711).
  const at8 = p8.payloads.filter((packet) => packet.payloadType === 0);
  assert.ok(at8.length > 0 && at8.every((packet) => packet.payload.length === 160), 'ulaw packets of 160 samples');
  const heard8 = toneSamples(ulawBlocks(), LOW_RMS);
  assert.ok(heard8.length >= 8000 * 0.4, `${heard8.length} samples of tone at 8 kHz`);
  const one8 = amplitudeAt(heard8, LOW, 8000);
  const alias = amplitudeAt(heard8, 2000, 8000);
  assert.ok(Math.abs(one8 - AMPLITUDE) < AMPLITUDE * 0.05, `1.1 kHz at 8 kHz: ${one8.toFixed(0)}`);
  assert.ok(alias < AMPLITUDE * 0.01, `6 kHz folded to 2 kHz: ${alias.toFixed(0)}`);
  const toneShare = (one8 * one8) / 2 / meanSquare(heard8);
  assert.ok(toneShare > 0.98, `the 1.1 kHz carries ${(toneShare * 100).toFixed(1)}% of the ulaw party's power`);

  for (const id of ['wb-slin16', 'wb-slin24', 'wb-ulaw']) await expectStatus(server, `/channels/${id}`, 204, 'DELETE');
  await expectStatus(server, '/bridges/wb-bridge', 204, 'DELETE');
  await Promise.all([p16.close(), p24.close(), p8.close()]);
});

/** A one-connection AudioSocket server on 127.0.0.1 keeping the audio messages of one kind. */
async function audioSocketServer(kind: number): Promise<{ host: string; audio: Buffer[]; close(): Promise<void> }> {
  const audio: Buffer[] = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 3 && pending.length >= 3 + pending.readUInt16BE(1)) {
        const length = pending.readUInt16BE(1);
        if (pending[0] === kind) audio.push(Buffer.from(pending.subarray(3, 3 + length)));
        pending = pending.subarray(3 + length);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    host: `127.0.0.1:${port}`,
    audio,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

test('an AudioSocket channel of format slin16 carries 16 kHz audio (0x12 messages of 640 bytes) with its 6 kHz', async () => {
  const p16 = await RtpPeer.open();
  const wide = await externalMedia(p16, 'wb-as-rtp', 'slin16');
  const audioSocket = await audioSocketServer(0x12);
  const mark = log.mark();
  const params = new URLSearchParams({ app: APP, external_host: audioSocket.host, format: 'slin16', encapsulation: 'audiosocket', transport: 'tcp', data: '3e2f1f5a-9c4b-4d2e-8f10-a1b2c3d4e5f6', channelId: 'wb-as' });
  await expectStatus(server, `/channels/externalMedia?${params}`, 200);
  await log.waitFor('StasisStart wb-as', isEvent('StasisStart', 'wb-as'), mark);
  assert.equal((await expectStatus(server, '/channels/wb-as/variable?variable=CHANNEL(audionativeformat)', 200, 'GET')).value, 'slin16');
  await expectStatus(server, '/bridges/wb-as-bridge?type=mixing', 200);
  await expectStatus(server, '/bridges/wb-as-bridge/addChannel?channel=wb-as-rtp,wb-as', 204);

  await sendWidebandTone(p16, wide.localPort, 40);
  const audioSocketBlocks = (): Int16Array[] => audioSocket.audio.map((payload) => Int16Array.from({ length: payload.length / 2 }, (_, i) => payload.readInt16LE(i * 2)));
  await untilSettled(() => toneSamples(audioSocketBlocks(), BOTH_RMS).length);
  assert.ok(audioSocket.audio.length > 0 && audioSocket.audio.every((payload) => payload.length === 640), '0x12 messages of 320 samples');
  const heard = toneSamples(audioSocketBlocks(), BOTH_RMS);
  assert.ok(heard.length >= 16000 * 0.4, `${heard.length} samples of tone at 16 kHz`);
  const six = amplitudeAt(heard, 6000, 16000);
  assert.ok(Math.abs(six - AMPLITUDE) < AMPLITUDE * 0.05, `6 kHz over AudioSocket: ${six.toFixed(0)}`);

  for (const id of ['wb-as-rtp', 'wb-as']) await expectStatus(server, `/channels/${id}`, 204, 'DELETE');
  await expectStatus(server, '/bridges/wb-as-bridge', 204, 'DELETE');
  await p16.close();
  await audioSocket.close();
});

test('a WebSocket media channel of format slin24 carries 24 kHz audio (960-byte frames) with its 6 kHz', async () => {
  const p16 = await RtpPeer.open();
  const wide = await externalMedia(p16, 'wb-ws-rtp', 'slin16');
  const mark = log.mark();
  const params = new URLSearchParams({ app: APP, format: 'slin24', encapsulation: 'none', transport: 'websocket', connection_type: 'server', channelId: 'wb-ws' });
  const created = await expectStatus(server, `/channels/externalMedia?${params}`, 200);
  const app = await MediaApp.connect(server, created.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID);
  await log.waitFor('StasisStart wb-ws', isEvent('StasisStart', 'wb-ws'), mark);
  const start = await app.event('MEDIA_START');
  assert.match(start, /format:slin24/);
  assert.match(start, /optimal_frame_size:960/);
  await expectStatus(server, '/bridges/wb-ws-bridge?type=mixing', 200);
  await expectStatus(server, '/bridges/wb-ws-bridge/addChannel?channel=wb-ws-rtp,wb-ws', 204);

  await sendWidebandTone(p16, wide.localPort, 40);
  await untilSettled(() => toneSamples(app.audio.map((bytes) => decodeSlin(bytes)), BOTH_RMS).length);
  assert.ok(app.audio.length > 0, 'binary audio frames');
  const heard = toneSamples(app.audio.map((bytes) => decodeSlin(bytes)), BOTH_RMS);
  assert.ok(heard.length >= 24000 * 0.4, `${heard.length} samples of tone at 24 kHz`);
  const six = amplitudeAt(heard, 6000, 24000);
  assert.ok(Math.abs(six - AMPLITUDE) < AMPLITUDE * 0.05, `6 kHz over the WebSocket: ${six.toFixed(0)}`);

  for (const id of ['wb-ws-rtp', 'wb-ws']) await expectStatus(server, `/channels/${id}`, 204, 'DELETE');
  await expectStatus(server, '/bridges/wb-ws-bridge', 204, 'DELETE');
  app.close();
  await p16.close();
});

test('recordings of a wideband call: sln16 keeps the 6 kHz, wav (8 kHz, as in Asterisk) keeps the 1.1 kHz only', async () => {
  const [one, two] = await Promise.all([RtpPeer.open(), RtpPeer.open()]);
  const wide = await externalMedia(one, 'wb-rec16', 'slin16');
  const narrowed = await externalMedia(two, 'wb-rec8', 'slin16');
  await expectStatus(server, '/channels/wb-rec16/record?name=wb-channel16&format=sln16', 201);
  await expectStatus(server, '/channels/wb-rec8/record?name=wb-channel8&format=wav', 201);

  await Promise.all([sendWidebandTone(one, wide.localPort, 40), sendWidebandTone(two, narrowed.localPort, 40)]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (const name of ['wb-channel16', 'wb-channel8']) {
    const mark = log.mark();
    await expectStatus(server, `/recordings/live/${name}/stop`, 204);
    await log.waitFor(`RecordingFinished ${name}`, (event) => event.type === 'RecordingFinished' && event.recording?.name === name, mark);
  }
  const recordings = server.config.dirs.recordings;
  const raw = readFileSync(join(recordings, 'wb-channel16.sln16'));
  const blocks16: Int16Array[] = [];
  for (let at = 0; at + 640 <= raw.length; at += 640) blocks16.push(Int16Array.from({ length: 320 }, (_, i) => raw.readInt16LE(at + i * 2)));
  const heard16 = toneSamples(blocks16, BOTH_RMS);
  assert.ok(heard16.length >= 16000 * 0.4, `${heard16.length} samples of tone in the sln16 file`);
  assert.ok(Math.abs(amplitudeAt(heard16, 6000, 16000) - AMPLITUDE) < AMPLITUDE * 0.05, `6 kHz in sln16: ${amplitudeAt(heard16, 6000, 16000).toFixed(0)}`);

  const wav = readFileSync(join(recordings, 'wb-channel8.wav'));
  assert.equal(wav.readUInt32LE(24), 8000, 'wav is 8 kHz');
  const data = wav.indexOf('data', 12, 'latin1');
  const pcm = wav.subarray(data + 8);
  const blocks8: Int16Array[] = [];
  for (let at = 0; at + 320 <= pcm.length; at += 320) blocks8.push(Int16Array.from({ length: 160 }, (_, i) => pcm.readInt16LE(at + i * 2)));
  const heard8 = toneSamples(blocks8, LOW_RMS);
  assert.ok(heard8.length >= 8000 * 0.4, `${heard8.length} samples of tone in the wav file`);
  assert.ok(Math.abs(amplitudeAt(heard8, LOW, 8000) - AMPLITUDE) < AMPLITUDE * 0.05, `1.1 kHz in wav: ${amplitudeAt(heard8, LOW, 8000).toFixed(0)}`);
  assert.ok(amplitudeAt(heard8, 2000, 8000) < AMPLITUDE * 0.01, `6 kHz folded to 2 kHz in wav: ${amplitudeAt(heard8, 2000, 8000).toFixed(0)}`);

  for (const id of ['wb-rec16', 'wb-rec8']) await expectStatus(server, `/channels/${id}`, 204, 'DELETE');
  await Promise.all([one.close(), two.close()]);
});
