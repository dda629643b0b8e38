// External media over AudioSocket/TCP (POST /channels/externalMedia, encapsulation audiosocket):
// the test plays the AudioSocket server with a real net.Server. Patchbay connects to it and sends
// the UUID first; an AudioSocket channel bridged with a Local call carries the test's 0x10 audio to
// the Local call's far end and the Local party's audio back as 0x10 messages, DTMF crosses both
// ways as 0x03, and a hangup on either side (0x00, a close, or ARI) ends the other. The parameter
// rules and the connection's life (closed on hangup and on shutdown) are checked on the wire and in
// the core.
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { meanSquare } from '../../../src/media/energy.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { call, capture, EventLog, expectStatus, finish, isEvent, measure, appServerInSuite, ticks, toneWriter } from '../../ari/bridges-helpers.ts';
import { bridgeWithLocal, endBridged, hangupIfUp, sleep, toneBlocks, toneOutThenLeave, waitUntil, type BridgedExternal } from './external-media-helpers.ts';

const APP = 'ext-audiosocket';

let server: TestServer;
let log: EventLog;

appServerInSuite(
  APP,
  (started) => ({ server, log } = started),
  async () => {
    // Peers left open by a failed test would keep the test process alive.
    for (const peer of AudioSocketPeer.live) await peer.close();
  },
);

// ---- the AudioSocket server ---------------------------------------------------------------------

const KIND = { hangup: 0x00, uuid: 0x01, dtmf: 0x03, audio: 0x10, error: 0xff } as const;

interface Message {
  readonly kind: number;
  readonly payload: Buffer;
}

function message(kind: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const out = Buffer.alloc(3 + payload.length);
  out[0] = kind;
  out.writeUInt16BE(payload.length, 1);
  out.set(payload, 3);
  return out;
}

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replaceAll('-', ''), 'hex');
}

/** One connection Patchbay made to the test server: every byte and message it sent, and its end. */
class Connection {
  readonly raw: Buffer[] = [];
  readonly messages: Message[] = [];
  ended = false;
  closed = false;
  errors: Error[] = [];
  private pending = Buffer.alloc(0);

  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.raw.push(Buffer.from(chunk));
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 3) {
        const length = this.pending.readUInt16BE(1);
        if (this.pending.length < 3 + length) break;
        this.messages.push({ kind: this.pending[0], payload: Buffer.from(this.pending.subarray(3, 3 + length)) });
        this.pending = this.pending.subarray(3 + length);
      }
    });
    socket.on('end', () => {
      this.ended = true;
    });
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', (error) => this.errors.push(error));
  }

  get bytes(): Buffer {
    return Buffer.concat(this.raw);
  }

  of(kind: number): Message[] {
    return this.messages.filter((entry) => entry.kind === kind);
  }

  /** Patchbay's port of the connection (the channel's local_port). */
  get remotePort(): number {
    return this.socket.remotePort ?? 0;
  }

  send(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (error) => (error ? reject(error) : resolve())));
  }

  waitClosed(what = 'the connection closes'): Promise<void> {
    return waitUntil(what, () => this.closed);
  }
}

/** A TCP server on 127.0.0.1 playing the AudioSocket server. */
class AudioSocketPeer {
  /** Every peer not closed yet. */
  static readonly live = new Set<AudioSocketPeer>();
  readonly connections: Connection[] = [];

  private constructor(readonly server: net.Server) {
    server.on('connection', (socket) => this.connections.push(new Connection(socket)));
  }

  static async open(): Promise<AudioSocketPeer> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const peer = new AudioSocketPeer(server);
    AudioSocketPeer.live.add(peer);
    return peer;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The connection with this local port of Patchbay's. */
  connection(localPort: number): Connection {
    const found = this.connections.find((candidate) => candidate.remotePort === localPort);
    assert.ok(found, `a connection from port ${localPort}`);
    return found;
  }

