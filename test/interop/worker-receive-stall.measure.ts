// A stall of the main thread while a SIP call's stream runs in a media worker and the phone goes
// on talking: what the main thread then reads of the call (what a snoop or a recording made here
// gets: the channel's received frames) keeps every frame the stall held up, as the main thread's
// own streams do. After a stall its clock runs the ticks it held up back to back (up to its
// catch-up burst of 10), one received frame each; the worker's ring of received frames must hold
// them until then, and the main thread must not cut them as a backlog meanwhile. (The ring held 8
// and every main tick cut what waited beyond 3: a 190 ms stall lost 3 to 8 of its ≈ 10 frames,
// 32 and 39 missing in two runs at load ≈ 36 against 15 and 8 ticks the clock dropped.) The
// server runs in this process, so blocking this thread stalls its main thread; the phone's RTP is
// sent by a worker thread, which goes on meanwhile, and the media worker reads it.
// A measurement run by hand, not part of the suite (its name is not *.test.ts):
//   node --import tsx --test test/interop/worker-receive-stall.measure.ts
// On a loaded machine the media worker's own stalls make bursts that the main thread's on-time
// ticks still cut (by design, to bound the delay), and those losses are not the clock's dropped
// ticks: beside two other test files at load ≈ 25 it failed 2 runs of 4 with 9–12 frames missing
// against 1–7 dropped ticks, so it cannot be a deterministic test as it stands.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ulawDecode } from '../../src/media/g711.ts';
import type { Frame } from '../../src/media/frame.ts';
import { blockThread } from '../helpers/block-thread.ts';
import type { TestServer } from '../helpers/server.ts';
import { startOneWorkerServer } from './one-worker-server.ts';
import { RawPhone } from './raw-phone.ts';

/** Within the clock's catch-up burst (10 ticks): every tick it held up runs, none is dropped. */
const STALL_MS = 190;
const STALLS = 4;
/** Packets carry their number in every byte: u-law codes 1…100 decode to 100 distinct samples. */
const CODES = 100;

let work: string;
let server: TestServer;
const phone = new RawPhone('alice');

before(async () => {
  ({ work, server } = await startOneWorkerServer('receive-stall', ['exten => 612,1,Answer()', ' same => n,Wait(120)'], phone));
});

after(async () => {
  phone.sip.close();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

/**
 * A thread sending PCMU every 20 ms from `from` to `to` (packet n's bytes all code 1 + n % CODES),
 * until told to stop; `sent[0]` counts what it sent.
 */
function startSender(from: number, to: number, sent: Int32Array): Worker {
  const source = `
    const dgram = require('node:dgram');
    const { parentPort, workerData } = require('node:worker_threads');
    const sent = new Int32Array(workerData);
    const socket = dgram.createSocket('udp4');
    const packet = Buffer.alloc(172);
    let n = 0;
    let timer;
    socket.bind(${from}, '127.0.0.1', () => {
      timer = setInterval(() => {
        packet[0] = 0x80; packet[1] = 0; packet.writeUInt16BE(n & 0xffff, 2); packet.writeUInt32BE((n * 160) >>> 0, 4); packet.writeUInt32BE(0x5eed, 8);
        packet.fill(1 + (n % ${CODES}), 12);
        n += 1;
        socket.send(packet, ${to}, '127.0.0.1', () => Atomics.store(sent, 0, n));
      }, 20);
      parentPort.postMessage('sending');
    });
    parentPort.on('message', () => { clearInterval(timer); socket.close(); parentPort.close(); });
  `;
  return new Worker(source, { eval: true, workerData: sent.buffer });
}

test(`${STALLS} stalls of the main thread of ${STALL_MS} ms while the phone talks: the main thread reads every frame of the worker-hosted call`, { timeout: 120_000 }, async () => {
  const { dialog, final } = await phone.call('612');
  assert.match(final, /^SIP\/2\.0 200/);
  const serverRtp = Number(/^m=audio (\d+) /m.exec(final)?.[1]);
  assert.ok(serverRtp > 0, 'the answer has an audio port');
  // The frames the channel receives here, by the number each carries (-1: a frame of none).
  const byCode = new Map<number, number>();
  const decoded = new Int16Array(1);
  for (let code = 1; code <= CODES; code++) {
    ulawDecode(Buffer.from([code]), decoded);
    byCode.set(decoded[0]!, code - 1);
  }
  const heard: number[] = [];
  const channel = server.core.channels.list()[0];
  assert.ok(channel, 'the call\'s channel');
  const listener = (frame: Frame): void => void heard.push(byCode.get(frame.samples[0]!) ?? -1);
  channel.addFrameListener(listener);
  // The phone's RTP comes from its own port (the offer's), now sent by a thread of its own.
  const rtpPort = phone.rtp.address().port;
  await new Promise<void>((resolve) => phone.rtp.close(() => resolve()));
  const sent = new Int32Array(new SharedArrayBuffer(4));
  const sender = startSender(rtpPort, serverRtp, sent);
  await once(sender, 'message');
  // A stall past the catch-up burst (this machine's load can add one to ours) makes the clock drop
  // ticks, and the audio of each may be cut to bound the delay, as on the main thread's own streams.
  const skippedBefore = server.core.media.clock.skippedTicks;
  try {
    assert.equal(server.core.pjsip.mediaWorkers?.streams, 1, 'the call\'s stream runs in the media worker');
    const frames = async (count: number, timeoutMs = 45_000): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (heard.length < count) {
        assert.ok(Date.now() < deadline, `after ${timeoutMs} ms: ${heard.length} frames, wanted ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await frames(10);
    for (let stall = 0; stall < STALLS; stall++) {
      await frames(heard.length + 15);
      // The stall starts once the phone has sent on (its count moved), so that packets come during it.
      const before = Atomics.load(sent, 0);
      blockThread(STALL_MS, () => Atomics.load(sent, 0) < before + Math.ceil(STALL_MS / 20) - 1);
    }
    await frames(heard.length + 30);
    sender.postMessage('stop');
    await once(sender, 'exit');
    const skipped = server.core.media.clock.skippedTicks - skippedBefore;
    // Every numbered frame in order (codes wrap at CODES): a frame missing only where the clock
    // dropped a tick. (A frame of none is the queue running dry while the loaded sender is late.)
    const numbered = heard.filter((code) => code >= 0);
    const gaps: string[] = [];
    let missing = 0;
    for (let i = 1; i < numbered.length; i++) {
      const step = (numbered[i]! - numbered[i - 1]! + CODES) % CODES;
      if (step === 1) continue;
      gaps.push(`frame ${i}: ${numbered[i - 1]} then ${numbered[i]}`);
      missing += (step + CODES - 1) % CODES;
    }
    assert.ok(missing <= skipped, `${missing} frames missing, ${skipped} ticks dropped by the clock (${numbered.length} frames read): ${gaps.join('; ')}`);
  } finally {
    channel.removeFrameListener(listener);
    sender.postMessage('stop');
    assert.match(await phone.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
  }
});
