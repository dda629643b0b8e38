// RTP reflection (issue 21, item 18): when a call's SDP aims our media at an address its signalling
// did not come from, RTP goes there only for unansweredLimitMs unless something comes back; then
// sending waits, and resumes once the far end is heard. Without the limit (the far end is the
// signalling's own address) nothing changes.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import type { Frame } from '../../../src/media/frame.ts';
import { RtpPortRange } from '../../../src/media/rtp/port-range.ts';
import { RtpStream } from '../../../src/media/rtp/stream.ts';

const clock = { ticks: 0, onTick: () => undefined, offTick: () => undefined };
const frame: Frame = { rate: 8000, samples: new Int16Array(160) };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function socket(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
  return s;
}

/** Writes a frame every 20 ms for `ms`; returns when each was written (performance.now()). */
async function send(stream: RtpStream, ms: number): Promise<number[]> {
  const writtenAt: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    clock.ticks += 1;
    writtenAt.push(performance.now());
    stream.writeFrame(frame);
    await sleep(20);
  }
  return writtenAt;
}

/** Polls (bounded) until `check` holds: packets on loopback still take an event-loop turn to count. */
async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !check(); ) await sleep(10);
}

/** Writes `count` frames, one every 20 ms (fewer per second when timers are late on a loaded machine). */
async function sendFrames(stream: RtpStream, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    clock.ticks += 1;
    stream.writeFrame(frame);
    await sleep(20);
  }
}

function rtpPacket(sequence: number): Buffer {
  const packet = Buffer.alloc(172);
  packet[0] = 0x80;
  packet.writeUInt16BE(sequence, 2);
  packet.writeUInt32BE(sequence * 160, 4);
  packet.writeUInt32BE(0x1234, 8);
  packet.fill(0xff, 12);
  return packet;
}

test('media to a silent foreign address stops after the limit, and resumes when the far end is heard', async () => {
  const pair = await new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000).bindPair('127.0.0.1');
  const paused: string[] = [];
  const stream = new RtpStream(pair.rtp, clock, { onFrame: () => undefined, onDigit: () => undefined, onUnanswered: (address, port) => paused.push(`${address}:${port}`) }, { rtcpSocket: pair.rtcp });
  const victim = await socket();
  let received = 0;
  victim.on('message', () => (received += 1));
  try {
    stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: victim.address().port, direction: 'sendrecv', unansweredLimitMs: 200 });
    const writtenAt = await send(stream, 600);
    // The frames written within the 200 ms limit of the first go out (about 10 on an idle machine;
    // fewer when timers are late, so they are counted, not assumed), one more at most at the edge.
    const withinLimit = writtenAt.filter((at) => at - writtenAt[0]! <= 200).length;
    await until(() => received >= withinLimit);
    await sleep(50);
    const duringLimit = received;
    assert.ok(duringLimit >= Math.max(1, withinLimit - 1) && duringLimit <= withinLimit + 1, `${duringLimit} packets reached the silent address; ${withinLimit} of ${writtenAt.length} frames were written within the limit`);
    assert.deepEqual(paused, [`127.0.0.1:${victim.address().port}`]);
    // The far end speaks: sending resumes.
    for (let i = 0; i < 4; i++) victim.send(rtpPacket(i), stream.localPort, '127.0.0.1');
    // Frames go on until some arrive: the far end's packets are read when the loaded event loop
    // gets to them, not at a fixed time.
    for (const deadline = Date.now() + 5000; Date.now() < deadline && received <= duringLimit; ) await send(stream, 40);
    await until(() => received > duringLimit);
    assert.ok(received > duringLimit, 'sending resumed once the far end was heard');
  } finally {
    stream.close();
    victim.close();
  }
});

test('without a limit a silent far end keeps getting media', async () => {
  const pair = await new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000).bindPair('127.0.0.1');
  const stream = new RtpStream(pair.rtp, clock, { onFrame: () => undefined, onDigit: () => undefined }, { rtcpSocket: pair.rtcp });
  const peer = await socket();
  let received = 0;
  peer.on('message', () => (received += 1));
  try {
    stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' });
    // 20 frames (400 ms when timers are on time): counted by frames, not by wall time, so that late
    // timers do not make fewer of them; their packets are awaited rather than given a fixed 50 ms.
    await sendFrames(stream, 20);
    for (const deadline = Date.now() + 5000; received < 20 && Date.now() < deadline; ) await sleep(20);
    assert.ok(received >= 12, `${received} packets`);
  } finally {
    stream.close();
    peer.close();
  }
});

test('packets from another source than the SDP address do not unlock sending there (rtp_symmetric=no)', async () => {
  const pair = await new RtpPortRange(30_000 + 2 * Math.floor(Math.random() * 10_000), 60_000).bindPair('127.0.0.1');
  const stream = new RtpStream(pair.rtp, clock, { onFrame: () => undefined, onDigit: () => undefined }, { rtcpSocket: pair.rtcp, symmetric: false });
  const victim = await socket();
  const attacker = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => attacker.bind(0, '127.0.0.2', resolve));
  let received = 0;
  victim.on('message', () => (received += 1));
  try {
    stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: victim.address().port, direction: 'sendrecv', unansweredLimitMs: 150 });
    // The attacker speaks from its own address, long enough to be learned as the source.
    for (let i = 0; i < 8; i++) attacker.send(rtpPacket(i), stream.localPort, '127.0.0.1');
    await sleep(50);
    await send(stream, 500);
    await sleep(50);
    assert.ok(received <= 14, `${received} packets reached the victim: sending stopped after the limit`);
  } finally {
    stream.close();
    victim.close();
    attacker.close();
  }
});