  close(): Promise<void> {
    AudioSocketPeer.live.delete(this);
    for (const connection of this.connections) connection.socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// ---- audio --------------------------------------------------------------------------------------

function s16le(samples: Int16Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  samples.forEach((sample, i) => out.writeInt16LE(sample, i * 2));
  return out;
}

function decodeS16le(payload: Buffer): Int16Array {
  const out = new Int16Array(payload.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = payload.readInt16LE(i * 2);
  return out;
}

/**
 * Sends a continuous 8 kHz tone as 0x10 messages of `messageMs`, paced by the wall clock as a
 * media server would. Every `splitEvery`-th message is written in two pieces, the first ending
 * inside the header, so the reader must join them.
 */
async function sendTone(connection: Connection, options: { ms: number; messageMs: number; frequency: number; amplitude: number; splitEvery?: number }): Promise<void> {
  const perMessage = (8000 * options.messageMs) / 1000;
  const step = (2 * Math.PI * options.frequency) / 8000;
  const count = options.ms / options.messageMs;
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = start + i * options.messageMs - performance.now();
    if (wait > 0) await sleep(wait);
    const samples = new Int16Array(perMessage);
    for (let n = 0; n < perMessage; n++) samples[n] = Math.round(options.amplitude * Math.sin(step * (i * perMessage + n)));
    const data = message(KIND.audio, s16le(samples));
    if (options.splitEvery && i % options.splitEvery === 0) {
      await connection.send(data.subarray(0, 2));
      await sleep(1);
      await connection.send(data.subarray(2));
    } else {
      await connection.send(data);
    }
  }
}

// ---- channel helpers ----------------------------------------------------------------------------

interface External {
  readonly json: any;
  readonly id: string;
  readonly localPort: number;
  readonly connection: Connection;
}

const UUID = '3e2f1f5a-9c4b-4d2e-8f10-a1b2c3d4e5f6';

async function createExternal(peer: AudioSocketPeer, query: Record<string, string> = {}, body?: unknown): Promise<External> {
  const params = new URLSearchParams({ app: APP, external_host: peer.host, format: 'slin', encapsulation: 'audiosocket', transport: 'tcp', data: UUID, ...query });
  const mark = log.mark();
  const json = await expectStatus(server, `/channels/externalMedia?${params}`, 200, 'POST', body);
  await log.waitFor(`StasisStart ${json.id}`, isEvent('StasisStart', json.id), mark);
  const localPort = Number(json.channelvars.local_port);
  await waitUntil('the server sees the connection', () => peer.connections.some((candidate) => candidate.remotePort === localPort));
  return { json, id: json.id, localPort, connection: peer.connection(localPort) };
}

/** An AudioSocket channel and a Local call in one mixing bridge. */
async function bridged(peer: AudioSocketPeer, name: string, query: Record<string, string> = {}): Promise<BridgedExternal<External>> {
  return bridgeWithLocal(server, log, APP, await createExternal(peer, { channelId: `${name}-ext`, ...query }), name);
}

const hangup = (id: string): Promise<void> => hangupIfUp(server, id);

// ---- tests --------------------------------------------------------------------------------------

describe('creating an AudioSocket channel', () => {
  test('the UUID is the first message; the channel is Up in the application with its local address', async () => {
    const peer = await AudioSocketPeer.open();
    const mark = log.mark();
    const ext = await createExternal(peer, { channelId: 'as-create' }, { variables: { GREETING: 'hello' } });
    const { json, connection } = ext;
    assert.equal(json.id, 'as-create');
    assert.equal(json.name, `AudioSocket/${peer.host}-${UUID}`);
    assert.equal(json.state, 'Up');
    assert.equal(json.channelvars.local_address, '127.0.0.1');
    assert.ok(ext.localPort > 0 && ext.localPort < 65536, `local port ${ext.localPort}`);
    assert.equal(json.dialplan.app_name, 'Stasis');
    assert.equal(json.dialplan.app_data, `${APP},${UUID}`);

    // The very first bytes on the wire: kind 0x01, length 16, the UUID's 16 raw bytes.
    await waitUntil('the UUID arrives', () => connection.bytes.length >= 19);
    assert.deepEqual(connection.bytes.subarray(0, 19), Buffer.concat([Buffer.from([0x01, 0x00, 0x10]), uuidBytes(UUID)]));
    assert.equal(connection.messages[0].kind, KIND.uuid);
    assert.equal(connection.messages[0].payload.toString('hex'), '3e2f1f5a9c4b4d2e8f10a1b2c3d4e5f6');

    const start = await log.waitFor('StasisStart', isEvent('StasisStart', 'as-create'), mark);
    assert.deepEqual(start.args, [UUID], 'data is the application argument, as in Asterisk');
    assert.equal(start.channel.channelvars.local_port, String(ext.localPort));
    assert.equal((await expectStatus(server, '/channels/as-create/variable?variable=GREETING', 200, 'GET')).value, 'hello');
    assert.equal(server.core.audioSocket.size, 1);
    assert.equal(server.core.audioSocket.session(server.core.channels.require('as-create'))?.localPort, ext.localPort);

    // Not an RTP channel.
    const refused = await expectStatus(server, '/channels/as-create/rtp_statistics', 403, 'GET');
    assert.equal(refused.message, 'Unsupported channel type');

    // The id is in use now.
    await expectStatus(server, `/channels/externalMedia?app=${APP}&external_host=${peer.host}&format=slin&encapsulation=audiosocket&transport=tcp&data=${UUID}&channelId=as-create`, 409);

    await hangup('as-create');
    await connection.waitClosed();
    assert.equal(server.core.audioSocket.size, 0);
    await peer.close();
  });

  test('an upper-case UUID is accepted and sent as the same bytes', async () => {
    const peer = await AudioSocketPeer.open();
    const upper = UUID.toUpperCase();
    const ext = await createExternal(peer, { data: upper });
    assert.equal(ext.json.name, `AudioSocket/${peer.host}-${upper}`);
    await waitUntil('the UUID arrives', () => ext.connection.messages.length >= 1);
    assert.deepEqual(ext.connection.messages[0], { kind: KIND.uuid, payload: uuidBytes(UUID) });
    await hangup(ext.id);
    await ext.connection.waitClosed();
    await peer.close();
  });

  test('an application that is not active: the channel is hung up at once, the server gets 0x00 and a close', async () => {
    const peer = await AudioSocketPeer.open();
    const params = new URLSearchParams({ app: 'nobody-listens', external_host: peer.host, format: 'slin', encapsulation: 'audiosocket', transport: 'tcp', data: UUID });
    await expectStatus(server, `/channels/externalMedia?${params}`, 200);
    await waitUntil('a connection', () => peer.connections.length === 1);
    const connection = peer.connections[0];
    await connection.waitClosed();
    assert.deepEqual(
      connection.messages.map((entry) => entry.kind),
      [KIND.uuid, KIND.hangup],
    );
    assert.equal(server.core.channels.size, 0);
    assert.equal(server.core.audioSocket.size, 0);
    await peer.close();
  });
});

describe('audio from the AudioSocket server to the Local party', () => {
  test('a 1 kHz tone in 30 ms messages, some split across writes, is heard at its level, one frame per tick', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-in');
    const heard = capture(server, local.two);
    // A media clock stalled past its catch-up burst (a loaded machine) drops ticks: no frame is
    // played for them, so the least count falls by as many, and rightly so.
    const skippedBefore = server.core.media.clock.skippedTicks;
    await sendTone(ext.connection, { ms: 1200, messageMs: 30, frequency: 1000, amplitude: 8000, splitEvery: 5 });
    // The last messages may wait behind a stall of the test's own sender (a loaded machine): a
    // second of ticks lets them through; nothing more is sent, so the upper bound holds.
    await ticks(server, 50);
    heard.stop();
    const skipped = server.core.media.clock.skippedTicks - skippedBefore;
    // Ended before the audio is judged: a failure here must not leave channels to the next tests.
    await endBridged(server, { ext, local, bridgeId }, peer);

    const tone = toneBlocks(heard.frames.map((frame) => frame.samples), 2000);
    assert.ok(tone.count >= 58 - skipped && tone.count <= 61, `${tone.count} tone frames for 1.2 s (${skipped} ticks dropped by a stalled clock)`);
    const m = measure(tone.samples, 1000);
    assert.ok(Math.abs(m.amplitude - 8000) < 8000 * 0.04, `1 kHz amplitude ${m.amplitude.toFixed(0)} (sent 8000)`);
    assert.ok(m.purity > 0.97, `1 kHz carries ${(m.purity * 100).toFixed(1)}% of the power`);
    assert.ok(Math.abs(m.frequency - 1000) < 20, `frequency ${m.frequency.toFixed(0)} Hz`);
    // One frame per tick: no tick delivered twice.
    const tonal = heard.frames.filter((frame) => Math.sqrt(meanSquare(frame.samples)) > 2000).map((frame) => frame.tick);
    assert.equal(new Set(tonal).size, tonal.length, 'one frame per media clock tick');
  });

  test('direction out: audio received is not heard', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-dir-out', { direction: 'out' });
    const heard = capture(server, local.two);
    await sendTone(ext.connection, { ms: 300, messageMs: 20, frequency: 1000, amplitude: 8000 });
    await ticks(server, 5);
    heard.stop();
    assert.equal(toneBlocks(heard.frames.map((frame) => frame.samples), 500).count, 0);
    await endBridged(server, { ext, local, bridgeId }, peer);
  });
});

