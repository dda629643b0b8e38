// What a server transaction keeps once it has nothing more to send (docs/performance.md, "Memory per
// call (stop 36)"): a call holds its INVITE's transaction for its whole life, so the 2xx and the
// TU's handlers must not stay with it after the ACK or the transaction's end — while the protocol
// (2xx retransmissions until the ACK, the no-ACK report after 64*T1) stays as it was.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServerTransaction } from '../../../src/sip/transaction/index.ts';
import { request, waitUntil } from '../helpers.ts';
import { stacksClosedAfterEachTest } from './stack-fixture.ts';

const { stack, peer } = stacksClosedAfterEachTest();

describe('server transactions let go of what they no longer send', () => {
  it('INVITE: the 2xx is kept until its ACK, then let go; the To tag and source stay', async () => {
    let held: ServerTransaction | undefined;
    let acked = 0;
    const s = await stack({
      onRequest: (_r, tx) => {
        held = tx;
        tx.onAck = () => acked++;
        tx.reply(200, 'OK', [['Contact', '<sip:service@127.0.0.1>']]);
        assert.equal(tx.lastResponse?.status, 200, 'the 2xx is there right after it was sent (a call reads it)');
      },
    });
    const p = await peer();
    p.send(request('INVITE', { port: p.port, callId: 'held-ack' }), s.udpPort);
    await waitUntil(() => p.received.length >= 2, 5000, '2xx retransmitted');
    assert.equal(held?.lastResponse?.status, 200, 'kept while it is retransmitted');
    const ok = p.messages()[0];
    p.send(request('ACK', { port: p.port, callId: 'held-ack', toTag: ok.toTag() }), s.udpPort);
    await waitUntil(() => acked === 1, 5000, 'ACK');
    assert.equal(held?.state, 'accepted', 'still absorbing retransmitted INVITEs (Timer L)');
    assert.equal(held?.lastResponse, undefined, 'the 2xx is let go after its ACK');
    assert.equal(held?.toTag, ok.toTag());
    assert.ok(held?.source.port);
    await waitUntil(() => held?.state === 'terminated', 5000, 'Timer L');
    assert.equal(held?.onAck, undefined, 'the ended transaction holds no TU handler');
  });

  it('non-INVITE: the final response is resent while Completed and let go when the transaction ends', async () => {
    let held: ServerTransaction | undefined;
    const s = await stack({
      onRequest: (_r, tx) => {
        held = tx;
        tx.onTerminated = () => undefined;
        tx.reply(200);
      },
    });
    const p = await peer();
    const options = request('OPTIONS', { port: p.port, callId: 'held-options' });
    p.send(options, s.udpPort);
    await waitUntil(() => p.received.length >= 1, 5000, '200');
    p.send(options, s.udpPort);
    await waitUntil(() => p.received.length >= 2, 5000, 'the 200 resent to the retransmitted request');
    assert.equal(held?.lastResponse?.status, 200);
    await waitUntil(() => held?.state === 'terminated', 10000, 'Timer J');
    assert.equal(held?.lastResponse, undefined);
    assert.equal(held?.onTerminated, undefined);
  });
});
