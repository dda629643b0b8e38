// rtp_timeout through a stall of this process longer than the timeout while the far end keeps
// sending (a loaded machine): the packets that arrived during the stall wait unread when the
// once-a-second check comes due — Node runs due timers before it reads the sockets — so the check
// must look after they are read, or it hangs up a live call. The sender is a worker thread, which
// goes on while the main thread is blocked. (Before the fix the check came in the timers phase
// right after the stall, saw the count of before it, and expired.)
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { RtpTimeout } from '../../../src/channels/pjsip/rtp-timeout.ts';
import { blockThread } from '../../helpers/block-thread.ts';

const TIMEOUT_SECONDS = 1;
const STALL_MS = 2_500;

/** A thread sending a 172-byte datagram every 20 ms to `port` until told to stop. */
function startSender(port: number): Worker {
  const source = `
    const dgram = require('node:dgram');
    const { parentPort } = require('node:worker_threads');
    const socket = dgram.createSocket('udp4');
    const packet = Buffer.alloc(172);
    const timer = setInterval(() => socket.send(packet, ${port}, '127.0.0.1'), 20);
    parentPort.on('message', () => { clearInterval(timer); socket.close(); parentPort.close(); });
    parentPort.postMessage('sending');
  `;
  return new Worker(source, { eval: true });
}

test(`a ${STALL_MS} ms stall of the process with packets still coming does not trip a ${TIMEOUT_SECONDS} s rtp_timeout`, async () => {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  let received = 0;
  socket.on('message', () => {
    received += 1;
  });
  const sender = startSender(socket.address().port);
  await once(sender, 'message');
  const expired: number[] = [];
  // The stall comes right after the first check has looked (held() is read as it looks), before
  // the next packet is read: in the loop's check phase, as a busy process's other work would.
  let stalled = false;
  let stallEnd = Number.POSITIVE_INFINITY;
  const held = (): boolean => {
    if (!stalled) {
      stalled = true;
      setImmediate(() => {
        blockThread(STALL_MS);
        stallEnd = Date.now();
      });
    }
    return false;
  };
  const timeout = new RtpTimeout(TIMEOUT_SECONDS, { received: () => received, held }, (seconds) => expired.push(seconds));
  try {
    // Packets flow before the stall.
    while (received < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    timeout.start();
    // The first check (1 s), the stall (2.5 s), then two checks after it.
    while (!(Date.now() > stallEnd + 2_200)) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(expired, [], 'the call was hung up although packets kept coming');
    assert.ok(received > 50, `${received} packets received`);
  } finally {
    timeout.stop();
    sender.postMessage('stop');
    await once(sender, 'exit');
    socket.close();
  }
});

test('the far end really goes quiet: rtp_timeout still hangs up', async () => {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const expired: number[] = [];
  const timeout = new RtpTimeout(TIMEOUT_SECONDS, { received: () => 3, held: () => false }, (seconds) => expired.push(seconds));
  try {
    timeout.start();
    const until = Date.now() + 10_000;
    while (expired.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(expired, [TIMEOUT_SECONDS]);
  } finally {
    timeout.stop();
    socket.close();
  }
});
