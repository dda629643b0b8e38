// SRTP on a real stream: the far end (a socket the test owns, protecting with its own SrtpSession)
// sends SRTP and the stream's channel hears the audio; what the stream sends decrypts with the far
// end's session and is not plain RTP; SRTCP reports go both ways; a forged or replayed packet is
// dropped and counted, never heard.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { createFrame, type Frame } from '../../../src/media/frame.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import { RtpStream, RtpStreamTotals } from '../../../src/media/rtp/stream.ts';
import { SrtpSession } from '../../../src/media/srtp/session.ts';
import type { SrtpMasterKey } from '../../../src/media/srtp/suites.ts';
import { loopbackSocket } from '../../helpers/loopback-udp.ts';
import { ManualClock } from '../rtp/manual-clock.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('SRTP both ways on a stream, SRTCP on the RTCP port, forged and replayed packets dropped and counted', async () => {
  const ours: SrtpMasterKey = { suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: randomBytes(30) };
  const theirs: SrtpMasterKey = { suite: 'AES_CM_128_HMAC_SHA1_32', keySalt: randomBytes(30) };
  const far = new SrtpSession(theirs, ours);
  const [rtp, rtcp, peer, peerRtcp] = await Promise.all([loopbackSocket(), loopbackSocket(), loopbackSocket(), loopbackSocket()]);
  const clock = new ManualClock();
  const values: number[] = [];
  const totals = new RtpStreamTotals();
  const stream = new RtpStream(rtp, clock, { onFrame: (frame: Frame) => values.push(frame.samples[80]), onDigit: () => undefined }, { rtcpSocket: rtcp, rtcpIntervalMs: 200, totals, symmetric: false });
  const sentToPeer: Buffer[] = [];
  const reports: number[] = [];
  peer.on('message', (data) => sentToPeer.push(Buffer.from(data)));
  peerRtcp.on('message', (data) => reports.push(far.unprotectRtcp(data, data.length)));
  try {
    stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, remoteRtcpPort: peerRtcp.address().port, direction: 'sendrecv', protection: new SrtpSession(ours, theirs) });
    const tone = createFrame(8000);
    tone.samples.fill(3000);
    let replay: Buffer | undefined;
    for (let i = 0; i < 12; i++) {
      const packet = Buffer.alloc(172 + 32);
      packet[0] = 0x80;
      packet.writeUInt16BE(65530 + i > 65535 ? i - 6 : 65530 + i, 2);
      packet.writeUInt32BE(i * 160, 4);
      packet.writeUInt32BE(0xabc, 8);
      packet.fill(linearToUlaw(1000 * (i + 1)), 12, 172);
      const length = far.protectRtp(packet, 172);
      peer.send(packet.subarray(0, length), stream.localPort, '127.0.0.1');
      if (i === 3) replay = Buffer.from(packet.subarray(0, length));
      if (i === 5) {
        const forged = Buffer.from(packet.subarray(0, length));
        forged[40] ^= 0x10;
        forged.writeUInt16BE(7, 2);
        peer.send(forged, stream.localPort, '127.0.0.1');
      }
      stream.writeFrame(tone);
      await pause(20);
      clock.tick();
    }
    peer.send(replay!, stream.localPort, '127.0.0.1');
    for (let i = 0; i < 25; i++) {
      await pause(20);
      clock.tick();
    }
    const expected = Array.from({ length: 12 }, (_, k) => ulawToLinear(linearToUlaw(1000 * (k + 1))));
    assert.deepEqual(values.filter((v) => expected.includes(v)).map((v) => expected.indexOf(v) + 1), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 'every packet heard once, across the sequence wrap');
    assert.equal(stream.srtpRefusedPackets, 2, 'the forged packet and the replay');
    assert.equal(totals.srtpRefusedPackets, 2);
    assert.ok(sentToPeer.length >= 12);
    for (const packet of sentToPeer) {
      assert.equal(packet.length, 172 + 10, 'SRTP with the 80-bit tag of our suite');
      assert.notEqual(packet.subarray(12, 172).toString('hex'), Buffer.alloc(160, linearToUlaw(3000)).toString('hex'), 'no plain audio on the wire');
      const length = far.unprotectRtp(packet, packet.length);
      assert.equal(length, 172);
      assert.ok(packet.subarray(12, 172).every((byte) => byte === linearToUlaw(3000)));
    }
    assert.ok(reports.length >= 1 && reports.every((length) => length > 0), `SRTCP reports decrypt: ${reports.join(',')}`);
    // SRTCP the other way: a receiver report from the far end is taken, a forged one refused.
    const rr = Buffer.alloc(8 + 64);
    rr.set([0x80, 201, 0, 1]);
    rr.writeUInt32BE(0xabc, 4);
    const length = far.protectRtcp(rr, 8);
    const before = stream.rtcp.received;
    peerRtcp.send(rr.subarray(0, length), rtcp.address().port, '127.0.0.1');
    const bad = Buffer.from(rr.subarray(0, length));
    bad[length - 1] ^= 1;
    peerRtcp.send(bad, rtcp.address().port, '127.0.0.1');
    // Both read (bounded) rather than 100 ms later: the socket is read when a loaded loop gets to it.
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && (stream.rtcp.received < before + 1 || stream.srtpRefusedPackets < 3); ) await pause(10);
    await pause(50);
    assert.equal(stream.rtcp.received, before + 1);
    assert.equal(stream.srtpRefusedPackets, 3);
  } finally {
    stream.close();
    await pause(50);
    peer.close();
    peerRtcp.close();
  }
});
