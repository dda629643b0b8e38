// RTCP (RFC 3550 6): reports written byte by byte as the RFC lays them out, compound packets from
// a far end read back (and hostile ones refused without throwing), and the session's timing, SR/RR
// choice, LSR/DLSR and round-trip time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RtpPayloadCoder } from '../../../src/media/rtp/payload.ts';
import { RtpReceiverStats } from '../../../src/media/rtp/receiver-stats.ts';
import { NtpTime, readRtcpCompound, RtcpReading, writeBye, writeReceiverReport, writeSdesCname, writeSenderReport, looksLikeRtcp } from '../../../src/media/rtp/rtcp-packet.ts';
import { RtcpSession } from '../../../src/media/rtp/rtcp-session.ts';
import { RtpSender } from '../../../src/media/rtp/sender.ts';
import { rtpStatistics } from '../../../src/media/rtp/statistics.ts';

const block = {
  ssrc: 0xaabbccdd,
  fractionLost: 64,
  cumulativeLost: 5,
  extendedHighestSequence: 0x0001_0010,
  jitter: 123,
  lastSr: 0x1234_5678,
  delaySinceLastSr: 0x0001_8000,
};

describe('RTCP packets', () => {
  test('NTP time: seconds since 1900 and the fraction; the middle 32 bits', () => {
    const ntp = new NtpTime().setFromUnixMs(1_700_000_000_500);
    assert.equal(ntp.seconds, 1_700_000_000 + 2_208_988_800);
    assert.equal(ntp.fraction, 0x8000_0000);
    assert.equal(ntp.middle, (((ntp.seconds & 0xffff) << 16) | 0x8000) >>> 0);
  });

  test('a sender report with one block is laid out as RFC 3550 6.4.1 says', () => {
    const buffer = new Uint8Array(64);
    const ntp = new NtpTime().setFromUnixMs(1_700_000_000_250);
    const length = writeSenderReport(buffer, 0, 0x01020304, ntp, 0xdeadbeef, 1000, 160_000, block);
    assert.equal(length, 52);
    const view = Buffer.from(buffer.buffer, 0, length);
    assert.equal(view[0], 0x81, 'V=2, P=0, RC=1');
    assert.equal(view[1], 200);
    assert.equal(view.readUInt16BE(2), 12, 'length in words minus one');
    assert.equal(view.readUInt32BE(4), 0x01020304);
    assert.equal(view.readUInt32BE(8), ntp.seconds);
    assert.equal(view.readUInt32BE(12), ntp.fraction);
    assert.equal(view.readUInt32BE(16), 0xdeadbeef);
    assert.equal(view.readUInt32BE(20), 1000);
    assert.equal(view.readUInt32BE(24), 160_000);
    assert.equal(view.readUInt32BE(28), 0xaabbccdd);
    assert.equal(view[32], 64);
    assert.equal(view.readUIntBE(33, 3), 5);
    assert.equal(view.readUInt32BE(36), 0x0001_0010);
    assert.equal(view.readUInt32BE(40), 123);
    assert.equal(view.readUInt32BE(44), 0x1234_5678);
    assert.equal(view.readUInt32BE(48), 0x0001_8000);
  });

  test('RR + SDES CNAME + BYE as one compound packet, read back', () => {
    const buffer = new Uint8Array(200);
    let length = writeReceiverReport(buffer, 0, 0x11111111, { ...block, cumulativeLost: -3 });
    assert.equal(length, 32);
    const sdes = writeSdesCname(buffer, length, 0x11111111, Buffer.from('patchbay@host'));
    assert.equal(sdes % 4, 0, 'SDES padded to 32 bits');
    assert.equal(buffer[length + 8], 1, 'CNAME item');
    assert.equal(buffer[length + 9], 13);
    length += sdes;
    length += writeBye(buffer, length, 0x11111111);
    const reading = new RtcpReading();
    assert.equal(readRtcpCompound(buffer, length, 0xaabbccdd, reading), true);
    assert.equal(reading.senderSsrc, 0x11111111);
    assert.equal(reading.hasSenderInfo, false);
    assert.equal(reading.hasBlock, true);
    assert.equal(reading.cumulativeLost, -3, 'signed 24-bit');
    assert.equal(reading.fractionLost, 64);
    assert.equal(reading.jitter, 123);
    assert.equal(reading.lastSr, 0x1234_5678);
    assert.equal(reading.bye, true);
    // A block about somebody else is not ours.
    assert.equal(readRtcpCompound(buffer, length, 0x99, reading), true);
    assert.equal(reading.hasBlock, false);
  });

  test('hostile datagrams: refused or read within their bounds, never thrown on', () => {
    const reading = new RtcpReading();
    assert.equal(readRtcpCompound(new Uint8Array(0), 0, 1, reading), false);
    assert.equal(readRtcpCompound(Uint8Array.of(0x80, 0, 0, 1, 0, 0, 0, 0), 8, 1, reading), false, 'RTP, not RTCP');
    assert.equal(readRtcpCompound(Uint8Array.of(0x40, 201, 0, 1, 0, 0, 0, 0), 8, 1, reading), false, 'version 1');
    // An RR claiming 31 blocks in a packet of 8 bytes, and a length beyond the datagram.
    assert.equal(readRtcpCompound(Uint8Array.of(0x9f, 201, 0, 1, 0, 0, 0, 1), 8, 1, reading), true);
    assert.equal(reading.hasBlock, false);
    assert.equal(readRtcpCompound(Uint8Array.of(0x81, 201, 0xff, 0xff, 0, 0, 0, 1), 8, 1, reading), false);
    let seed = 1;
    const buffer = new Uint8Array(600);
    for (let i = 0; i < 5000; i++) {
      for (let j = 0; j < buffer.length; j++) buffer[j] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
      buffer[0] = 0x80 | (buffer[0] & 0x3f);
      buffer[1] = 200 + (i % 2);
      readRtcpCompound(buffer, 1 + (i % buffer.length), 5, reading);
    }
    assert.equal(looksLikeRtcp(Uint8Array.of(0x80, 200, 0, 6, 0, 0, 0, 0), 8), true);
    assert.equal(looksLikeRtcp(Uint8Array.of(0x80, 0x80, 0, 6, 0, 0, 0, 0), 8), false, 'PCMU with the marker bit');
  });
});

