// A SIP call's RTP stream with G.722 and Opus on real sockets and a hand-driven media clock: what
// the channel writes leaves coded with the stream's own coder, timestamps advancing by the codec's
// clock (160 a frame for G.722, RFC 3551; 960 for Opus, RFC 7587), and what the far end sends
// reaches the channel as 16 kHz frames with its 6 kHz tone intact, through the jitter buffer and
// through the plain receive queue.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Frame } from '../../../src/media/frame.ts';
import { goertzelPower } from '../../../src/media/goertzel.ts';
import { meanSquare } from '../../../src/media/energy.ts';
import { RtpPortRange } from '../../../src/media/rtp/port-range.ts';
import { RtpStream, type StreamOptions } from '../../../src/media/rtp/stream.ts';
import { createCoder } from '../../../src/media/stream-coder.ts';
import { sine } from '../signals.ts';
import { loopbackSocket } from '../../helpers/loopback-udp.ts';
import { ManualClock } from './manual-clock.ts';

const FRAMES = 25;
/** What the channel writes: 16 kHz frames of a 6 kHz tone. */
const tone = sine(6000, 16000, 320 * FRAMES, 9000);

/** Share of the 6 kHz tone in `samples` at `rate` (after the codec has settled). */
function toneShare(samples: Int16Array, rate: number): number {
  const from = Math.floor(samples.length / 4);
  return goertzelPower(samples, 6000, rate, from, samples.length) / meanSquare(samples, from, samples.length);
}

