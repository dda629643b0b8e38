// The two-party relay inside a media worker: a stream opened near another's worker lands there; two
// streams of one worker relay each other's far end — same codec: the packets pass with their
// payload as it came, on the sending stream's SSRC and sequence, its timestamps 20 ms apart, the
// marker on the first; different codecs: the decoded audio is encoded again — and no frame reaches
// the main thread meanwhile; the relay's end gives the frames back. Streams of two workers refuse.
import assert from 'node:assert/strict';
import type dgram from 'node:dgram';
import { describe, test } from 'node:test';
import { alawToLinear, linearToUlaw } from '../../../src/media/g711.ts';
import type { OpenRequest } from '../../../src/media/workers/pool.ts';
import type { RemoteStreamEvents } from '../../../src/media/workers/remote-stream.ts';
import { loopbackSocket, openWhenReady, randomPortBase, useWorkerPool, waitFor } from './worker-fixture.ts';

const PORT_BASE = randomPortBase(30_000, 4_000);

interface Heard {
  readonly payloadType: number;
  readonly marker: boolean;
  readonly sequence: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly payload: Buffer;
}

async function farEnd(): Promise<{ socket: dgram.Socket; heard: Heard[] }> {
  const socket = await loopbackSocket();
  const heard: Heard[] = [];
  socket.on('message', (m) => {
    if (m.length < 12 || (m[1] >= 200 && m[1] <= 204)) return;
    heard.push({ payloadType: m[1] & 0x7f, marker: (m[1] & 0x80) !== 0, sequence: m.readUInt16BE(2), timestamp: m.readUInt32BE(4), ssrc: m.readUInt32BE(8), payload: Buffer.from(m.subarray(12)) });
  });
  return { socket, heard };
}

/** A PCMU packet whose payload counts up from `sequence` (each byte distinct, so passing unchanged shows). */
function rtpPacket(sequence: number): Buffer {
  const packet = Buffer.alloc(172);
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE((1000 + sequence * 160) >>> 0, 4);
  packet.writeUInt32BE(0xabc, 8);
  for (let i = 0; i < 160; i++) packet[12 + i] = (sequence + i) & 0x7f;
  return packet;
}

function events(): RemoteStreamEvents & { frames: number } {
  const counted = { frames: 0 };
  return Object.assign(counted, {
    onFrame: () => void (counted.frames += 1),
    onDigit: () => undefined,
    onLost: () => undefined,
  });
}

function request(e: RemoteStreamEvents, nearWorker?: number): OpenRequest {
  return { host: '127.0.0.1', portStart: PORT_BASE, portEnd: PORT_BASE + 2_000, options: { jitterBuffer: { minDelayMs: 40, maxDelayMs: 200 } }, events: e, ...(nearWorker === undefined ? {} : { nearWorker }) };
}

