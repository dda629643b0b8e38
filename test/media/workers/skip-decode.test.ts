// A media worker playing a sound to a stream skips decoding the caller's audio (issue 25), yet keeps
// what must stay: the RTP statistics count every packet meanwhile, an RFC 4733 digit reaches the
// main thread, and no frame does; once the sound is taken back, the caller's audio is decoded and
// handed over again from the next packets.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { linearToUlaw } from '../../../src/media/g711.ts';
import { encodeTelephoneEvent } from '../../../src/media/rtp/telephone-event.ts';
import { SharedSound } from '../../../src/media/shared-sound.ts';
import { loopbackSocket, openWhenReady, randomPortBase, useWorkerPool, waitFor } from './worker-fixture.ts';

const PORT_BASE = randomPortBase(30_000, 4_000);
const SSRC = 0x7e57;

function audioPacket(sequence: number): Buffer {
  const packet = Buffer.alloc(172, linearToUlaw(2000));
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE((sequence * 160) >>> 0, 4);
  packet.writeUInt32BE(SSRC, 8);
  return packet;
}

function digitEndPacket(sequence: number, timestamp: number): Buffer {
  const packet = Buffer.alloc(16);
  packet[0] = 0x80;
  packet[1] = 101;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE(timestamp >>> 0, 4);
  packet.writeUInt32BE(SSRC, 8);
  encodeTelephoneEvent(packet, 12, 9, true, 10, 800);
  return packet;
}

describe('a media worker playing a sound skips the caller\'s decode', () => {
  const workers = useWorkerPool(1);

  test('while the sound plays: packets counted, the digit reported, no frame; after it: frames again', async () => {
    const heard = { frames: 0, digits: [] as string[] };
    const stream = await openWhenReady(workers.pool, {
      host: '127.0.0.1',
      portStart: PORT_BASE,
      portEnd: PORT_BASE + 2_000,
      options: { jitterBuffer: { minDelayMs: 40, maxDelayMs: 200 } },
      events: { onFrame: () => void (heard.frames += 1), onDigit: (digit) => void heard.digits.push(digit), onLost: () => undefined },
    });
    const phone = await loopbackSocket();
    let sequence = 0;
    const talking = setInterval(() => phone.send(audioPacket(sequence++), stream.localPort, '127.0.0.1'), 20);
    try {
      stream.configure({ codec: 'ulaw', payloadType: 0, telephoneEventPt: 101, remoteAddress: '127.0.0.1', remotePort: phone.address().port, direction: 'sendrecv' });
      // 60 s of silence: it plays until taken back.
      const play = stream.playSound(new SharedSound(new Int16Array(8000 * 60), 8000), 0, false, () => undefined);
      assert.ok(play, 'the worker plays the sound');
      await waitFor(() => (stream.statistics()?.rxcount ?? 0) >= 10, 'packets counted while the sound plays');
      const framesBefore = heard.frames;
      const counted = stream.statistics()!.rxcount;
      // The three end packets of one event carry its one timestamp (RFC 4733 §2.5.1.4).
      const eventTimestamp = sequence * 160;
      for (let i = 0; i < 3; i++) phone.send(digitEndPacket(sequence++, eventTimestamp), stream.localPort, '127.0.0.1');
      await waitFor(() => heard.digits.length > 0, 'the digit');
      await waitFor(() => stream.statistics()!.rxcount >= counted + 20, 'more packets counted');
      assert.deepEqual(heard.digits, ['9']);
      assert.equal(heard.frames, framesBefore, 'no frame reaches the main thread while the sound plays');
      play.stop();
      await waitFor(() => heard.frames >= framesBefore + 10, 'frames once the sound is taken back');
    } finally {
      clearInterval(talking);
      stream.close();
      phone.close();
    }
  });
});
