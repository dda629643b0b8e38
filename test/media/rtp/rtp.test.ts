// The RTP media library: header writing and parsing, payload coding from the codec table, the
// sender's timestamps and markers, RFC 3550 receiver statistics, and RFC 4733 telephone-events.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { codecInfo, KNOWN_CODEC_NAMES } from '../../../src/media/codecs.ts';
import { parseRtpPacket, RtpHeader, RTP_HEADER_BYTES, writeRtpHeader } from '../../../src/media/rtp/packet.ts';
import { RtpPayloadCoder } from '../../../src/media/rtp/payload.ts';
import { ReceiveQueue } from '../../../src/media/rtp/receive-queue.ts';
import { RtpReceiverStats } from '../../../src/media/rtp/receiver-stats.ts';
import { RtpSender } from '../../../src/media/rtp/sender.ts';
import {
  decodeTelephoneEvent,
  dtmfDigitOf,
  dtmfEventCode,
  encodeTelephoneEvent,
  TelephoneEvent,
  TelephoneEventReceiver,
  TelephoneEventSender,
} from '../../../src/media/rtp/telephone-event.ts';

describe('codec table', () => {
  test('one table: names, payload types, clock rates, sample sizes, byte order', () => {
    assert.deepEqual(KNOWN_CODEC_NAMES, ['ulaw', 'alaw', 'slin', 'slin16', 'g722', 'opus', 'gsm', 'g729', 'slin24', 'slin48']);
    assert.deepEqual(codecInfo('slin16'), { name: 'slin16', payloadType: 118, clockRate: 16000, sampleBytes: 2, byteOrder: 'big' });
    assert.equal(codecInfo('g722')?.clockRate, 8000);
    assert.equal(codecInfo('nope'), undefined);
  });
});

describe('packets', () => {
  test('a header written is read back, with the payload bounds', () => {
    const packet = new Uint8Array(RTP_HEADER_BYTES + 4);
    writeRtpHeader(packet, true, 101, 0xfffe, 0xdeadbeef, 0x01020304);
    const header = new RtpHeader();
    assert.equal(parseRtpPacket(packet, packet.length, header), true);
    assert.deepEqual(
      [header.marker, header.payloadType, header.sequence, header.timestamp, header.ssrc, header.payloadStart, header.payloadEnd],
      [true, 101, 0xfffe, 0xdeadbeef, 0x01020304, 12, 16],
    );
  });

  test('CSRCs, an extension and padding are skipped; malformed datagrams are refused', () => {
    const packet = new Uint8Array(12 + 4 + 8 + 3 + 2);
    writeRtpHeader(packet, false, 0, 1, 2, 3);
    packet[0] |= 0x01 | 0x10 | 0x20; // one CSRC, extension, padding
    packet[12 + 4 + 3] = 1; // extension length: one word
    packet[packet.length - 1] = 2; // two bytes of padding
    const header = new RtpHeader();
    assert.equal(parseRtpPacket(packet, packet.length, header), true);
    assert.equal(header.payloadStart, 12 + 4 + 8);
    assert.equal(header.payloadBytes, 3);
    assert.equal(parseRtpPacket(packet, 8, header), false);
    const v1 = new Uint8Array(12);
    v1[0] = 0x40;
    assert.equal(parseRtpPacket(v1, 12, header), false);
  });
});

describe('payloads', () => {
  test('L16 is big-endian in RTP, G.711 one byte per sample', () => {
    const slin = new RtpPayloadCoder('slin');
    const bytes = new Uint8Array(6);
    assert.equal(slin.encode(Int16Array.from([0x1234, -2]), bytes, 2), 4);
    assert.deepEqual([...bytes], [0, 0, 0x12, 0x34, 0xff, 0xfe]);
    const back = new Int16Array(2);
    assert.equal(slin.decode(bytes, 2, 6, back), 2);
    assert.deepEqual([...back], [0x1234, -2]);
    const ulaw = new RtpPayloadCoder('ulaw');
    assert.equal(ulaw.payloadType, 0);
    assert.equal(ulaw.encode(new Int16Array(160), new Uint8Array(160), 0), 160);
    assert.equal(new RtpPayloadCoder('alaw', 97).payloadType, 97, 'a negotiated payload type');
    assert.throws(() => new RtpPayloadCoder('g729'), RangeError);
  });
});

