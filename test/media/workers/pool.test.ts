// RTP streams in media workers, driven as a SIP call drives them: received PCMU reaches the main
// thread one frame per main clock tick, frames written on the main thread leave as RTP, statistics
// and digits cross, looping sends the far end's audio back without the main thread seeing it,
// streams are placed on the least-loaded worker, and a worker that dies ends its streams (onLost)
// and is started again.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { MediaClock } from '../../../src/media/clock.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import type { Frame } from '../../../src/media/frame.ts';
import { RtpStreamTotals } from '../../../src/media/rtp/stream.ts';
import { MediaWorkerPool, type OpenRequest } from '../../../src/media/workers/pool.ts';
import type { RemoteRtpStream, RemoteStreamEvents } from '../../../src/media/workers/remote-stream.ts';

const clock = new MediaClock();
const mainClock = { get ticks() { return clock.ticks; }, onTick: (l: () => void) => clock.add(l), offTick: (l: () => void) => clock.remove(l) };
const PORT_BASE = 40_000 + 2 * Math.floor(Math.random() * 5_000);

async function peerSocket(): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return socket;
}

function rtpPacket(sequence: number, value: number, payloadType = 0): Buffer {
  const packet = Buffer.alloc(172);
  packet[0] = 0x80;
  packet[1] = payloadType;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE(sequence * 160, 4);
  packet.writeUInt32BE(0xabc, 8);
  packet.fill(linearToUlaw(value), 12);
  return packet;
}

