// A client transaction through a stall of this process: the far end answered during the stall, and
// its 200 waits unread when Timer E comes due — Node runs due timers before it reads the sockets —
// so the timer must fire after the reads, or the request goes out again (a phone then sees a NOTIFY
// twice; SIPp scenarios fail on it). The far end is a worker thread, which answers while the main
// thread is blocked. Before the fix the retransmission left in the timers phase right after the stall.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { SipRequest, type SipResponse } from '../../../src/sip/message.ts';
import { blockThread } from '../../helpers/block-thread.ts';
import { startStack, waitUntil } from '../helpers.ts';

const T1 = 200;
const STALL_MS = 4 * T1;

/**
 * A thread answering every SIP request on a UDP port with 200 OK, counting the requests. Shared
 * cells: [0] requests received, [1] set by the main thread once it stalls (the answer waits for
 * it, so that it arrives during the stall), [2] answers sent.
 */
function startAnsweringPeer(cells: Int32Array): Worker {
  const source = `
    const dgram = require('node:dgram');
    const { parentPort, workerData } = require('node:worker_threads');
    const cells = new Int32Array(workerData);
    const socket = dgram.createSocket('udp4');
    socket.on('message', (data, from) => {
      const text = data.toString('latin1');
      if (text.startsWith('SIP/2.0')) return;
      Atomics.add(cells, 0, 1);
      const keep = text.split('\\r\\n').filter((line) => /^(Via|From|To|Call-ID|CSeq):/i.test(line));
      const answer = Buffer.from(['SIP/2.0 200 OK', ...keep, 'Content-Length: 0', '', ''].join('\\r\\n'), 'latin1');
      const send = () => socket.send(answer, from.port, from.address, () => Atomics.add(cells, 2, 1));
      const whenStalled = () => (Atomics.load(cells, 1) === 1 ? send() : setTimeout(whenStalled, 1));
      whenStalled();
    });
    socket.bind(0, '127.0.0.1', () => parentPort.postMessage({ port: socket.address().port }));
    parentPort.on('message', () => {
      socket.close();
      parentPort.close();
    });
  `;
  return new Worker(source, { eval: true, workerData: cells.buffer });
}

test(`a request answered during a ${STALL_MS} ms stall of the process is not retransmitted (T1 ${T1} ms)`, async () => {
  const cells = new Int32Array(new SharedArrayBuffer(12));
  const peer = startAnsweringPeer(cells);
  const [{ port }] = (await once(peer, 'message')) as [{ port: number }];
  const stack = await startStack({ onRequest: (_request, tx) => void tx.reply(481) }, { timers: { t1: T1 } });
  try {
    const notify = new SipRequest('NOTIFY', `sip:phone@127.0.0.1:${port}`, [
      ['From', '<sip:patchbay@127.0.0.1>;tag=a1'],
      ['To', '<sip:phone@127.0.0.1>;tag=b2'],
      ['Call-ID', 'timer-stall'],
      ['CSeq', '7 NOTIFY'],
      ['Event', 'refer'],
    ]);
    const statuses: number[] = [];
    stack.layer.sendRequest(notify, { transport: 'UDP', host: '127.0.0.1', port }, { onResponse: (r: SipResponse) => void statuses.push(r.status) });
    // Once the request has reached the peer, the process stalls past Timer E while the peer answers it.
    await waitUntil(() => Atomics.load(cells, 0) === 1, 10_000, 'the NOTIFY at the peer');
    Atomics.store(cells, 1, 1); // the peer answers now, during the stall
    blockThread(STALL_MS, () => Atomics.load(cells, 2) === 0);
    await waitUntil(() => statuses.includes(200), 10_000, 'the 200');
    // Long enough for a retransmission already due, or one more Timer E, to reach the peer.
    await new Promise((resolve) => setTimeout(resolve, 3 * T1));
    assert.equal(Atomics.load(cells, 0), 1, 'the NOTIFY reached the peer once');
    assert.deepEqual(statuses, [200]);
  } finally {
    peer.postMessage('close');
    Atomics.store(cells, 1, 1);
    await stack.close();
  }
});

test('a transaction ended in the timers phase in which its Timer E came due sends nothing more, and nothing of it is left', async () => {
  const peer = dgram.createSocket('udp4');
  peer.bind(0, '127.0.0.1');
  await once(peer, 'listening');
  let received = 0;
  peer.on('message', () => (received += 1));
  const stack = await startStack({ onRequest: (_request, tx) => void tx.reply(481) }, { timers: { t1: T1 } });
  try {
    const notify = new SipRequest('NOTIFY', `sip:phone@127.0.0.1:${peer.address().port}`, [
      ['From', '<sip:patchbay@127.0.0.1>;tag=a1'],
      ['To', '<sip:phone@127.0.0.1>;tag=b2'],
      ['Call-ID', 'timer-ended'],
      ['CSeq', '8 NOTIFY'],
      ['Event', 'refer'],
    ]);
    const tx = stack.layer.sendRequest(notify, { transport: 'UDP', host: '127.0.0.1', port: peer.address().port }, {});
    // Armed after Timer E with the same delay: once a stall made both due, Node runs E's callback
    // first and this one next in the same timers phase, so the transaction ends between E's firing
    // and the deferred retransmission (which must then not go out).
    setTimeout(() => tx.terminate(), T1);
    blockThread(2 * T1);
    await waitUntil(() => received >= 1, 10_000, 'the NOTIFY at the peer');
    // Nothing may come after it: a check that something does not happen keeps a short, fixed wait.
    await new Promise((resolve) => setTimeout(resolve, 3 * T1));
    assert.equal(received, 1, 'sent once, not retransmitted after it ended');
    assert.equal(tx.state, 'terminated');
    assert.deepEqual(tx.runningTimers, []);
    assert.deepEqual(stack.layer.counts, { clients: 0, servers: 0, pending2xx: 0 });
  } finally {
    peer.close();
    await stack.close();
  }
});
