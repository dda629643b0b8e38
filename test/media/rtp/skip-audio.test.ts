// RtpStream.skipAudio (issue 25): while nothing reads a stream's received audio (a media worker
// plays a sound to it by itself) its packets are counted but not decoded or buffered — no frame
// is delivered, yet the RTP statistics go on and an RFC 4733 digit is still reported; when the
// skip ends, audio resumes from the next packet with nothing stale from before. A stream that
// listens for inband DTMF keeps decoding (the digits are in the audio).
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, test } from 'node:test';
import type { Frame } from '../../../src/media/frame.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import { RtpPortRange } from '../../../src/media/rtp/port-range.ts';
import { RtpStream, type StreamOptions } from '../../../src/media/rtp/stream.ts';
import { encodeTelephoneEvent } from '../../../src/media/rtp/telephone-event.ts';
import { ManualClock } from './manual-clock.ts';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const SSRC = 0x5157;

/** Packet k (1-based) carries 160 samples of 1000·k through u-law: a frame says which packet it came from. */
function audioPacket(k: number): Buffer {
  const packet = Buffer.alloc(172);
  packet[0] = 0x80;
  packet.writeUInt16BE(k, 2);
  packet.writeUInt32BE(k * 160, 4);
  packet.writeUInt32BE(SSRC, 8);
  packet.fill(linearToUlaw(1000 * k), 12);
  return packet;
}

function digitEndPacket(sequence: number, event: number): Buffer {
  const packet = Buffer.alloc(16);
  packet[0] = 0x80;
  packet[1] = 101;
  packet.writeUInt16BE(sequence, 2);
  packet.writeUInt32BE(3 * 160, 4);
  packet.writeUInt32BE(SSRC, 8);
  encodeTelephoneEvent(packet, 12, event, true, 10, 800);
  return packet;
}

function packetOf(value: number): number {
  for (let k = 1; k <= 20; k++) if (ulawToLinear(linearToUlaw(1000 * k)) === value) return k;
  return 0;
}

async function scenario(options: StreamOptions, inbandDtmf: boolean): Promise<{ skipped: number[]; resumed: number[]; digits: string[]; rxcount: number }> {
  const range = new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000);
  const pair = await range.bindPair('127.0.0.1');
  const clock = new ManualClock();
  const heard: number[] = [];
  const digits: string[] = [];
  const stream = new RtpStream(pair.rtp, clock, { onFrame: (frame: Frame) => heard.push(packetOf(frame.samples[80])), onDigit: (digit) => digits.push(digit) }, { ...options, rtcpSocket: pair.rtcp });
  const peer = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', resolve));
  try {
    stream.configure({ codec: 'ulaw', payloadType: 0, telephoneEventPt: 101, inbandDtmf, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' });
    stream.skipAudio(true);
    for (let k = 1; k <= 6; k++) {
      peer.send(audioPacket(k), stream.localPort, '127.0.0.1');
      await sleep(20);
      clock.tick();
    }
    for (let i = 0; i < 3; i++) peer.send(digitEndPacket(7 + i, 5), stream.localPort, '127.0.0.1');
    // Waiting for the packets on a loaded machine: the count says when they are all in.
    for (let i = 0; i < 100 && (stream.statistics()?.rxcount ?? 0) < 9; i++) await sleep(20);
    for (let i = 0; i < 10; i++) clock.tick();
    const skipped = heard.splice(0);
    stream.skipAudio(false);
    for (let k = 11; k <= 20; k++) {
      peer.send(audioPacket(k), stream.localPort, '127.0.0.1');
      await sleep(20);
      clock.tick();
    }
    for (let i = 0; i < 15; i++) {
      await sleep(20);
      clock.tick();
    }
    const rxcount = stream.statistics()?.rxcount ?? 0;
    stream.close();
    return { skipped, resumed: heard.filter((k) => k > 0), digits, rxcount };
  } finally {
    peer.close();
  }
}

describe('RtpStream.skipAudio', () => {
  for (const [name, options] of [['jitter buffer', { jitterBuffer: { minDelayMs: 20, maxDelayMs: 200 } }], ['plain receive queue', {}]] as const) {
    test(`${name}: nothing decoded or delivered while skipping, statistics and RFC 4733 digits go on; then only new audio`, async () => {
      const { skipped, resumed, digits, rxcount } = await scenario(options, false);
      assert.deepEqual(skipped, [], 'no frame while the audio is skipped');
      assert.deepEqual(digits, ['5']);
      assert.ok(rxcount >= 16, `${rxcount} packets counted`);
      // Heard after the skip: packets sent after it only, in order (a loaded machine may drop a late one).
      assert.ok(resumed.length >= 6, `heard after the skip: ${resumed.join(', ')}`);
      assert.ok(resumed.every((k, i) => k >= 11 && (i === 0 || k > resumed[i - 1])), `heard after the skip: ${resumed.join(', ')}`);
    });
  }

  test('inband DTMF listened for: the audio is still decoded and delivered', async () => {
    const { skipped } = await scenario({}, true);
    assert.ok(skipped.filter((k) => k > 0).length >= 4, `frames while skipping: ${skipped.join(', ')}`);
  });
});
