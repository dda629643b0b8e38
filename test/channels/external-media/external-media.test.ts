// External media over RTP/UDP (POST /channels/externalMedia): the test plays the external media
// server with real UDP sockets. A UnicastRTP channel bridged with a Local call carries RTP from the
// test's socket to the Local call's far end, and the Local party's audio back as RTP packets whose
// headers and payload are checked; RTP statistics, the parameter rules, and the socket's life
// (closed on hangup and on shutdown) are checked on the wire and in the core.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, test } from 'node:test';
import { alawEncode, ulawDecode, ulawEncode } from '../../../src/media/g711.ts';
import { goertzelPower, powerToAmplitude } from '../../../src/media/goertzel.ts';
import { meanSquare } from '../../../src/media/energy.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { call, capture, EventLog, expectStatus, finish, isEvent, localCall, measure, appServerInSuite, ticks, toneWriter } from '../../ari/bridges-helpers.ts';
import { bridgeWithLocal, endBridged, hangupIfUp, toneBlocks, toneOutThenLeave, waitUntil, type BridgedExternal } from './external-media-helpers.ts';

const APP = 'ext-media';

let server: TestServer;
let log: EventLog;

appServerInSuite(APP, (started) => ({ server, log } = started));

// ---- the external media server ------------------------------------------------------------------

interface RtpPacket {
  readonly version: number;
  readonly marker: boolean;
  readonly payloadType: number;
  readonly sequence: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly payload: Buffer;
  readonly fromPort: number;
}

function rtpPacket(payloadType: number, sequence: number, timestamp: number, ssrc: number, payload: Uint8Array, marker = false): Buffer {
  const packet = Buffer.alloc(12 + payload.length);
  packet[0] = 0x80;
  packet[1] = (marker ? 0x80 : 0) | payloadType;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE(timestamp >>> 0, 4);
  packet.writeUInt32BE(ssrc >>> 0, 8);
  packet.set(payload, 12);
  return packet;
}

/** A UDP socket on 127.0.0.1 that records the RTP packets it receives. */
class RtpPeer {
  readonly packets: RtpPacket[] = [];

  private constructor(readonly socket: dgram.Socket) {
    socket.on('message', (message, rinfo) => {
      this.packets.push({
        version: message[0] >> 6,
        marker: (message[1] & 0x80) !== 0,
        payloadType: message[1] & 0x7f,
        sequence: message.readUInt16BE(2),
        timestamp: message.readUInt32BE(4),
        ssrc: message.readUInt32BE(8),
        payload: Buffer.from(message.subarray(12)),
        fromPort: rinfo.port,
      });
    });
  }