describe('audio from the Local party to the AudioSocket server', () => {
  test('a 600 Hz tone arrives as 0x10 messages of 320 bytes of little-endian 8 kHz audio', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-out');
    await toneOutThenLeave(server, { ext, local, bridgeId });

    const { connection } = ext;
    assert.equal(connection.messages[0].kind, KIND.uuid, 'the UUID came first');
    const audio = connection.of(KIND.audio);
    assert.ok(audio.length >= 50, `${audio.length} audio messages`);
    for (const entry of audio) assert.equal(entry.payload.length, 320);
    const decoded = toneBlocks(audio.map((entry) => decodeS16le(entry.payload)), 1500);
    assert.ok(decoded.count >= 45, `${decoded.count} messages carry the tone`);
    const m = measure(decoded.samples, 600);
    assert.ok(Math.abs(m.amplitude - 6000) < 6000 * 0.04, `600 Hz amplitude ${m.amplitude.toFixed(0)} (sent 6000)`);
    assert.ok(m.purity > 0.97, `600 Hz carries ${(m.purity * 100).toFixed(1)}% of the power`);
    // Read big-endian the same bytes are not a clean tone: the byte order is right.
    const swapped = decoded.samples.map((sample) => ((sample & 0xff) << 8) | ((sample >> 8) & 0xff));
    assert.ok(measure(swapped, 600).purity < 0.5, 'byte-swapped, the tone would be lost');

    await endBridged(server, { ext, local, bridgeId }, peer);
  });

  test('direction in: no audio is sent', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-dir-in', { direction: 'in' });
    const tone = toneWriter(server, (frame) => local.two.write(frame), 600, 6000);
    await ticks(server, 20);
    tone.stop();
    await sleep(30);
    assert.equal(ext.connection.of(KIND.audio).length, 0);
    await endBridged(server, { ext, local, bridgeId }, peer);
  });
});

