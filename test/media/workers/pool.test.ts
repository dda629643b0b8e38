// RTP streams in media workers, driven as a SIP call drives them: received PCMU reaches the main
// thread one frame per main clock tick, frames written on the main thread leave as RTP, statistics
// and digits cross, looping sends the far end's audio back without the main thread seeing it,
// streams are placed on the least-loaded worker, and a worker that dies ends its streams (onLost)
// and is started again.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import type { Frame } from '../../../src/media/frame.ts';
import { RtpStreamTotals } from '../../../src/media/rtp/stream.ts';
import { workerHeapLimits, WORKER_YOUNG_GENERATION_MB, type OpenRequest } from '../../../src/media/workers/pool.ts';
import type { RemoteStreamEvents } from '../../../src/media/workers/remote-stream.ts';
import { loopbackSocket, openWhenReady, randomPortBase, useWorkerPool, waitFor } from './worker-fixture.ts';

const PORT_BASE = randomPortBase(40_000, 5_000);

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

describe('media worker pool', () => {
  const exits: string[] = [];
  const workers = useWorkerPool(2, { onWorkerExit: (index, reason, lost) => exits.push(`${index}:${lost}:${reason}`) });

  test('received audio reaches the main thread and written audio leaves as RTP; statistics and digits cross', async () => {
    const e = events();
    const totals = new RtpStreamTotals();
    const stream = await openWhenReady(workers.pool, request(e, totals));
    const peer = await loopbackSocket();
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

  test('a G.711-only call\'s stream memory holds 8 kHz received frames: they reach the main thread', async () => {
    const e = events();
    const stream = await openWhenReady(workers.pool, { ...request(e), maxReceiveRate: 8000 });
    const peer = await loopbackSocket();
    try {
      stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' });
      let sequence = 0;
      const talking = setInterval(() => peer.send(rtpPacket(sequence++, 3000), stream.localPort, '127.0.0.1'), 20);
      try {
        await waitFor(() => e.frames.filter((v) => v === ulawToLinear(linearToUlaw(3000))).length >= 15, 'received frames on the main thread');
      } finally {
        clearInterval(talking);
      }
    } finally {
      stream.close();
      peer.close();
    }
    assert.equal(e.lost.length, 0);
  });

  test('a looping stream sends the far end its own audio back and the main thread sees none of it', async () => {
    const e = events();
    const stream = await openWhenReady(workers.pool, request(e));
    const peer = await loopbackSocket();
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
    for (let i = 0; i < 6; i++) streams.push(await openWhenReady(workers.pool, request(events())));
    const perWorker = [0, 0];
    for (const stream of streams) perWorker[stream.workerIndex] += 1;
    assert.deepEqual(perWorker, [3, 3]);
    assert.equal(workers.pool.loads().reduce((sum, load) => sum + load.streams, 0), 6);
    for (const stream of streams) stream.close();
    await waitFor(() => workers.pool.streams === 0, 'the streams to close');
    // Two on worker 0 only: the next two go to worker 1.
    const a = await openWhenReady(workers.pool, request(events()));
    const b = await openWhenReady(workers.pool, request(events()));
    const c = await openWhenReady(workers.pool, request(events()));
    assert.notEqual(a.workerIndex, b.workerIndex);
    const onC = c.workerIndex;
    a.close();
    b.close();
    await waitFor(() => workers.pool.streams === 1, 'two to close');
    const d = await openWhenReady(workers.pool, request(events()));
    assert.notEqual(d.workerIndex, onC);
    c.close();
    d.close();
  });

  test('each worker reports its own heap, kept to a small young generation', async () => {
    await waitFor(() => workers.pool.loads().every((load) => (load.heapUsedBytes ?? 0) > 0 && (load.heapTotalBytes ?? 0) >= (load.heapUsedBytes ?? 0)), 'a heap report from each worker', 30_000);
    assert.deepEqual(workerHeapLimits(undefined), { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    assert.deepEqual(workerHeapLimits('0'), {});
    assert.deepEqual(workerHeapLimits('junk'), {});
    assert.deepEqual(workerHeapLimits('100000'), { resourceLimits: { maxYoungGenerationSizeMb: 256 } });
  });

  test('a worker that dies ends its streams (onLost, once) and is started again; the other worker goes on', async () => {
    const onFirst = events();
    const onSecond = events();
    const first = await openWhenReady(workers.pool, request(onFirst));
    const second = await openWhenReady(workers.pool, request(onSecond));
    assert.notEqual(first.workerIndex, second.workerIndex);
    await workers.pool.kill(first.workerIndex);
    await waitFor(() => onFirst.lost.length === 1, 'the lost stream');
    assert.equal(first.closed, true);
    assert.equal(onSecond.lost.length, 0);
    assert.equal(second.closed, false);
    assert.ok(exits.some((line) => line.startsWith(`${first.workerIndex}:1:`)), exits.join());
    await waitFor(() => workers.pool.loads()[first.workerIndex].restarts === 1 && workers.pool.loads()[first.workerIndex].running, 'the restart', 60_000);
    // The restarted worker takes streams again.
    const again = await openWhenReady(workers.pool, request(events()));
    assert.equal(again.workerIndex, first.workerIndex);
    again.close();
    second.close();
    first.close();
    assert.equal(onFirst.lost.length, 1);
  });
});