  static async open(): Promise<RtpPeer> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new RtpPeer(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  send(packet: Buffer, port: number): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(packet, port, '127.0.0.1', (error) => (error ? reject(error) : resolve())));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

interface ToneStream {
  readonly rate: 8000 | 16000;
  readonly packetMs: number;
  readonly packets: number;
  readonly frequency: number;
  readonly amplitude: number;
  readonly payloadType: number;
  readonly encode: (samples: Int16Array) => Uint8Array;
  readonly ssrc: number;
  /** Sequence numbers to leave out (lost packets). */
  readonly skip?: ReadonlySet<number>;
}

/**
 * Sends a continuous tone as RTP, paced by the wall clock as a media server would: packet i leaves
 * at start + i * packetMs. Resolves with the number of packets sent.
 */
async function sendTone(peer: RtpPeer, port: number, stream: ToneStream): Promise<number> {
  const samplesPerPacket = (stream.rate * stream.packetMs) / 1000;
  const step = (2 * Math.PI * stream.frequency) / stream.rate;
  const start = performance.now();
  let sent = 0;
  for (let i = 0; i < stream.packets; i++) {
    const due = start + i * stream.packetMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const samples = new Int16Array(samplesPerPacket);
    for (let n = 0; n < samplesPerPacket; n++) samples[n] = Math.round(stream.amplitude * Math.sin(step * (i * samplesPerPacket + n)));
    if (stream.skip?.has(i)) continue;
    await peer.send(rtpPacket(stream.payloadType, 1000 + i, 5000 + i * samplesPerPacket, stream.ssrc, stream.encode(samples), i === 0), port);
    sent++;
  }
  return sent;
}

const ulaw = (samples: Int16Array): Uint8Array => {
  const out = new Uint8Array(samples.length);
  ulawEncode(samples, out);
  return out;
};

const alaw = (samples: Int16Array): Uint8Array => {
  const out = new Uint8Array(samples.length);
  alawEncode(samples, out);
  return out;
};

const s16be = (samples: Int16Array): Uint8Array => {
  const out = Buffer.alloc(samples.length * 2);
  samples.forEach((sample, i) => out.writeInt16BE(sample, i * 2));
  return out;
};

function decodeS16be(payload: Buffer): Int16Array {
  const out = new Int16Array(payload.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = payload.readInt16BE(i * 2);
  return out;
}

function decodeUlaw(payload: Buffer): Int16Array {
  const out = new Int16Array(payload.length);
  ulawDecode(payload, out);
  return out;
}

/**
 * Waits until what a capture heard has played out: something loud, then 8 quiet frames. On a
 * loaded machine packets arrive in bursts and the adaptive jitter buffer holds more of them, so a
 * fixed number of ticks after the last packet may stop listening before the tone has been played.
 */
async function playedOut(heard: { readonly frames: readonly { samples: Int16Array }[] }): Promise<void> {
  const quiet = (frame: { samples: Int16Array }): boolean => Math.sqrt(meanSquare(frame.samples)) <= 500;
  await waitUntil('the tone has played out', () => heard.frames.some((frame) => !quiet(frame)) && heard.frames.length >= 8 && heard.frames.slice(-8).every(quiet));
}

// ---- channel helpers ----------------------------------------------------------------------------

interface External {
  readonly json: any;
  readonly id: string;
  readonly localPort: number;
}

async function createExternal(peer: RtpPeer, query: Record<string, string> = {}, body?: unknown): Promise<External> {
  const params = new URLSearchParams({ app: APP, external_host: peer.host, format: 'ulaw', ...query });
  const mark = log.mark();
  const json = await expectStatus(server, `/channels/externalMedia?${params}`, 200, 'POST', body);
  await log.waitFor(`StasisStart ${json.id}`, isEvent('StasisStart', json.id), mark);
  return { json, id: json.id, localPort: Number(json.channelvars.UNICASTRTP_LOCAL_PORT) };
}

/** An external media channel and a Local call in one mixing bridge. */
async function bridged(peer: RtpPeer, name: string, query: Record<string, string> = {}): Promise<BridgedExternal<External>> {
  return bridgeWithLocal(server, log, APP, await createExternal(peer, { channelId: `${name}-ext`, ...query }), name);
}

const hangup = (id: string): Promise<void> => hangupIfUp(server, id);

function canBind(port: number): Promise<boolean> {
  const probe = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    probe.once('error', () => {
      probe.close();
      resolve(false);
    });
    probe.bind(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

// ---- tests --------------------------------------------------------------------------------------

describe('creating an external media channel', () => {
  test('the channel is Up in the application, with its local RTP address among the channel variables', async () => {
    const peer = await RtpPeer.open();
    const mark = log.mark();
    const ext = await createExternal(peer, { channelId: 'ext-create', data: 'one,two' }, { variables: { GREETING: 'hello', SHOWN: { value: 'yes', report_events: true } } });
    const { json } = ext;
    assert.equal(json.id, 'ext-create');
    assert.match(json.name, new RegExp(`^UnicastRTP/127\\.0\\.0\\.1:${peer.port}-0x[0-9a-f]{8}$`));
    assert.equal(json.state, 'Up');
    assert.equal(json.channelvars.UNICASTRTP_LOCAL_ADDRESS, '127.0.0.1');
    assert.equal(json.channelvars.local_address, '127.0.0.1');
    assert.equal(json.channelvars.local_port, json.channelvars.UNICASTRTP_LOCAL_PORT);
    assert.ok(ext.localPort > 0 && ext.localPort < 65536, `local port ${ext.localPort}`);
    assert.equal(json.channelvars.SHOWN, 'yes');
    assert.equal(json.dialplan.app_name, 'Stasis');

    const start = await log.waitFor('StasisStart', isEvent('StasisStart', 'ext-create'), mark);
    assert.deepEqual(start.args, ['one', 'two']);
    assert.equal(start.channel.channelvars.local_port, String(ext.localPort));
    assert.equal((await expectStatus(server, '/channels/ext-create/variable?variable=GREETING', 200, 'GET')).value, 'hello');
    assert.equal((await expectStatus(server, '/channels/ext-create', 200, 'GET')).channelvars.UNICASTRTP_LOCAL_PORT, String(ext.localPort));

    // A real socket: the port is taken, and it belongs to this channel's session.
    assert.equal(await canBind(ext.localPort), false, 'the RTP port is in use');
    assert.equal(server.core.externalMedia.size, 1);
    const session = server.core.externalMedia.session(server.core.channels.require('ext-create'));
    assert.equal(session?.localPort, ext.localPort);
    assert.equal(session?.remotePort, peer.port);

    // The id is in use now.
    await expectStatus(server, `/channels/externalMedia?app=${APP}&external_host=${peer.host}&format=ulaw&channelId=ext-create`, 409);

    // Hanging up closes the socket: the port is free again, the session is gone.
    const hung = log.mark();
    await hangup('ext-create');
    await log.waitFor('StasisEnd', isEvent('StasisEnd', 'ext-create'), hung);
    await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', 'ext-create'), hung);
    assert.equal(server.core.externalMedia.size, 0);
    assert.equal(await canBind(ext.localPort), true, 'the RTP port was released');
    await peer.close();
    assert.equal(server.core.channels.size, 0);
  });

  test('an application that is not registered: the channel is hung up and its socket closed', async () => {
    const peer = await RtpPeer.open();
    const json = await expectStatus(server, `/channels/externalMedia?app=nobody-home&external_host=${peer.host}&format=alaw`, 200);
    await waitUntil('the channel is gone', () => !server.core.channels.get(json.id));
    assert.equal(server.core.externalMedia.size, 0);
    assert.equal(await canBind(Number(json.channelvars.UNICASTRTP_LOCAL_PORT)), true);
    await peer.close();
  });
});

describe('RTP from the external host to the Local party', () => {
  test('ulaw packets carrying a 1 kHz tone are heard at the far end of the bridged Local call', async () => {
    const peer = await RtpPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'in-ulaw');
    const heard = capture(server, local.two);
    const sent = await sendTone(peer, ext.localPort, { rate: 8000, packetMs: 20, packets: 50, frequency: 1000, amplitude: 8000, payloadType: 0, encode: ulaw, ssrc: 0x1234abcd });
    await playedOut(heard);
    heard.stop();

    const tone = toneBlocks(heard.frames.map((frame) => frame.samples), 2000);
    assert.ok(tone.count >= sent - 2 && tone.count <= sent, `${tone.count} tone frames arrived for ${sent} packets`);
    const m = measure(tone.samples, 1000);
    assert.ok(Math.abs(m.amplitude - 8000) < 8000 * 0.04, `1 kHz amplitude ${m.amplitude.toFixed(0)} (sent 8000)`);
    assert.ok(m.purity > 0.97, `1 kHz carries ${(m.purity * 100).toFixed(1)}% of the power`);
    assert.ok(Math.abs(m.frequency - 1000) < 10, `zero-crossing frequency ${m.frequency.toFixed(1)} Hz`);

    const stats = await expectStatus(server, `/channels/${ext.id}/rtp_statistics`, 200, 'GET');
    assert.equal(stats.rxcount, sent);
    assert.equal(stats.rxoctetcount, sent * 160);
    assert.equal(stats.remote_ssrc, 0x1234abcd);
    assert.equal(stats.rxploss, 0);
    assert.equal(stats.channel_uniqueid, ext.id);
    assert.ok(Number.isFinite(stats.rxjitter) && stats.rxjitter >= 0 && stats.rxjitter < 0.05, `rx jitter ${stats.rxjitter} s`);

    await endBridged(server, { ext, local, bridgeId }, peer);
  });

  test('alaw in 10 ms packets and slin in 30 ms packets are re-framed into 20 ms frames', async () => {
    for (const [format, payloadType, packetMs, encode] of [['alaw', 8, 10, alaw], ['slin', 119, 30, s16be]] as const) {
      const peer = await RtpPeer.open();
      const { ext, local, bridgeId } = await bridged(peer, `in-${format}`, { format });
      const heard = capture(server, local.two);
      const packets = Math.round(1000 / packetMs);
      await sendTone(peer, ext.localPort, { rate: 8000, packetMs, packets, frequency: 1000, amplitude: 8000, payloadType, encode, ssrc: 77 });
      await playedOut(heard);
      heard.stop();
      const tone = toneBlocks(heard.frames.map((frame) => frame.samples), 2000);
      assert.ok(tone.count >= 48 && tone.count <= 50, `${format}: ${tone.count} tone frames for one second`);
      const m = measure(tone.samples, 1000);
      assert.ok(Math.abs(m.amplitude - 8000) < 8000 * 0.04, `${format}: amplitude ${m.amplitude.toFixed(0)}`);
      assert.ok(m.purity > 0.97, `${format}: purity ${(m.purity * 100).toFixed(1)}% (a click at every re-framed packet would lower it)`);
      await endBridged(server, { ext, local, bridgeId }, peer);
    }
  });

  test('slin16: big-endian 16 kHz packets are heard at their frequency and level', async () => {
    const peer = await RtpPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'in-slin16', { format: 'slin16' });
    const heard = capture(server, local.two);
    await sendTone(peer, ext.localPort, { rate: 16000, packetMs: 20, packets: 50, frequency: 1000, amplitude: 8000, payloadType: 118, encode: s16be, ssrc: 99 });
    await playedOut(heard);
    heard.stop();
    const tone = toneBlocks(heard.frames.map((frame) => frame.samples), 2000);
    assert.ok(tone.count >= 48, `${tone.count} tone frames`);
    const m = measure(tone.samples, 1000);
    assert.ok(Math.abs(m.amplitude - 8000) < 8000 * 0.04, `amplitude ${m.amplitude.toFixed(0)}`);
    assert.ok(m.purity > 0.97, `purity ${(m.purity * 100).toFixed(1)}%`);
    await endBridged(server, { ext, local, bridgeId }, peer);
  });

  test('packets from any other address are ignored; a sequence gap counts as loss; another payload type is not played', async () => {
    const peer = await RtpPeer.open();
    const stranger = await RtpPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'in-filter');
    const heard = capture(server, local.two);

    // A stranger's tone never reaches the channel, not even its statistics.
    await sendTone(stranger, ext.localPort, { rate: 8000, packetMs: 20, packets: 10, frequency: 1000, amplitude: 8000, payloadType: 0, encode: ulaw, ssrc: 5 });
    await ticks(server, 5);
    let stats = await expectStatus(server, `/channels/${ext.id}/rtp_statistics`, 200, 'GET');
    assert.equal(stats.rxcount, 0);
    assert.equal(toneBlocks(heard.frames.map((frame) => frame.samples), 500).count, 0, 'nothing heard from the stranger');

    // Three packets lost out of 30.
    const sent = await sendTone(peer, ext.localPort, { rate: 8000, packetMs: 20, packets: 30, frequency: 1000, amplitude: 8000, payloadType: 0, encode: ulaw, ssrc: 6, skip: new Set([10, 11, 20]) });
    assert.equal(sent, 27);
    await ticks(server, 5);
    stats = await expectStatus(server, `/channels/${ext.id}/rtp_statistics`, 200, 'GET');
    assert.equal(stats.rxcount, 27);
    assert.equal(stats.rxploss, 3);
    assert.equal(stats.remote_ssrc, 6);

    // Comfort noise (PT 13) is counted but not played. Counted from when the tone has played out:
    // on a loaded machine packets arrive in bursts and the adaptive jitter buffer holds more of them.
    await playedOut(heard);
    const before = heard.frames.length;
    const loudBefore = toneBlocks(heard.frames.map((frame) => frame.samples), 500).count;
    for (let i = 0; i < 5; i++) await peer.send(rtpPacket(13, 1030 + i, 5000 + (30 + i) * 160, 6, new Uint8Array([40])), ext.localPort);
    await ticks(server, 5);
    assert.ok(heard.frames.length > before);
    assert.equal(toneBlocks(heard.frames.map((frame) => frame.samples), 500).count, loudBefore, 'comfort noise is not played');
    stats = await expectStatus(server, `/channels/${ext.id}/rtp_statistics`, 200, 'GET');
    assert.equal(stats.rxcount, 32);
    assert.equal(stats.rxploss, 3);
    heard.stop();

    await endBridged(server, { ext, local, bridgeId }, peer);
    await stranger.close();
  });
});

describe('RTP from the Local party to the external host', () => {
  test('ulaw: a 600 Hz tone arrives as RTP with correct headers', async () => {
    const peer = await RtpPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'out-ulaw');
    await toneOutThenLeave(server, { ext, local, bridgeId });

    const packets = peer.packets;
    assert.ok(packets.length >= 50, `${packets.length} packets`);
    for (const packet of packets) {
      assert.equal(packet.version, 2);
      assert.equal(packet.payloadType, 0);
      assert.equal(packet.payload.length, 160);
      assert.equal(packet.fromPort, ext.localPort, 'sent from the advertised local port');
    }
    assert.equal(new Set(packets.map((packet) => packet.ssrc)).size, 1, 'one SSRC');
    assert.equal(packets[0].marker, true, 'marker on the first packet');
    assert.ok(packets.slice(1).every((packet) => !packet.marker), 'no marker on the packets that follow');
    for (let i = 1; i < packets.length; i++) {
      assert.equal(packets[i].sequence, (packets[i - 1].sequence + 1) & 0xffff, `sequence of packet ${i}`);
      assert.equal(packets[i].timestamp, (packets[i - 1].timestamp + 160) >>> 0, `timestamp of packet ${i}`);
    }

    const decoded = toneBlocks(packets.map((packet) => decodeUlaw(packet.payload)), 1500);
    assert.ok(decoded.count >= 45, `${decoded.count} packets carry the tone`);
    const m = measure(decoded.samples, 600);
    assert.ok(Math.abs(m.amplitude - 6000) < 6000 * 0.04, `600 Hz amplitude ${m.amplitude.toFixed(0)} (sent 6000)`);
    assert.ok(m.purity > 0.97, `600 Hz carries ${(m.purity * 100).toFixed(1)}% of the power`);

    const stats = await expectStatus(server, `/channels/${ext.id}/rtp_statistics`, 200, 'GET');
    assert.equal(stats.txcount, packets.length);
    assert.equal(stats.txoctetcount, packets.length * 160);
    assert.equal(stats.local_ssrc, packets[0].ssrc);
    assert.equal(stats.rxcount, 0);
    assert.equal(stats.remote_ssrc, 0);

    await endBridged(server, { ext, local, bridgeId }, peer);
  });

  test('slin16: 320 big-endian samples per packet, payload type 118, timestamps by 320', async () => {
    const peer = await RtpPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'out-slin16', { format: 'slin16' });
    await toneOutThenLeave(server, { ext, local, bridgeId });

    const packets = peer.packets;
    assert.ok(packets.length >= 50, `${packets.length} packets`);
    for (const packet of packets) {
      assert.equal(packet.payloadType, 118);
      assert.equal(packet.payload.length, 640);
    }
    for (let i = 1; i < packets.length; i++) assert.equal(packets[i].timestamp, (packets[i - 1].timestamp + 320) >>> 0);
    const decoded = toneBlocks(packets.map((packet) => decodeS16be(packet.payload)), 1500);
    assert.ok(decoded.count >= 45, `${decoded.count} packets carry the tone`);
    const amplitude = powerToAmplitude(goertzelPower(decoded.samples, 600, 16000));
    assert.ok(Math.abs(amplitude - 6000) < 6000 * 0.04, `600 Hz amplitude at 16 kHz ${amplitude.toFixed(0)}`);
    assert.ok(powerToAmplitude(goertzelPower(decoded.samples, 7400, 16000)) < 100, 'no image of the tone above 4 kHz');
    // Read as little-endian the same bytes are not a clean tone: the byte order is right.
    const purity = (samples: Int16Array): number => goertzelPower(samples, 600, 16000) / meanSquare(samples);
    assert.ok(purity(decoded.samples) > 0.97, `600 Hz carries ${(purity(decoded.samples) * 100).toFixed(1)}% of the power`);
    const swapped = decoded.samples.map((sample) => ((sample & 0xff) << 8) | ((sample >> 8) & 0xff));
    assert.ok(purity(swapped) < 0.5, `byte-swapped, 600 Hz would carry only ${(purity(swapped) * 100).toFixed(1)}%`);

    await endBridged(server, { ext, local, bridgeId }, peer);
  });

