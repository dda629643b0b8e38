// One SIP call's RTP stream on real sockets with a hand-driven media clock: received PCMU reaches
// the channel through the jitter buffer and through the plain receive queue (sip.jitterbuffer
// false), RTCP leaves from the port above RTP, and closing sends an RTCP BYE.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, test } from 'node:test';
import type { Frame } from '../../../src/media/frame.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import { RtpPortRange } from '../../../src/media/rtp/port-range.ts';
import { RtpStream, RtpStreamTotals, type StreamOptions } from '../../../src/media/rtp/stream.ts';
import { loopbackSocket } from '../../helpers/loopback-udp.ts';
import { ManualClock } from './manual-clock.ts';

async function receiveThrough(options: StreamOptions): Promise<{ values: number[]; rtcp: Buffer[]; stream: RtpStream; closedCalls: number }> {
  const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
  const pair = await range.bindPair('127.0.0.1');
  const clock = new ManualClock();
  const values: number[] = [];
  let closedCalls = 0;
  const stream = new RtpStream(pair.rtp, clock, { onFrame: (frame: Frame) => values.push(frame.samples[80]), onDigit: () => undefined, onClosed: () => (closedCalls += 1) }, { ...options, rtcpSocket: pair.rtcp, rtcpIntervalMs: 200 });
  const peer = await loopbackSocket();
  const peerRtcp = await loopbackSocket();
  const rtcp: Buffer[] = [];
  peerRtcp.on('message', (data) => rtcp.push(data));
  try {
    stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, remoteRtcpPort: peerRtcp.address().port, direction: 'sendrecv' });
    for (let i = 0; i < 10; i++) {
      const packet = Buffer.alloc(172);
      packet[0] = 0x80;
      packet.writeUInt16BE(i, 2);
      packet.writeUInt32BE(i * 160, 4);
      packet.writeUInt32BE(0xabc, 8);
      packet.fill(linearToUlaw(1000 * (i + 1)), 12);
      peer.send(packet, stream.localPort, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.tick();
    }
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.tick();
    }
    stream.close();
    stream.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { values, rtcp, stream, closedCalls };
  } finally {
    peer.close();
    peerRtcp.close();
  }
}

/** Which packets (1–10, sent as 1000·k through u-law) were heard, in order; concealment frames (faded repeats) are not packets. */
function heard(values: number[]): number[] {
  const packets = Array.from({ length: 10 }, (_, k) => ulawToLinear(linearToUlaw(1000 * (k + 1))));
  return values.map((v) => packets.indexOf(v) + 1).filter((k) => k > 0);
}