describe('DTMF', () => {
  test('0x03 from the server is a digit received on the channel, heard by the Local party', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-dtmf-in');
    const atLocal: string[] = [];
    local.two.on('dtmf', ({ digit }) => atLocal.push(digit));
    const mark = log.mark();
    for (const digit of ['5', '#', 'a']) await ext.connection.send(message(KIND.dtmf, Buffer.from(digit)));
    for (const digit of ['5', '#', 'A']) {
      const event = await log.waitFor(`ChannelDtmfReceived ${digit}`, (candidate) => isEvent('ChannelDtmfReceived', ext.id)(candidate) && candidate.digit === digit, mark);
      assert.ok(event.duration_ms > 0);
    }
    await waitUntil('the Local party hears the digits', () => atLocal.length === 3);
    assert.deepEqual(atLocal, ['5', '#', 'A']);
    // Not a digit: ignored.
    await ext.connection.send(message(KIND.dtmf, Buffer.from('x')));
    await ext.connection.send(message(KIND.dtmf));
    await sleep(30);
    assert.equal(log.since(mark).filter(isEvent('ChannelDtmfReceived', ext.id)).length, 3);

    await endBridged(server, { ext, local, bridgeId }, peer);
  });

  test('digits sent on the channel (ARI and through the bridge) leave as 0x03', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-dtmf-out');
    await expectStatus(server, `/channels/${ext.id}/dtmf?dtmf=1*&between=20&duration=40`, 204);
    await waitUntil('two digits', () => ext.connection.of(KIND.dtmf).length === 2);
    // The Local party presses 9: it crosses the bridge to the AudioSocket channel's far end.
    local.two.driver.sendDigit('9', 100);
    await waitUntil('three digits', () => ext.connection.of(KIND.dtmf).length === 3);
    const digits = ext.connection.of(KIND.dtmf);
    for (const entry of digits) assert.equal(entry.payload.length, 1);
    assert.deepEqual(
      digits.map((entry) => entry.payload.toString('latin1')),
      ['1', '*', '9'],
    );
    await endBridged(server, { ext, local, bridgeId }, peer);
  });
});