  test('direction in sends nothing; direction out sends but plays nothing it receives', async () => {
    const inPeer = await RtpPeer.open();
    const onlyIn = await bridged(inPeer, 'dir-in', { direction: 'in' });
    const tone = toneWriter(server, (frame) => onlyIn.local.two.write(frame), 600, 6000);
    const heardIn = capture(server, onlyIn.local.two);
    await sendTone(inPeer, onlyIn.ext.localPort, { rate: 8000, packetMs: 20, packets: 20, frequency: 1000, amplitude: 8000, payloadType: 0, encode: ulaw, ssrc: 1 });
    await playedOut(heardIn);
    tone.stop();
    heardIn.stop();
    assert.equal(inPeer.packets.length, 0, 'direction in: no RTP leaves');
    assert.ok(toneBlocks(heardIn.frames.map((frame) => frame.samples), 2000).count >= 18, 'direction in: RTP received is heard');
    await hangup(onlyIn.ext.id);
    await finish(server, [onlyIn.local], [onlyIn.bridgeId]);
    await inPeer.close();

    const outPeer = await RtpPeer.open();
    const onlyOut = await bridged(outPeer, 'dir-out', { direction: 'out' });
    const heardOut = capture(server, onlyOut.local.two);
    await sendTone(outPeer, onlyOut.ext.localPort, { rate: 8000, packetMs: 20, packets: 20, frequency: 1000, amplitude: 8000, payloadType: 0, encode: ulaw, ssrc: 2 });
    await ticks(server, 5);
    heardOut.stop();
    assert.ok(outPeer.packets.length >= 15, 'direction out: RTP leaves');
    assert.equal(toneBlocks(heardOut.frames.map((frame) => frame.samples), 500).count, 0, 'direction out: RTP received is not heard');
    assert.equal((await expectStatus(server, `/channels/${onlyOut.ext.id}/rtp_statistics`, 200, 'GET')).rxcount, 20, 'but it is counted');
    await hangup(onlyOut.ext.id);
    await finish(server, [onlyOut.local], [onlyOut.bridgeId]);
    await outPeer.close();
  });
});

