// rtp_keepalive in the RTP stream, on real sockets with a hand-driven media clock: a stream that
// sends nothing sends one comfort-noise packet (PT 13, marker, level 127) every keepalive interval
// of clock ticks, whatever its direction; a stream that carries audio sends none until it stops
// (test/interop/sip-rtp-keepalive.test.ts shows a call without it sends nothing). Each packet is
// awaited on the peer's socket (no sleeps).
import assert from 'node:assert/strict';
import type dgram from 'node:dgram';
import { test } from 'node:test';
import { RtpPortRange } from '../../../src/media/rtp/port-range.ts';
import { RtpStream, type StreamParameters } from '../../../src/media/rtp/stream.ts';
import type { Frame } from '../../../src/media/frame.ts';
import { loopbackSocket } from '../../helpers/loopback-udp.ts';
import { ManualClock } from './manual-clock.ts';

async function setUp(parameters: Partial<StreamParameters>) {
  const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
  const pair = await range.bindPair('127.0.0.1');
  const clock = new ManualClock();
  const stream = new RtpStream(pair.rtp, clock, { onFrame: () => undefined, onDigit: () => undefined }, { rtcpSocket: pair.rtcp, rtcpIntervalMs: 60_000 });
  const peer: dgram.Socket = await loopbackSocket();
  const packets: Buffer[] = [];
  let wake: (() => void) | undefined;
  peer.on('message', (data) => {
    packets.push(data);
    wake?.();
  });
  stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, remoteRtcpPort: peer.address().port + 1, direction: 'sendrecv', ...parameters });
  /** Waits (bounded) until `count` packets reached the peer. */
  const arrived = async (count: number) => {
    const deadline = Date.now() + 20_000;
    while (packets.length < count) {
      assert.ok(Date.now() < deadline, `${packets.length} of ${count} packets arrived`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  const close = () => {
    stream.close();
    peer.close();
  };
  return { stream, clock, packets, arrived, close };
}

const silence: Frame = { samples: new Int16Array(160), rate: 8000 } as Frame;

test('nothing sent for keepaliveMs: one comfort-noise packet per interval of clock ticks, in any direction', async () => {
  const { clock, packets, arrived, close, stream } = await setUp({ keepaliveMs: 1000, direction: 'recvonly' });
  try {
    for (let i = 0; i < 49; i++) clock.tick();
    clock.tick(); // the 50th tick: 1000 ms of nothing sent
    await arrived(1);
    for (let i = 0; i < 50; i++) clock.tick();
    await arrived(2);
    for (const packet of packets) {
      assert.equal(packet.length, 13);
      assert.equal(packet[1], 0x80 | 13, 'marker and payload type 13');
      assert.equal(packet[12], 127);
    }
    assert.equal(packets[1].readUInt16BE(2), (packets[0].readUInt16BE(2) + 1) % 65536);
    assert.equal((packets[1].readUInt32BE(4) - packets[0].readUInt32BE(4)) >>> 0, 50 * 160, 'fifty 20 ms ticks apart on the RTP clock');
    assert.equal(stream.statistics()?.txcount, 2);
  } finally {
    close();
  }
});

test('a stream that carries audio sends no keepalive; one that stops does, an interval after its last packet', async () => {
  const { stream, clock, packets, arrived, close } = await setUp({ keepaliveMs: 200 });
  try {
    for (let i = 0; i < 30; i++) {
      clock.tick();
      stream.writeFrame(silence);
    }
    await arrived(30);
    assert.ok(packets.every((packet) => (packet[1] & 0x7f) === 0), 'audio only (PT 0)');
    for (let i = 0; i < 10; i++) clock.tick();
    await arrived(31);
    assert.equal(packets[30][1], 0x80 | 13, 'then comfort noise');
  } finally {
    close();
  }
});