describe('hanging up', () => {
  test('0x00 from the server hangs the channel up (cause 16); nothing is sent back', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-bye-in');
    const mark = log.mark();
    await ext.connection.send(message(KIND.hangup));
    const destroyed = await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', ext.id), mark);
    assert.equal(destroyed.cause, 16);
    await ext.connection.waitClosed();
    assert.equal(ext.connection.of(KIND.hangup).length, 0, 'no 0x00 back to a server that hung up');
    assert.equal(server.core.audioSocket.size, 0);
    await finish(server, [local], [bridgeId]);
    await peer.close();
  });

  test('the server closing the connection hangs the channel up (cause 16)', async () => {
    const peer = await AudioSocketPeer.open();
    const ext = await createExternal(peer, { channelId: 'as-close-in' });
    const mark = log.mark();
    ext.connection.socket.end();
    const destroyed = await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', ext.id), mark);
    assert.equal(destroyed.cause, 16);
    await ext.connection.waitClosed();
    assert.equal(server.core.audioSocket.size, 0);
    await peer.close();
  });

  test('hanging the channel up through ARI sends 0x00, then the connection closes', async () => {
    const peer = await AudioSocketPeer.open();
    const { ext, local, bridgeId } = await bridged(peer, 'as-bye-out');
    // Audio is flowing towards the server when the hangup comes.
    const tone = toneWriter(server, (frame) => local.two.write(frame), 600, 6000);
    await ticks(server, 5);
    const mark = log.mark();
    await expectStatus(server, `/channels/${ext.id}`, 204, 'DELETE');
    tone.stop();
    await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', ext.id), mark);
    await waitUntil('the server sees the end of the stream', () => ext.connection.ended);
    const kinds = ext.connection.messages.map((entry) => entry.kind);
    assert.equal(kinds[0], KIND.uuid);
    assert.equal(kinds.at(-1), KIND.hangup, 'the last message is 0x00');
    assert.equal(kinds.filter((kind) => kind === KIND.hangup).length, 1);
    assert.ok(kinds.includes(KIND.audio));
    // The server closes its side: the connection is gone.
    ext.connection.socket.end();
    await ext.connection.waitClosed();
    assert.equal(server.core.audioSocket.size, 0);
    await finish(server, [local], [bridgeId]);
    await peer.close();
  });
});