describe('parameters', () => {
  test('missing, malformed and unsupported values are 400', async () => {
    const peer = await RtpPeer.open();
    const base = { app: APP, external_host: peer.host, format: 'ulaw' };
    const status = async (query: Record<string, string | undefined>, expected: number, message?: RegExp): Promise<void> => {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries({ ...base, ...query })) if (value !== undefined) params.set(key, value);
      const response = await call(server, `/channels/externalMedia?${params}`);
      const body = (await response.json()) as { message: string };
      assert.equal(response.status, expected, `${params}: ${response.status} ${body.message}`);
      if (message) assert.match(body.message, message);
    };
    await status({ app: undefined }, 400, /app/);
    await status({ external_host: undefined }, 400, /external_host/);
    for (const host of ['127.0.0.1', '127.0.0.1:', ':5000', '127.0.0.1:0', '127.0.0.1:70000', '127.0.0.1:50a', 'a b:5000', '[::1:5000']) {
      await status({ external_host: host }, 400, /external_host/);
    }
    await status({ format: undefined }, 400, /format/);
    await status({ format: 'g729' }, 400, /format/);
    await status({ format: 'nonsense' }, 400, /format/);
    await status({ direction: 'sideways' }, 400, /direction/);
    await status({ encapsulation: 'rtp', transport: 'tcp' }, 400, /rtp/);
    await status({ encapsulation: 'audiosocket', transport: 'udp' }, 400, /audiosocket/);
    await status({ encapsulation: 'rtp', transport: 'websocket' }, 400, /websocket/);
    await status({ connection_type: 'server' }, 400, /server/);
    await status({ encapsulation: 'audiosocket', transport: 'tcp' }, 400, /data/);
    await status({ encapsulation: 'bogus' }, 400, /encapsulation/);
    // An RTP host that the loopback-bound socket cannot reach.
    await status({ external_host: '192.0.2.1:5000' }, 400, /loopback/);

    // Websocket names a websocket_clients entry in client mode (test/channels/websocket/media-websocket.test.ts).
    await status({ encapsulation: 'none', transport: 'websocket', external_host: 'media_connection1' }, 400, /websocket_client/);

    // A channel id in use, whatever made it.
    const local = await localCall(server, log, APP, 'ext-taken');
    await status({ channelId: 'ext-taken' }, 409);
    await status({ channelId: 'ext-taken-2' }, 409);
    assert.equal(server.core.externalMedia.size, 0, 'no socket is left open by refused requests');
    await finish(server, [local]);
    await peer.close();
  });

  test('rtp_statistics: 404 for an unknown channel, 403 for a channel without RTP', async () => {
    await expectStatus(server, '/channels/no-such-channel/rtp_statistics', 404, 'GET');
    const local = await localCall(server, log, APP, 'ext-nortp');
    const refused = await expectStatus(server, `/channels/${local.one.id}/rtp_statistics`, 403, 'GET');
    assert.equal(refused.message, 'Unsupported channel type');
    await finish(server, [local]);
  });
});

describe('shutdown', () => {
  test('stopping the server closes every external media socket', async () => {
    const other = await startTestServer();
    const peer = await RtpPeer.open();
    const params = new URLSearchParams({ app: 'whoever', external_host: peer.host, format: 'ulaw' });
    const events = await other.events('app=whoever');
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await other.ari(`/channels/externalMedia?${params}`, { method: 'POST' });
      assert.equal(response.status, 200);
      ports.push(Number(((await response.json()) as any).channelvars.local_port));
    }
    assert.equal(other.core.externalMedia.size, 3);
    for (const port of ports) assert.equal(await canBind(port), false);
    await events.close();
    await other.stop();
    assert.equal(other.core.externalMedia.size, 0);
    assert.equal(other.core.channels.size, 0);
    for (const port of ports) assert.equal(await canBind(port), true, `port ${port} released`);
    await peer.close();
  });

  test('nothing is left on the main server', () => {
    assert.equal(server.core.externalMedia.size, 0);
    assert.equal(server.core.channels.size, 0);
  });
});