describe('sender', () => {
  test('sequence and timestamp advance per tick; a gap advances the timestamp and sets the marker', () => {
    const sender = new RtpSender(new RtpPayloadCoder('ulaw'), { ssrc: 7, sequence: 0xffff, timestamp: 1000 });
    const header = new RtpHeader();
    const samples = new Int16Array(160);
    const read = (length: number) => {
      assert.equal(parseRtpPacket(sender.packet, length, header), true);
      return [header.marker, header.sequence, header.timestamp, header.ssrc, header.payloadBytes];
    };
    assert.deepEqual(read(sender.audio(samples, 10)), [true, 0xffff, 1000, 7, 160]);
    assert.deepEqual(read(sender.audio(samples, 11)), [false, 0, 1160, 7, 160]);
    assert.deepEqual(read(sender.audio(samples, 14)), [true, 1, 1640, 7, 160]);
    assert.equal(sender.packets, 3);
    assert.equal(sender.octets, 480);
  });

  test('a G.711 ring is sized for its 20 ms frames; a bigger payload (reflected, a longer frame) grows it once and comes out whole', () => {
    const sender = new RtpSender(new RtpPayloadCoder('ulaw'), { ssrc: 7, sequence: 0, timestamp: 0 });
    const header = new RtpHeader();
    const frame = new Int16Array(160).fill(1000);
    const small = sender.audio(frame, 1);
    assert.equal(small, RTP_HEADER_BYTES + 160);
    assert.ok(sender.packet.length < RTP_HEADER_BYTES + 160 + 64, `slot of ${sender.packet.length} bytes for a 160-byte payload`);
    const first = sender.packet;
    // A far end with 60 ms packets, reflected as they came: the whole payload goes out.
    const reflected = Buffer.alloc(480, 0x5a);
    const length = sender.copy(reflected, 0, reflected.length, 480, false, 2);
    assert.equal(parseRtpPacket(sender.packet, length, header), true);
    assert.equal(header.payloadBytes, 480);
    assert.ok(sender.packet.subarray(header.payloadStart, header.payloadStart + 480).every((byte) => byte === 0x5a));
    // The packet built before the growth is left as it was (it may still be in flight).
    assert.equal(parseRtpPacket(first, small, header), true);
    assert.equal(header.payloadBytes, 160);
    // Longer than the most a packet carries: cut to it, as before.
    const huge = Buffer.alloc(4000, 1);
    assert.equal(sender.copy(huge, 0, huge.length, 960, false, 3), RTP_HEADER_BYTES + 1280);
    // A 40 ms frame coded: its 320 bytes fit.
    assert.equal(sender.audio(new Int16Array(320).fill(-1000), 4), RTP_HEADER_BYTES + 320);
    // Grown to the most, the ring is made no more, whatever comes: the slots go round as before.
    const slots = new Set<ArrayBufferLike>();
    for (let tick = 5; tick < 5 + 32; tick++) {
      sender.copy(huge, 0, huge.length, tick * 160, false, tick);
      slots.add(sender.packet.buffer);
    }
    assert.equal(slots.size, 1, 'one ring buffer under every slot');
    // A frame whose payload is past the most (20 ms of 48 kHz L16) does not make a ring per packet either.
    const wide = new RtpSender(new RtpPayloadCoder('slin48'), { ssrc: 8, sequence: 0, timestamp: 0 });
    const wideSlots = new Set<ArrayBufferLike>();
    for (let tick = 1; tick <= 32; tick++) {
      wide.audio(new Int16Array(960), tick);
      wideSlots.add(wide.packet.buffer);
    }
    assert.equal(wideSlots.size, 1, 'one ring buffer for every packet');
  });
});

describe('receiver statistics (RFC 3550)', () => {
  test('loss from extended sequence numbers, across a wrap', () => {
    const stats = new RtpReceiverStats(8000);
    for (const seq of [65534, 65535, 1, 2]) stats.update(9, seq, seq * 160, 160, seq * 20);
    assert.equal(stats.expected, 5);
    assert.equal(stats.lost, 1);
    assert.equal(stats.extendedHighestSequence, 65536 + 2);
    assert.equal(stats.takeFractionLost(), Math.floor((1 << 8) / 5));
    assert.equal(stats.takeFractionLost(), 0, 'a new interval');
  });

  test('jitter is zero for packets on time and grows with late ones', () => {
    const stats = new RtpReceiverStats(8000);
    for (let i = 0; i < 10; i++) stats.update(1, i, i * 160, 160, i * 20);
    assert.equal(stats.jitterSeconds, 0);
    stats.update(1, 10, 1600, 160, 10 * 20 + 16);
    assert.ok(stats.jitterSeconds > 0);
  });
});

describe('receive queue', () => {
  test('re-frames any packet size into 20 ms frames', () => {
    const queue = new ReceiveQueue(8000);
    const samples = Int16Array.from({ length: 100 }, (_, i) => i);
    queue.pushFrom(samples, 100);
    assert.equal(queue.next(), undefined);
    queue.pushFrom(samples, 100);
    const frame = queue.next()!;
    assert.equal(frame.samples.length, 160);
    assert.equal(frame.samples[99], 99);
    assert.equal(frame.samples[100], 0);
    assert.equal(queue.queued, 40);
  });
});