describe('parameters', () => {
  test('a missing or malformed data, a bad host and a host with nothing listening are 400', async () => {
    const peer = await AudioSocketPeer.open();
    const base = { app: APP, external_host: peer.host, format: 'slin', encapsulation: 'audiosocket', transport: 'tcp', data: UUID };
    const status = async (query: Record<string, string | undefined>, expected: number, pattern?: RegExp): Promise<void> => {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries({ ...base, ...query })) if (value !== undefined) params.set(key, value);
      const response = await call(server, `/channels/externalMedia?${params}`);
      const body = (await response.json()) as { message: string };
      assert.equal(response.status, expected, `${params}: ${response.status} ${body.message}`);
      if (pattern) assert.match(body.message, pattern);
    };
    await status({ data: undefined }, 400, /data/);
    await status({ data: '' }, 400, /data/);
    for (const data of ['hello', '3e2f1f5a9c4b4d2e8f10a1b2c3d4e5f6', '3e2f1f5a-9c4b-4d2e-8f10-a1b2c3d4e5f', '3e2f1f5a-9c4b-4d2e-8f10-a1b2c3d4e5fg', `{${UUID}}`]) {
      await status({ data }, 400, /UUID/);
    }
    for (const host of ['127.0.0.1', '127.0.0.1:0', '127.0.0.1:70000', 'a b:5000', '[::1:5000']) await status({ external_host: host }, 400, /external_host/);
    // Not loopback, while the server listens on loopback.
    await status({ external_host: '192.0.2.1:5000' }, 400, /loopback/);
    await status({ format: undefined }, 400, /format/);
    await status({ format: 'g729' }, 400, /format/);
    await status({ transport: 'udp' }, 400, /audiosocket/);
    await status({ connection_type: 'server' }, 400, /server/);
    assert.equal(peer.connections.length, 0, 'no connection for a refused request');

    // Nothing listening on the port.
    const gone = await AudioSocketPeer.open();
    const port = gone.port;
    await gone.close();
    await status({ external_host: `127.0.0.1:${port}` }, 400, /^Unable to connect to external_host$/);

    assert.equal(server.core.channels.size, 0);
    assert.equal(server.core.audioSocket.size, 0);
    await peer.close();
  });

  test('websocket with a connection id no websocket_clients entry has is 400', async () => {
    const response = await call(server, `/channels/externalMedia?${new URLSearchParams({ app: APP, external_host: 'media_connection1', format: 'slin', encapsulation: 'none', transport: 'websocket' })}`);
    assert.equal(response.status, 400);
  });
});

describe('shutdown', () => {
  test('stopping the server sends 0x00 on every connection and closes it', async () => {
    const other = await startTestServer();
    const peer = await AudioSocketPeer.open();
    const events = await other.events('app=whoever');
    const params = new URLSearchParams({ app: 'whoever', external_host: peer.host, format: 'slin', encapsulation: 'audiosocket', transport: 'tcp', data: UUID });
    for (let i = 0; i < 3; i++) {
      const response = await other.ari(`/channels/externalMedia?${params}`, { method: 'POST' });
      assert.equal(response.status, 200);
    }
    assert.equal(other.core.audioSocket.size, 3);
    await waitUntil('three connections', () => peer.connections.length === 3);
    await events.close();
    await other.stop();
    assert.equal(other.core.audioSocket.size, 0);
    assert.equal(other.core.channels.size, 0);
    for (const connection of peer.connections) {
      await waitUntil('the end of the stream', () => connection.ended);
      assert.equal(connection.messages.at(-1)?.kind, KIND.hangup);
    }
    await peer.close();
  });

  test('nothing is left on the main server', () => {
    assert.equal(server.core.audioSocket.size, 0);
    assert.equal(server.core.channels.size, 0);
  });
});