describe('RTCP session', () => {
  test('SR after sending media, RR when nothing was sent since; the block reports the source received', () => {
    const sender = new RtpSender(new RtpPayloadCoder('ulaw'), { ssrc: 0x5555, sequence: 0, timestamp: 1000 });
    const receiver = new RtpReceiverStats(8000);
    for (let seq = 0; seq < 50; seq++) if (seq !== 10) receiver.update(0x7777, seq, seq * 160, 160, seq * 20);
    const session = new RtcpSession(5000);
    assert.equal(session.due(0), false);
    assert.equal(session.due(2400), false);
    assert.equal(session.due(2500), true, 'the first report half an interval in');
    sender.audio(new Int16Array(160), 1);
    let length = session.build(sender, receiver, 2500, 1_700_000_000_000);
    const reading = new RtcpReading();
    assert.equal(session.packet[1], 200, 'SR');
    assert.equal(readRtcpCompound(session.packet, length, 0x7777, reading), true);
    assert.equal(reading.senderSsrc, 0x5555);
    assert.equal(reading.srPackets, 1);
    assert.equal(reading.hasBlock, true);
    assert.equal(reading.cumulativeLost, 1);
    assert.equal(reading.extendedHighestSequence, 49);
    assert.equal(reading.fractionLost, Math.floor(256 / 50));
    assert.equal(reading.lastSr, 0, 'no SR received yet');
    assert.equal(session.due(2500 + 2400), false, 'the next one at least half an interval later');
    assert.equal(session.due(2500 + 7600), true, 'and at most one and a half');
    length = session.build(sender, receiver, 10_000, 1_700_000_007_500, true);
    assert.equal(session.packet[1], 201, 'RR: nothing sent since');
    assert.equal(readRtcpCompound(session.packet, length, 0x7777, reading), true);
    assert.equal(reading.bye, true);
    assert.equal(reading.fractionLost, 0, 'no loss in the second interval');
  });

  test('LSR/DLSR from the far end\'s SR, round-trip time from its report about us, and statistics', () => {
    const sender = new RtpSender(new RtpPayloadCoder('ulaw'), { ssrc: 0x5555 });
    const receiver = new RtpReceiverStats(8000);
    receiver.update(0x7777, 1, 160, 160, 0);
    const ours = new RtcpSession(5000);
    const theirs = new RtcpSession(5000);
    const theirSender = new RtpSender(new RtpPayloadCoder('ulaw'), { ssrc: 0x7777 });
    const theirReceiver = new RtpReceiverStats(8000);
    theirSender.audio(new Int16Array(160), 1);
    sender.audio(new Int16Array(160), 1);
    theirReceiver.update(0x5555, 7, 0, 160, 0);
    // Their SR reaches us at t = 1000 ms (wall clock 10 s later than their send time, no matter).
    let length = theirs.build(theirSender, theirReceiver, 1000, 1_700_000_000_000);
    assert.equal(ours.receive(theirs.packet, length, 0x5555, 1000, 1_700_000_000_000), true);
    // We report 250 ms later: LSR is their SR's NTP middle bits, DLSR 250 ms.
    length = ours.build(sender, receiver, 1250, 1_700_000_000_250);
    const reading = new RtcpReading();
    readRtcpCompound(ours.packet, length, 0x7777, reading);
    assert.equal(reading.lastSr, new NtpTime().setFromUnixMs(1_700_000_000_000).middle);
    assert.equal(reading.delaySinceLastSr, 0.25 * 65536);
    // Their RR about us arrives carrying our LSR: 40 ms round trip (sent at 0 ms, 10 ms out, held 20 ms, 10 ms back).
    const lsr = new NtpTime().setFromUnixMs(1_700_000_001_000).middle;
    const rr = new Uint8Array(64);
    length = writeReceiverReport(rr, 0, 0x7777, { ssrc: 0x5555, fractionLost: 0, cumulativeLost: 3, extendedHighestSequence: 100, jitter: 80, lastSr: lsr, delaySinceLastSr: Math.round(0.02 * 65536) });
    assert.equal(ours.receive(rr, length, 0x5555, 2040, 1_700_000_001_040), true);
    assert.ok(Math.abs(ours.rtt - 0.02) < 0.001, `rtt ${ours.rtt}`);
    const statistics = rtpStatistics(sender, receiver, ours);
    assert.equal(statistics.txploss, 3);
    assert.equal(statistics.txjitter, 0.01);
    assert.ok(Math.abs(statistics.rtt - 0.02) < 0.001);
    assert.equal(statistics.maxrtt, statistics.rtt);
    assert.equal(statistics.remote_maxrxploss, 3);
    // Not RTCP, or a negative round trip: ignored.
    assert.equal(ours.receive(Uint8Array.of(0x80, 0, 0, 0), 4, 0x5555, 3000, 1_700_000_002_000), false);
    writeReceiverReport(rr, 0, 0x7777, { ssrc: 0x5555, fractionLost: 0, cumulativeLost: 3, extendedHighestSequence: 100, jitter: 80, lastSr: lsr, delaySinceLastSr: 65536 * 100 });
    ours.receive(rr, length, 0x5555, 3000, 1_700_000_001_050);
    assert.equal(ours.rttSpread.count, 1);
  });
});
