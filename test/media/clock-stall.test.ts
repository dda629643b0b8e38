// The media clock through a stall of this process while a far end keeps sending (a loaded machine,
// a long GC pause): the ticks it runs to catch up must come after the packets that arrived during
// the stall were read, or they mix and play without them. Node runs due timers before it polls the
// sockets, so a catch-up run from the timer saw the packet count of before the stall. The sender is
// a worker thread, which goes on while the main thread is blocked; the stall lasts until it has
// sent enough (counted in shared memory), so the test does not depend on how loaded the machine is.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { MediaClock } from '../../src/media/clock.ts';

/** Packets the sender must have sent during the stall before it ends. */
const SENT_DURING_STALL = 5;
/** The stall lasts at least this long (many ticks due at its end), ms. */
const STALL_MS = 200;
/** And at most this long, whatever the sender managed, ms. */
const STALL_LIMIT_MS = 20_000;

/** A thread sending a 172-byte datagram every 20 ms to `port`, counting in `sent[0]` the ones handed to the kernel. */
function startSender(port: number, sent: Int32Array): Worker {
  const source = `
    const dgram = require('node:dgram');
    const { parentPort, workerData } = require('node:worker_threads');
    const sent = new Int32Array(workerData);
    const socket = dgram.createSocket('udp4');
    const packet = Buffer.alloc(172);
    const timer = setInterval(() => socket.send(packet, ${port}, '127.0.0.1', (error) => { if (!error) Atomics.add(sent, 0, 1); }), 20);
    parentPort.on('message', () => { clearInterval(timer); socket.close(); parentPort.close(); });
    parentPort.postMessage('sending');
  `;
  return new Worker(source, { eval: true, workerData: sent.buffer });
}

test('the ticks a media clock runs to catch up after a stall come after the packets sent during it were read', { timeout: 120_000 }, async () => {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  let received = 0;
  socket.on('message', () => {
    received += 1;
  });
  const sent = new Int32Array(new SharedArrayBuffer(4));
  const sender = startSender(socket.address().port, sent);
  await once(sender, 'message');
  const clock = new MediaClock();
  // What the ticks saw: the packets read when the stall began, and when the first tick after it ran.
  let readAtStall: number | undefined;
  let stallOver = false;
  let readAtFirstTickAfter: number | undefined;
  let stallSent = 0;
  const stallStarts = 10;
  clock.add((tick) => {
    if (stallOver) {
      readAtFirstTickAfter ??= received;
      return;
    }
    if (tick !== stallStarts) return;
    // The stall, in the loop's check phase as a busy process's other work would be: nothing else
    // runs on this thread until the sender has sent enough during it.
    setImmediate(() => {
      readAtStall = received;
      const sentAtStall = Atomics.load(sent, 0);
      const start = performance.now();
      for (;;) {
        const elapsed = performance.now() - start;
        if (elapsed > STALL_LIMIT_MS) break;
        if (elapsed >= STALL_MS && Atomics.load(sent, 0) - sentAtStall >= SENT_DURING_STALL) break;
      }
      stallSent = Atomics.load(sent, 0) - sentAtStall;
      stallOver = true;
    });
  });
  try {
    // Packets flow before the clock starts.
    while (received < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    clock.start();
    const deadline = Date.now() + 60_000;
    while (readAtFirstTickAfter === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(stallSent >= SENT_DURING_STALL, `the sender sent ${stallSent} packets during the stall (it was starved)`);
    assert.ok(readAtStall !== undefined && readAtFirstTickAfter !== undefined, 'the clock ticked after the stall');
    assert.ok(
      readAtFirstTickAfter - readAtStall >= SENT_DURING_STALL,
      `the first tick after the stall saw ${readAtFirstTickAfter - readAtStall} of the ${stallSent} packets sent during it`,
    );
  } finally {
    clock.stop();
    sender.postMessage('stop');
    await once(sender, 'exit');
    socket.close();
  }
});