async function call(codec: 'g722' | 'opus', payloadType: number, options: StreamOptions) {
  const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
  const pair = await range.bindPair('127.0.0.1');
  const clock = new ManualClock();
  const frames: Frame[] = [];
  const stream = new RtpStream(pair.rtp, clock, { onFrame: (frame) => frames.push({ rate: frame.rate, samples: frame.samples.slice() }), onDigit: () => undefined }, { ...options, rtcpSocket: pair.rtcp });
  const peer = await loopbackSocket();
  const received: Buffer[] = [];
  peer.on('message', (data) => received.push(data));
  stream.configure({ codec, payloadType, receiveCodecs: [{ codec, payloadType }], remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' });
  // The far end's coder: what it sends, and how it hears what we send.
  const far = createCoder(codec)!;
  const farFrame = far.rate / 50;
  const farTone = sine(6000, far.rate, farFrame * FRAMES, 9000);
  const payload = new Uint8Array(1275);
  try {
    for (let i = 0; i < FRAMES; i++) {
      stream.writeFrame({ rate: 16000, samples: tone.subarray(i * 320, (i + 1) * 320) });
      const length = far.encoder.encode(farTone.subarray(i * farFrame, (i + 1) * farFrame), farFrame, payload, 0);
      const packet = Buffer.alloc(12 + length);
      packet[0] = 0x80;
      packet[1] = payloadType;
      packet.writeUInt16BE(i, 2);
      packet.writeUInt32BE((0xfffff000 + i * (codec === 'g722' ? 160 : 960)) >>> 0, 4); // across the 32-bit wrap
      packet.writeUInt32BE(0xabc, 8);
      packet.set(payload.subarray(0, length), 12);
      peer.send(packet, stream.localPort, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.tick();
    }
    for (let i = 0; i < 15; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.tick();
    }
  } finally {
    stream.close();
    peer.close();
  }
  // What we sent, decoded by the far end.
  const heardByFar = new Int16Array(farFrame * received.length);
  const audio = received.filter((packet) => (packet[1] & 0x7f) === payloadType);
  let written = 0;
  for (const packet of audio) written += far.decoder.decode(packet, 12, packet.length, heardByFar.subarray(written));
  const steps = audio.slice(1).map((packet, i) => (packet.readUInt32BE(4) - audio[i].readUInt32BE(4)) >>> 0);
  const heardByUs = new Int16Array(frames.reduce((sum, frame) => sum + frame.samples.length, 0));
  frames.reduce((offset, frame) => (heardByUs.set(frame.samples, offset), offset + frame.samples.length), 0);
  return { audio, steps, heardByFar: heardByFar.subarray(0, written), frames, heardByUs, rate: far.rate };
}

describe('RTP stream with G.722 and Opus', () => {
  for (const [codec, payloadType, clockStep] of [
    ['g722', 9, 160],
    ['opus', 107, 960],
  ] as const) {
    for (const [path, options] of [
      ['jitter buffer', { jitterBuffer: { minDelayMs: 40, maxDelayMs: 200 } }],
      ['plain receive queue', {}],
    ] as const) {
      test(`${codec} through the ${path}: sent with the codec's clock, frames at the codec's rate with the 6 kHz tone both ways`, async () => {
        const result = await call(codec, payloadType, options);
        assert.equal(result.audio.length, FRAMES, 'one packet per frame written');
        assert.ok(result.steps.every((step) => step === clockStep), `timestamp steps ${[...new Set(result.steps)]}`);
        if (codec === 'g722') assert.ok(result.audio.every((packet) => packet.length === 12 + 160), '160 bytes of G.722 per 20 ms');
        assert.ok(toneShare(result.heardByFar, result.rate) > 0.8, `the far end hears 6 kHz: ${toneShare(result.heardByFar, result.rate).toFixed(2)}`);
        assert.ok(result.frames.length >= FRAMES - 5, `${result.frames.length} frames reached the channel`);
        assert.ok(result.frames.every((frame) => frame.rate === result.rate && frame.samples.length === result.rate / 50), `at the codec's rate, ${result.rate} Hz`);
        assert.ok(result.rate >= 16000, 'wideband');
        assert.ok(toneShare(result.heardByUs, result.rate) > 0.6, `we hear 6 kHz: ${toneShare(result.heardByUs, result.rate).toFixed(2)}`);
      });
    }
  }

  test('inband DTMF on a G.722 call: a digit in the 16 kHz audio is heard (detected at 8 kHz)', async () => {
    const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
    const pair = await range.bindPair('127.0.0.1');
    const clock = new ManualClock();
    const digits: string[] = [];
    const stream = new RtpStream(pair.rtp, clock, { onFrame: () => undefined, onDigit: (digit) => digits.push(digit) }, { rtcpSocket: pair.rtcp });
    const peer = await loopbackSocket();
    stream.configure({ codec: 'g722', payloadType: 9, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv', inbandDtmf: true });
    const far = createCoder('g722')!;
    // Digit 5: 770 Hz and 1336 Hz for 200 ms, then 200 ms of silence.
    const low = sine(770, 16000, 320 * 20, 6000);
    const high = sine(1336, 16000, 320 * 20, 6000);
    const audio = new Int16Array(320 * 20);
    for (let i = 0; i < 320 * 10; i++) audio[i] = low[i] + high[i];
    const payload = new Uint8Array(160);
    try {
      for (let i = 0; i < 20; i++) {
        far.encoder.encode(audio.subarray(i * 320, (i + 1) * 320), 320, payload, 0);
        const packet = Buffer.alloc(12 + 160);
        packet[0] = 0x80;
        packet[1] = 9;
        packet.writeUInt16BE(i, 2);
        packet.writeUInt32BE(i * 160, 4);
        packet.writeUInt32BE(0xdef, 8);
        packet.set(payload, 12);
        peer.send(packet, stream.localPort, '127.0.0.1');
        await new Promise((resolve) => setTimeout(resolve, 20));
        clock.tick();
      }
      for (let i = 0; i < 10; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        clock.tick();
      }
    } finally {
      stream.close();
      peer.close();
    }
    assert.deepEqual(digits, ['5']);
  });

  test('telephone-events on the Opus clock (telephone-event/48000): durations count 48000 a second both ways', async () => {
    const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
    const pair = await range.bindPair('127.0.0.1');
    const clock = new ManualClock();
    const digits: Array<[string, number]> = [];
    const stream = new RtpStream(pair.rtp, clock, { onFrame: () => undefined, onDigit: (digit, ms) => digits.push([digit, ms]) }, { rtcpSocket: pair.rtcp });
    const peer = await loopbackSocket();
    const received: Buffer[] = [];
    peer.on('message', (data) => received.push(data));
    stream.configure({ codec: 'opus', payloadType: 107, telephoneEventPt: 100, telephoneEventRate: 48000, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' });
    try {
      assert.equal(stream.sendDigit('5', 100), true);
      // The far end's digit 7 for 200 ms, in three packets of one event (the last with the end bit).
      for (const [duration, end] of [
        [960, false],
        [4800, false],
        [9600, true],
      ] as const) {
        const packet = Buffer.alloc(16);
        packet[0] = 0x80;
        packet[1] = 100;
        packet.writeUInt16BE(duration / 960, 2);
        packet.writeUInt32BE(48_000, 4);
        packet.writeUInt32BE(0xfeed, 8);
        packet[12] = 7;
        packet[13] = (end ? 0x80 : 0) | 10;
        packet.writeUInt16BE(duration, 14);
        peer.send(packet, stream.localPort, '127.0.0.1');
      }
      for (let i = 0; i < 15; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        clock.tick();
      }
    } finally {
      stream.close();
      peer.close();
    }
    assert.deepEqual(digits, [['7', 200]]);
    const events = received.filter((packet) => (packet[1] & 0x7f) === 100);
    assert.ok(events.length >= 5, `${events.length} event packets`);
    const durations = events.map((packet) => packet.readUInt16BE(14));
    assert.equal(durations[0], 960, '20 ms on the 48 kHz clock');
    assert.equal(Math.max(...durations), 4800, '100 ms on the 48 kHz clock');
    assert.ok(events.every((packet) => packet[12] === 5));
  });
});