describe('RTP stream', () => {
  test('through the jitter buffer: every packet heard once, in order; RTCP reports and a BYE from RTP port + 1', async () => {
    const totals = new RtpStreamTotals();
    totals.concealedFrames = 5;
    const { values, rtcp, stream, closedCalls } = await receiveThrough({ jitterBuffer: { minDelayMs: 20, maxDelayMs: 200 }, totals });
    // Closing (twice) added the buffer's counts to the shared totals once: the audio stopped, so frames were concealed.
    assert.equal(closedCalls, 1);
    assert.ok(stream.jitterBuffer!.concealed >= 1, `${stream.jitterBuffer!.concealed} frames concealed`);
    assert.equal(totals.concealedFrames, 5 + stream.jitterBuffer!.concealed);
    assert.equal(totals.latePackets, stream.jitterBuffer!.late);
    // In order and never twice; on a loaded machine (timers late) a packet may come after its time.
    const packets = heard(values);
    assert.ok(packets.length >= 8 && packets.every((k, i) => i === 0 || k > packets[i - 1]), `packets heard: ${packets.join(', ')}`);
    assert.ok(rtcp.length >= 2, `${rtcp.length} RTCP packets`);
    assert.equal(rtcp[0][1], 201, 'RR: nothing was sent');
    const last = rtcp.at(-1)!;
    let offset = 0;
    const types: number[] = [];
    while (offset + 4 <= last.length) {
      types.push(last[offset + 1]);
      offset += (last.readUInt16BE(offset + 2) + 1) * 4;
    }
    assert.deepEqual(types, [201, 202, 203], 'the last one: RR, SDES, BYE');
  });

  test('through the plain receive queue (jitter buffer off): every packet heard once, in order', async () => {
    const { values } = await receiveThrough({});
    assert.deepEqual(heard(values), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('strict RTP (one stream, sockets of its own)', () => {
  function pcmu(sequence: number, ssrc: number): Buffer {
    const packet = Buffer.alloc(172, linearToUlaw(0));
    packet[0] = 0x80;
    packet[1] = 0;
    packet.writeUInt16BE(sequence & 0xffff, 2);
    packet.writeUInt32BE((sequence * 160) >>> 0, 4);
    packet.writeUInt32BE(ssrc, 8);
    return packet;
  }
  const settle = (ms = 30): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

  test('after learning, RTP and RTCP from elsewhere are dropped and counted; a re-INVITE moving the media learns again', async () => {
    const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
    const pair = await range.bindPair('127.0.0.1');
    const clock = new ManualClock();
    const totals = new RtpStreamTotals();
    const reported: string[] = [];
    const stream = new RtpStream(pair.rtp, clock, { onFrame: () => undefined, onDigit: () => undefined, onStranger: (address, port) => reported.push(`${address}:${port}`) }, { rtcpSocket: pair.rtcp, probation: 4, totals });
    const phone = await loopbackSocket();
    const phoneRtcp = await loopbackSocket();
    const attacker = await loopbackSocket();
    const moved = await loopbackSocket();
    const at = new Map<dgram.Socket, number>([[phone, 0], [attacker, 0], [moved, 0]]);
    for (const socket of at.keys()) socket.on('message', () => at.set(socket, at.get(socket)! + 1));
    const frame: Frame = { rate: 8000, samples: new Int16Array(160) };
    try {
      stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: phone.address().port, remoteRtcpPort: phoneRtcp.address().port, direction: 'sendrecv' });
      for (let i = 0; i < 5; i++) phone.send(pcmu(100 + i, 1), stream.localPort, '127.0.0.1');
      await settle();
      for (let i = 0; i < 10; i++) attacker.send(pcmu(600 + i, 2), stream.localPort, '127.0.0.1');
      await settle();
      assert.equal(stream.strangerPackets, 10);
      stream.writeFrame(frame);
      await settle();
      assert.deepEqual([at.get(phone), at.get(attacker)], [1, 0], 'audio goes to the phone');

      // RTCP: a receiver report from the phone's RTCP port is taken; the same from another port is not.
      const rr = Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 1]);
      phoneRtcp.send(rr, pair.rtcp.address().port, '127.0.0.1');
      await settle();
      assert.equal(stream.rtcp.received, 1);
      attacker.send(rr, pair.rtcp.address().port, '127.0.0.1');
      await settle();
      assert.equal(stream.rtcp.received, 1, 'the stranger\'s report was not taken');
      assert.equal(stream.strangerReports, 1);

      // A re-INVITE moves the media: learning again; the new source passes probation and is taken.
      stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: 9, direction: 'sendrecv' });
      // Packets still in flight from the old source are heard, and do not take it back.
      for (let i = 0; i < 5; i++) phone.send(pcmu(105 + i, 1), stream.localPort, '127.0.0.1');
      await settle();
      assert.equal(stream.strangerPackets, 10);
      stream.writeFrame(frame);
      await settle();
      assert.equal(at.get(phone), 1, 'audio goes to the SDP\'s new address, not back to the old source');
      for (let i = 0; i < 4; i++) moved.send(pcmu(300 + i, 3), stream.localPort, '127.0.0.1');
      await settle();
      stream.writeFrame(frame);
      await settle();
      assert.equal(at.get(moved), 1, 'audio follows the newly learned source');
      for (let i = 0; i < 5; i++) phone.send(pcmu(110 + i, 1), stream.localPort, '127.0.0.1');
      await settle();
      // 10 from the stranger, 3 of the new source's while on probation, 5 from the old source now.
      assert.equal(stream.strangerPackets, 18, 'the old source is a stranger now');
      // The technology's totals saw the same; the stranger was reported once (not per packet, not the source on probation).
      assert.equal(totals.strangerPackets, 18);
      assert.equal(totals.strangerReports, 1);
      assert.deepEqual(reported, [`127.0.0.1:${attacker.address().port}`]);
    } finally {
      stream.close();
      for (const socket of at.keys()) socket.close();
      phoneRtcp.close();
    }
  });

  test('another fork\'s SDP (otherFarEnd): the fork left behind is dropped at once and never learned back, strict or not', async () => {
    for (const strictRtp of [true, false]) {
      const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
      const socket = await range.bind('127.0.0.1');
      const stream = new RtpStream(socket, new ManualClock(), { onFrame: () => undefined, onDigit: () => undefined }, { strictRtp, probation: 4, symmetric: true });
      const forkA = await loopbackSocket();
      const forkB = await loopbackSocket();
      const at = new Map<dgram.Socket, number>([[forkA, 0], [forkB, 0]]);
      for (const end of at.keys()) end.on('message', () => at.set(end, at.get(end)! + 1));
      const until = async (what: string, check: () => boolean): Promise<void> => {
        const deadline = Date.now() + 15_000;
        while (!check() && Date.now() < deadline) await settle(10);
        assert.ok(check(), `${what} (strictRtp ${strictRtp})`);
      };
      try {
        stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: forkA.address().port, direction: 'sendrecv' });
        for (let i = 0; i < 5; i++) forkA.send(pcmu(100 + i, 1), stream.localPort, '127.0.0.1');
        await until('fork A heard', () => (stream.statistics()?.rxcount ?? 0) === 5);
        const heard = stream.statistics()?.rxcount ?? 0;
        stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: forkB.address().port, direction: 'sendrecv', otherFarEnd: true });
        // Fork A goes on with its announcement, more packets in sequence than probation asks.
        for (let i = 0; i < 8; i++) forkA.send(pcmu(105 + i, 1), stream.localPort, '127.0.0.1');
        await until('fork A\'s packets dropped', () => stream.strangerPackets === 8);
        assert.equal((stream.statistics()?.rxcount ?? 0), heard, 'nothing of fork A is heard after the switch');
        stream.writeFrame({ rate: 8000, samples: new Int16Array(160) });
        await until('our audio reaches fork B', () => at.get(forkB) === 1);
        assert.equal(at.get(forkA), 0, 'nothing goes back to fork A');
        for (let i = 0; i < 4; i++) forkB.send(pcmu(700 + i, 2), stream.localPort, '127.0.0.1');
        await until('fork B heard', () => (stream.statistics()?.rxcount ?? 0) === heard + 4);
        assert.equal(stream.strangerPackets, 8);
      } finally {
        stream.close();
        forkA.close();
        forkB.close();
      }
    }
  });

  test('while learning, a source that sends out of sequence is not taken, nor anyone when the far end said it sends nothing; strict_rtp off follows any sender', async () => {
    for (const [strictRtp, direction, sequences] of [
      [true, 'sendrecv', [10, 12, 14, 16, 18, 20]],
      [true, 'sendonly', [10, 11, 12, 13, 14, 15]],
      [false, 'sendrecv', [10, 12, 14, 16, 18, 20]],
    ] as const) {
      const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
      const socket = await range.bind('127.0.0.1');
      const stream = new RtpStream(socket, new ManualClock(), { onFrame: () => undefined, onDigit: () => undefined }, { strictRtp });
      const other = await loopbackSocket();
      let got = 0;
      other.on('message', () => (got += 1));
      try {
        stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: 9, direction });
        for (const sequence of sequences) other.send(pcmu(sequence, 5), stream.localPort, '127.0.0.1');
        await settle();
        stream.writeFrame({ rate: 8000, samples: new Int16Array(160) });
        await settle();
        assert.equal(got, strictRtp ? 0 : 1, `strictRtp ${strictRtp} ${direction}`);
        assert.equal(stream.strangerPackets, strictRtp ? 6 : 0);
      } finally {
        stream.close();
        other.close();
      }
    }
  });
  test('symmetric off (rtp_symmetric=no): a learned source is heard but media and reports keep going to the SDP\'s address', async () => {
    const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
    const pair = await range.bindPair('127.0.0.1');
    const stream = new RtpStream(pair.rtp, new ManualClock(), { onFrame: () => undefined, onDigit: () => undefined }, { rtcpSocket: pair.rtcp, probation: 4, symmetric: false });
    const sdpRtp = await loopbackSocket();
    const sdpRtcp = await loopbackSocket();
    const mapped = await loopbackSocket();
    const at = new Map<dgram.Socket, number>([[sdpRtp, 0], [sdpRtcp, 0], [mapped, 0]]);
    for (const socket of at.keys()) socket.on('message', () => at.set(socket, at.get(socket)! + 1));
    try {
      stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: sdpRtp.address().port, remoteRtcpPort: sdpRtcp.address().port, direction: 'sendrecv' });
      // The phone's RTP and RTCP come from a NAT mapping: learned (not strangers) ...
      for (let i = 0; i < 6; i++) mapped.send(pcmu(200 + i, 7), stream.localPort, '127.0.0.1');
      await settle();
      assert.equal(stream.strangerPackets, 3, 'only the packets before it passed probation');
      mapped.send(Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 7]), pair.rtcp.address().port, '127.0.0.1');
      await settle();
      assert.equal(stream.rtcp.received, 1, 'its report is taken');
      // ... but what we send goes to the SDP's ports.
      stream.writeFrame({ rate: 8000, samples: new Int16Array(160) });
      await settle();
      assert.deepEqual([at.get(sdpRtp), at.get(mapped)], [1, 0]);
      stream.close();
      await settle();
      assert.ok(at.get(sdpRtcp)! >= 1, 'the closing RTCP goes to the SDP\'s RTCP port');
      assert.equal(at.get(mapped), 0);
    } finally {
      stream.close();
      for (const socket of at.keys()) socket.close();
    }
  });
});