describe('two-party relay in a media worker', () => {
  const workers = useWorkerPool(2);

  test('a stream opened near another lands on its worker; streams of two workers cannot relay', async () => {
    const first = await openWhenReady(workers.pool, request(events()));
    const near = await openWhenReady(workers.pool, request(events(), first.workerIndex));
    const elsewhere = await openWhenReady(workers.pool, request(events()));
    try {
      assert.equal(near.workerIndex, first.workerIndex, 'placed near its peer (the worker has room)');
      assert.notEqual(elsewhere.workerIndex, first.workerIndex, 'without a hint: the least-loaded worker');
      assert.equal(first.relayTo(elsewhere), false);
      assert.equal(first.relayTo(near), true);
      assert.equal(first.loopAudio(true), false, 'a relayed stream does not loop');
      assert.equal(first.relayTo(undefined), true);
    } finally {
      for (const stream of [first, near, elsewhere]) stream.close();
    }
  });

  test('same codec: the packets pass unchanged on the other stream\'s SSRC, sequence and timestamps; no frame reaches the main thread', async () => {
    const eA = events();
    const a = await openWhenReady(workers.pool, request(eA));
    const b = await openWhenReady(workers.pool, request(events(), a.workerIndex));
    const phoneA = await farEnd();
    const phoneB = await farEnd();
    try {
      a.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: phoneA.socket.address().port, direction: 'sendrecv' });
      b.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: phoneB.socket.address().port, direction: 'sendrecv' });
      assert.equal(a.relayTo(b), true);
      assert.equal(b.relayTo(a), true);
      let sequence = 0;
      const sent = new Map<string, number>();
      const talking = setInterval(() => {
        const packet = rtpPacket(sequence++);
        sent.set(packet.subarray(12).toString('hex'), sequence);
        phoneA.socket.send(packet, a.localPort, '127.0.0.1');
      }, 20);
      try {
        await waitFor(() => phoneB.heard.length >= 30, 'relayed packets at the other phone');
      } finally {
        clearInterval(talking);
      }
      // Source learning takes the first packets (probation): what follows passes unchanged.
      const passed = phoneB.heard.filter((packet) => sent.has(packet.payload.toString('hex')));
      assert.ok(passed.length >= 25, `payloads passed unchanged: ${passed.length} of ${phoneB.heard.length}`);
      assert.equal(new Set(phoneB.heard.map((packet) => packet.ssrc)).size, 1, 'one SSRC: the sending stream\'s');
      assert.notEqual(phoneB.heard[0].ssrc, 0xabc);
      assert.equal(phoneB.heard[0].marker, true, 'the marker starts the relayed source');
      const steps = phoneB.heard.slice(1).map((packet, i) => [(packet.sequence - phoneB.heard[i].sequence) & 0xffff, (packet.timestamp - phoneB.heard[i].timestamp) >>> 0]);
      assert.ok(steps.every(([seq]) => seq === 1), `sequence numbers follow each other: ${JSON.stringify(steps.slice(0, 8))}`);
      assert.ok(steps.filter(([, ts]) => ts === 160).length >= steps.length - 2, `20 ms apart on the RTP clock: ${JSON.stringify(steps.slice(0, 8))}`);
      assert.equal(eA.frames, 0, 'no frame crossed to the main thread');

      // The relay ends: frames reach the main thread again.
      a.relayTo(undefined);
      b.relayTo(undefined);
      const talkingAgain = setInterval(() => phoneA.socket.send(rtpPacket(sequence++), a.localPort, '127.0.0.1'), 20);
      try {
        await waitFor(() => eA.frames >= 5, 'frames on the main thread after the relay');
      } finally {
        clearInterval(talkingAgain);
      }
    } finally {
      a.close();
      b.close();
      phoneA.socket.close();
      phoneB.socket.close();
    }
  });

  test('different codecs: the audio is decoded and encoded again in the worker', async () => {
    const eA = events();
    const a = await openWhenReady(workers.pool, request(eA));
    const b = await openWhenReady(workers.pool, request(events(), a.workerIndex));
    const phoneA = await farEnd();
    const phoneB = await farEnd();
    try {
      a.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: phoneA.socket.address().port, direction: 'sendrecv' });
      b.configure({ codec: 'alaw', payloadType: 8, remoteAddress: '127.0.0.1', remotePort: phoneB.socket.address().port, direction: 'sendrecv' });
      assert.equal(a.relayTo(b), true);
      let sequence = 0;
      const tone = Buffer.alloc(172);
      tone[0] = 0x80;
      tone.fill(linearToUlaw(3000), 12);
      const talking = setInterval(() => {
        tone.writeUInt16BE(sequence & 0xffff, 2);
        tone.writeUInt32BE((sequence++ * 160) >>> 0, 4);
        phoneA.socket.send(tone, a.localPort, '127.0.0.1');
      }, 20);
      try {
        await waitFor(() => phoneB.heard.filter((packet) => packet.payloadType === 8 && Math.abs(alawToLinear(packet.payload[80]) - 3000) < 200).length >= 10, 'A-law packets of the µ-law audio');
      } finally {
        clearInterval(talking);
      }
      assert.equal(eA.frames, 0, 'no frame crossed to the main thread');
    } finally {
      a.close();
      b.close();
      phoneA.socket.close();
      phoneB.socket.close();
    }
  });
});