async function waitFor(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function events(overrides: Partial<RemoteStreamEvents> = {}): RemoteStreamEvents & { frames: number[]; lost: string[]; digits: string[] } {
  const frames: number[] = [];
  const lost: string[] = [];
  const digits: string[] = [];
  return {
    frames,
    lost,
    digits,
    onFrame: (frame: Frame) => frames.push(frame.samples[80]),
    onDigit: (digit) => digits.push(digit),
    onLost: (reason) => lost.push(reason),
    ...overrides,
  };
}

function request(e: RemoteStreamEvents, totals?: RtpStreamTotals): OpenRequest {
  return { host: '127.0.0.1', portStart: PORT_BASE, portEnd: PORT_BASE + 2_000, options: { jitterBuffer: { minDelayMs: 40, maxDelayMs: 200 }, rtcpIntervalMs: 500 }, events: e, ...(totals ? { totals } : {}) };
}

/** Opens a stream once a worker is ready (a new pool's workers take a moment to load). */
async function openOn(pool: MediaWorkerPool, r: OpenRequest): Promise<RemoteRtpStream> {
  let opening: Promise<RemoteRtpStream> | undefined;
  await waitFor(() => (opening = pool.open(r)) !== undefined, 'a ready worker');
  return opening!;
}

describe('media worker pool', () => {
  let pool: MediaWorkerPool;
  const exits: string[] = [];
  before(async () => {
    clock.start();
    pool = new MediaWorkerPool({ size: 2, clock: mainClock, onWorkerExit: (index, reason, lost) => exits.push(`${index}:${lost}:${reason}`) });
    await waitFor(() => pool.loads().every((load) => load.running), 'both workers to load', 60_000);
  });
  after(async () => {
    await pool.stop();
    clock.stop();
  });

  test('received audio reaches the main thread and written audio leaves as RTP; statistics and digits cross', async () => {
    const e = events();
    const totals = new RtpStreamTotals();
    const stream = await openOn(pool, request(e, totals));
    const peer = await peerSocket();
    const heard: number[] = [];
    let events101 = 0;
    peer.on('message', (message) => {
      if (message[1] === 0 && message.length === 172) heard.push(ulawToLinear(message[100]));
      if ((message[1] & 0x7f) === 101) events101 += 1;
    });
    try {
      stream.configure({ codec: 'ulaw', payloadType: 0, telephoneEventPt: 101, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' });
      // The far end talks, and the channel writes, until each side has heard enough (a loaded machine may stall either).
      let sequence = 0;
      const talking = setInterval(() => peer.send(rtpPacket(sequence++, 2000), stream.localPort, '127.0.0.1'), 20);
      const frame = { rate: 8000 as const, samples: new Int16Array(160).fill(-1500) };
      const writing = setInterval(() => stream.writeFrame(frame), 20);
      try {
        await waitFor(() => e.frames.filter((v) => v === ulawToLinear(linearToUlaw(2000))).length >= 15, 'received frames on the main thread');
        await waitFor(() => heard.filter((v) => v === ulawToLinear(linearToUlaw(-1500))).length >= 8, 'written frames at the far end');
      } finally {
        clearInterval(talking);
        clearInterval(writing);
      }
      await waitFor(() => (stream.statistics()?.rxcount ?? 0) >= 15 && (stream.statistics()?.txcount ?? 0) >= 8, 'statistics');
      assert.equal(stream.statistics()!.remote_ssrc, 0xabc);
      assert.ok(stream.jitterBuffer, 'the jitter buffer figures cross');
      // A telephone-event (digit 5, end bit) from the far end.
      const event = Buffer.alloc(16);
      event[0] = 0x80;
      event[1] = 101;
      event.writeUInt16BE((sequence + 1) & 0xffff, 2);
      event.writeUInt32BE(sequence * 160, 4);
      event.writeUInt32BE(0xabc, 8);
      event[12] = 5;
      event[13] = 0x80 | 10;
      event.writeUInt16BE(800, 14);
      for (let i = 0; i < 3; i++) peer.send(event, stream.localPort, '127.0.0.1');
      await waitFor(() => e.digits.includes('5'), 'the digit');
      assert.equal(stream.sendDigit('7', 100), true);
      await waitFor(() => events101 >= 3, 'telephone-event packets of the digit sent');
    } finally {
      stream.close();
      peer.close();
    }
    assert.equal(stream.closed, true);
    assert.equal(e.lost.length, 0);
  });

  test('a looping stream sends the far end its own audio back and the main thread sees none of it', async () => {
    const e = events();
    const stream = await openOn(pool, request(e));
    const peer = await peerSocket();
    const echoed: number[] = [];
    const timestamps: number[] = [];
    peer.on('message', (message) => {
      if ((message[1] & 0x7f) === 0 && message.length === 172) {
        echoed.push(ulawToLinear(message[100]));
        timestamps.push(message.readUInt32BE(4));
      }
    });
    try {
      stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' });
      assert.equal(stream.loopAudio(true), true);
      let sequence = 0;
      let talking = setInterval(() => peer.send(rtpPacket(sequence, 3000 + (sequence++ % 4) * 1000), stream.localPort, '127.0.0.1'), 20);
      try {
        await waitFor(() => echoed.length >= 25, 'echoed packets');
      } finally {
        clearInterval(talking);
      }
      const sent = new Set([0, 1, 2, 3].map((k) => ulawToLinear(linearToUlaw(3000 + k * 1000))));
      assert.ok(echoed.filter((v) => sent.has(v)).length >= 20, `echoed what was sent: ${echoed.slice(0, 10)}`);
      assert.equal(e.frames.length, 0, 'no frame reached the main thread while looping');
      // The packets went back as they came (reflected): 20 ms apart on the RTP clock, on our SSRC.
      const steps = timestamps.slice(1).map((t, i) => (t - timestamps[i]) >>> 0);
      assert.ok(steps.filter((step) => step === 160).length >= steps.length - 2, `timestamp steps ${steps.slice(0, 12)}`);
      stream.loopAudio(false);
      talking = setInterval(() => peer.send(rtpPacket(sequence++, 1000), stream.localPort, '127.0.0.1'), 20);
      try {
        await waitFor(() => e.frames.length >= 5, 'frames after looping stopped');
      } finally {
        clearInterval(talking);
      }
    } finally {
      stream.close();
      peer.close();
    }
  });

  test('streams go to the least-loaded worker', async () => {
    const streams = [];
    for (let i = 0; i < 6; i++) streams.push(await openOn(pool, request(events())));
    const perWorker = [0, 0];
    for (const stream of streams) perWorker[stream.workerIndex] += 1;
    assert.deepEqual(perWorker, [3, 3]);
    assert.equal(pool.loads().reduce((sum, load) => sum + load.streams, 0), 6);
    for (const stream of streams) stream.close();
    await waitFor(() => pool.streams === 0, 'the streams to close');
    // Two on worker 0 only: the next two go to worker 1.
    const a = await openOn(pool, request(events()));
    const b = await openOn(pool, request(events()));
    const c = await openOn(pool, request(events()));
    assert.notEqual(a.workerIndex, b.workerIndex);
    const onC = c.workerIndex;
    a.close();
    b.close();
    await waitFor(() => pool.streams === 1, 'two to close');
    const d = await openOn(pool, request(events()));
    assert.notEqual(d.workerIndex, onC);
    c.close();
    d.close();
  });

  test('a worker that dies ends its streams (onLost, once) and is started again; the other worker goes on', async () => {
    const onFirst = events();
    const onSecond = events();
    const first = await openOn(pool, request(onFirst));
    const second = await openOn(pool, request(onSecond));
    assert.notEqual(first.workerIndex, second.workerIndex);
    await pool.kill(first.workerIndex);
    await waitFor(() => onFirst.lost.length === 1, 'the lost stream');
    assert.equal(first.closed, true);
    assert.equal(onSecond.lost.length, 0);
    assert.equal(second.closed, false);
    assert.ok(exits.some((line) => line.startsWith(`${first.workerIndex}:1:`)), exits.join());
    await waitFor(() => pool.loads()[first.workerIndex].restarts === 1 && pool.loads()[first.workerIndex].running, 'the restart', 60_000);
    // The restarted worker takes streams again.
    const again = await openOn(pool, request(events()));
    assert.equal(again.workerIndex, first.workerIndex);
    again.close();
    second.close();
    first.close();
    assert.equal(onFirst.lost.length, 1);
  });
});