describe('telephone-events (RFC 4733)', () => {
  test('digits and event codes', () => {
    assert.equal(dtmfEventCode('5'), 5);
    assert.equal(dtmfEventCode('*'), 10);
    assert.equal(dtmfEventCode('#'), 11);
    assert.equal(dtmfEventCode('d'), 15);
    assert.equal(dtmfEventCode('x'), -1);
    assert.equal(dtmfDigitOf(12), 'A');
    assert.equal(dtmfDigitOf(16), undefined);
  });

  test('a payload round-trips', () => {
    const bytes = new Uint8Array(4);
    encodeTelephoneEvent(bytes, 0, 11, true, 10, 800);
    assert.deepEqual([...bytes], [11, 0x80 | 10, 0x03, 0x20]);
    const event = new TelephoneEvent();
    assert.equal(decodeTelephoneEvent(bytes, 0, 4, event), true);
    assert.deepEqual([event.event, event.end, event.volume, event.duration], [11, true, 10, 800]);
    assert.equal(decodeTelephoneEvent(bytes, 0, 3, event), false);
  });

  test('the sender schedules a digit; the receiver reports it once, with its duration', () => {
    const sender = new TelephoneEventSender(8000);
    assert.equal(sender.begin('x', 100, 0), false);
    assert.equal(sender.begin('7', 100, 4000), true);
    const heard: [string, number][] = [];
    const began: string[] = [];
    const receiver = new TelephoneEventReceiver(8000, (digit, ms) => heard.push([digit, ms]), (digit) => began.push(digit));
    const payload = new Uint8Array(4);
    const markers: boolean[] = [];
    const announced: boolean[] = [];
    let packets = 0;
    while (sender.active) {
      announced.push(sender.nextStartsDigit);
      assert.equal(sender.next(payload, 0), true);
      markers.push(sender.marker);
      receiver.push(payload, 0, 4, sender.timestamp);
      packets += 1;
    }
    // 100 ms: five updates (the fifth ends the event), then two more ends.
    assert.equal(packets, 7);
    assert.deepEqual(markers, [true, false, false, false, false, false, false]);
    // The marker is known before the packet is written (the RTP header comes first).
    assert.deepEqual(announced, markers);
    assert.equal(sender.nextStartsDigit, false);
    assert.deepEqual(began, ['7']);
    assert.deepEqual(heard, [['7', 100]]);
    assert.equal(sender.next(payload, 0), false);
  });

  test('a new event before the old one ended reports the old one', () => {
    const heard: string[] = [];
    const receiver = new TelephoneEventReceiver(8000, (digit) => heard.push(digit));
    const payload = new Uint8Array(4);
    encodeTelephoneEvent(payload, 0, 1, false, 10, 160);
    receiver.push(payload, 0, 4, 100);
    encodeTelephoneEvent(payload, 0, 2, true, 10, 160);
    receiver.push(payload, 0, 4, 900);
    receiver.push(payload, 0, 4, 900);
    assert.deepEqual(heard, ['1', '2']);
  });
});

describe('timestamps of codecs whose clock is not their audio rate', () => {
  test('G.722 (clock 8000, 16 kHz audio) and Opus (clock 48000) map to samples steadily across the 32-bit wrap; a hostile jump stays bounded', () => {
    const g722 = new RtpPayloadCoder('g722', 9);
    const first = g722.sampleTimestamp(0xffffff60, 16000);
    assert.equal(g722.sampleTimestamp(0x00000000, 16000), (first + 320) >>> 0, '160 clock units are 320 samples, across the wrap');
    assert.equal(g722.sampleTimestamp(0x000000a0, 16000), (first + 640) >>> 0);
    const opus = new RtpPayloadCoder('opus', 107);
    const start = opus.sampleTimestamp(0xfffffe00, 16000);
    let expected = start;
    for (let i = 1; i <= 10; i++) {
      expected = (expected + 320) >>> 0;
      assert.equal(opus.sampleTimestamp((0xfffffe00 + i * 960) >>> 0, 16000), expected, '960 clock units are 320 samples at 16 kHz');
    }
    // A far end jumping back and forth by 2^31 for a long while: the numbers never grow.
    for (let i = 0; i < 100_000; i++) {
      const value = opus.sampleTimestamp(i % 2 === 0 ? 0x80000000 : 0, 16000);
      assert.ok(Number.isInteger(value) && value >= 0 && value < 2 ** 32);
    }
    assert.equal(g722.sampleTimestamp(5, 8000), 5, 'at the clock rate the timestamp is its own');
  });
});
