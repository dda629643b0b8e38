/**
 * Transactions over real UDP and TCP sockets on 127.0.0.1 with shortened timers (T1 = 25 ms,
 * T2 = 100 ms, T4 = 100 ms): retransmission schedules are counted packet by packet.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SipRequest, SipResponse, createResponse, parseVia, type SipMessage } from '../../../src/sip/message.ts';
import { responseDestination } from '../../../src/sip/transport.ts';
import type { ClientTransaction, ServerTransaction } from '../../../src/sip/transaction/index.ts';
import { FAST, TcpPeer, checkSchedule, recordSends, request, sleep, waitUntil } from '../helpers.ts';
import { stacksClosedAfterEachTest } from './stack-fixture.ts';

const { stack, peer, closeAfterTest } = stacksClosedAfterEachTest();

function outgoing(method: string, peerPort: number): SipRequest {
  return new SipRequest(method, `sip:peer@127.0.0.1:${peerPort}`, [
    ['From', '<sip:patchbay@127.0.0.1>;tag=pb1'],
    ['To', `<sip:peer@127.0.0.1:${peerPort}>`],
    ['Call-ID', `out-${Math.random()}`],
    ['CSeq', `1 ${method}`],
  ]);
}

/** Gaps between consecutive arrival times. */
const gaps = (times: number[]): number[] => times.slice(1).map((t, i) => t - times[i]);

describe('client transactions', () => {
  it('non-INVITE over UDP: Timer E retransmits T1, 2T1, then T2 until Timer F (64*T1) times out', async () => {
    const s = await stack();
    const sends = recordSends(s.transport);
    const p = await peer();
    let timedOut = 0;
    const started = Date.now();
    let timeoutAt = 0;
    s.layer.sendRequest(outgoing('OPTIONS', p.port), { transport: 'UDP', host: '127.0.0.1', port: p.port }, {
      onTimeout: () => {
        timedOut++;
        timeoutAt = Date.now();
      },
    });
    await waitUntil(() => timedOut > 0, 4000, 'Timer F');
    await sleep(60);
    // sends at 0, 25, 75, then every 100 ms (T2) up to 1575: 18 sends
    checkSchedule(sends.map((x) => x.at), [25, 50, 100, ...Array(14).fill(100)], 'Timer E');
    assert.ok(p.received.length >= 10, `${p.received.length} arrived`);
    assert.ok(timeoutAt - started >= 64 * FAST.t1! - 5, 'Timer F is 64*T1');
    assert.equal(new Set(p.messages().map((m) => m.topVia()!.branch)).size, 1, 'retransmissions keep the branch');
    assert.equal(s.layer.size, 0);
  });

  it('INVITE over UDP: Timer A doubles from T1 until Timer B', async () => {
    const s = await stack();
    const sends = recordSends(s.transport);
    const p = await peer();
    let timedOut = false;
    s.layer.sendRequest(outgoing('INVITE', p.port), { transport: 'UDP', host: '127.0.0.1', port: p.port }, { onTimeout: () => (timedOut = true) });
    await waitUntil(() => timedOut, 4000, 'Timer B');
    // sends at 0, 25, 75, 175, 375, 775, 1575: 7 sends
    checkSchedule(sends.map((x) => x.at), [25, 50, 100, 200, 400, 800], 'Timer A');
    assert.equal(s.layer.size, 0);
  });

  it('INVITE: a 1xx stops retransmission, a 486 is ACKed by the transaction (and again when retransmitted)', async () => {
    const s = await stack();
    const sends = recordSends(s.transport);
    const invitesSent = (): number => sends.filter(({ message }) => message.isRequest() && message.method === 'INVITE').length;
    const p = await peer();
    const responses: number[] = [];
    // Counted when the 1xx reaches the transaction: on a loaded machine Timer A (25 ms here) may
    // have fired before the peer's 180 got through, and that retransmission is not what is checked.
    let invitesWhenProceeding = 0;
    let terminated = false;
    const tx = s.layer.sendRequest(outgoing('INVITE', p.port), { transport: 'UDP', host: '127.0.0.1', port: p.port }, {
      onResponse: (r) => {
        if (responses.length === 0) invitesWhenProceeding = invitesSent();
        responses.push(r.status);
      },
      onTerminated: () => (terminated = true),
    });
    await waitUntil(() => p.received.length >= 1);
    const invite = p.messages()[0] as SipRequest;
    p.send(createResponse(invite, 180, undefined, { toTag: 'far' }).toString(), s.udpPort);
    await waitUntil(() => responses.length === 1);
    await sleep(150);
    assert.equal(invitesSent(), invitesWhenProceeding, 'no retransmission once proceeding');
    const busy = createResponse(invite, 486, undefined, { toTag: 'far' }).toString();
    p.send(busy, s.udpPort);
    await waitUntil(() => p.messages((m) => m.isRequest() && m.method === 'ACK').length === 1);
    const ack = p.messages((m) => m.isRequest() && m.method === 'ACK')[0] as SipRequest;
    assert.equal(ack.topVia()!.branch, invite.topVia()!.branch, 'ACK for non-2xx shares the INVITE branch');
    assert.equal(ack.toTag(), 'far');
    assert.equal(ack.cseq()!.seq, invite.cseq()!.seq);
    assert.equal(ack.uriText, invite.uriText);
    p.send(busy, s.udpPort);
    await waitUntil(() => p.messages((m) => m.isRequest() && m.method === 'ACK').length === 2);
    assert.deepEqual(responses, [180, 486], 'the retransmitted 486 is absorbed');
    assert.equal(tx.state, 'completed');
    await waitUntil(() => terminated, 1000, 'Timer D');
    assert.equal(s.layer.size, 0);
  });

  it('INVITE: 2xx and its retransmissions go to the TU (Accepted state, RFC 6026)', async () => {
    const s = await stack();
    const p = await peer();
    const responses: number[] = [];
    s.layer.sendRequest(outgoing('INVITE', p.port), { transport: 'UDP', host: '127.0.0.1', port: p.port }, { onResponse: (r) => responses.push(r.status) });
    await waitUntil(() => p.received.length >= 1);
    const ok = createResponse(p.messages()[0] as SipRequest, 200, undefined, { toTag: 'far' }).toString();
    p.send(ok, s.udpPort);
    p.send(ok, s.udpPort);
    await waitUntil(() => responses.length === 2);
    assert.deepEqual(responses, [200, 200]);
    assert.equal(p.messages((m) => m.isRequest() && m.method === 'ACK').length, 0, 'the TU ACKs a 2xx, not the transaction');
    await waitUntil(() => s.layer.size === 0, 3000, 'Timer M');
  });

  it('CANCEL waits for a provisional response, then goes out with the INVITE branch', async () => {
    const s = await stack();
    const p = await peer();
    const cancelResponses: number[] = [];
    const tx = s.layer.sendRequest(outgoing('INVITE', p.port), { transport: 'UDP', host: '127.0.0.1', port: p.port });
    tx.cancel({ onResponse: (r) => cancelResponses.push(r.status) });
    await sleep(60);
    assert.equal(p.messages((m) => m.isRequest() && m.method === 'CANCEL').length, 0, 'no CANCEL before a 1xx');
    const invite = p.messages()[0] as SipRequest;
    p.send(createResponse(invite, 180, undefined, { toTag: 'far' }).toString(), s.udpPort);
    await waitUntil(() => p.messages((m) => m.isRequest() && m.method === 'CANCEL').length === 1);
    const cancel = p.messages((m) => m.isRequest() && m.method === 'CANCEL')[0] as SipRequest;
    assert.equal(cancel.topVia()!.branch, invite.topVia()!.branch);
    assert.deepEqual(cancel.cseq(), { seq: invite.cseq()!.seq, method: 'CANCEL' });
    assert.equal(cancel.toTag(), undefined);
    p.send(createResponse(cancel, 200).toString(), s.udpPort);
    p.send(createResponse(invite, 487, undefined, { toTag: 'far' }).toString(), s.udpPort);
    await waitUntil(() => cancelResponses.length === 1 && tx.state === 'completed');
    await waitUntil(() => s.layer.size === 0, 2000);
  });

  it('over TCP nothing is retransmitted and Timer F still fires', async () => {
    const s = await stack();
    const server = await import('node:net').then((net) => net.createServer());
    const received: string[] = [];
    const sockets: import('node:net').Socket[] = [];
    server.on('connection', (c) => {
      sockets.push(c);
      c.on('data', (d) => received.push(d.toString()));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    closeAfterTest(() => {
      for (const c of sockets) c.destroy();
      return new Promise((r) => server.close(r));
    });
    const port = (server.address() as { port: number }).port;
    let timedOut = false;
    s.layer.sendRequest(outgoing('OPTIONS', port), { transport: 'TCP', host: '127.0.0.1', port }, { onTimeout: () => (timedOut = true) });
    await waitUntil(() => timedOut, 3000, 'Timer F');
    assert.equal(received.join('').match(/^OPTIONS /gm)?.length, 1);
    assert.match(received.join(''), /Via: SIP\/2.0\/TCP 127\.0\.0\.1:\d+;branch=z9hG4bK/);
    assert.equal(s.layer.size, 0);
  });

  it('a TCP connection closed by the peer fails its pending transaction at once', async () => {
    const s = await stack({}, { timers: { t1: 500 } });
    const net = await import('node:net');
    const server = net.createServer((c) => c.once('data', () => c.destroy()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    closeAfterTest(() => new Promise((r) => server.close(r)));
    const port = (server.address() as { port: number }).port;
    let error: Error | undefined;
    const started = Date.now();
    s.layer.sendRequest(outgoing('INVITE', port), { transport: 'TCP', host: '127.0.0.1', port }, { onTransportError: (e) => (error = e) });
    await waitUntil(() => error !== undefined, 3000, 'transport error');
    assert.match(error!.message, /closed/);
    assert.ok(Date.now() - started < 1000, 'well before Timer B (32 s)');
    assert.equal(s.layer.size, 0);
  });

  it('a refused TCP connection is a transport error', async () => {
    const s = await stack();
    let error: Error | undefined;
    let terminated = false;
    s.layer.sendRequest(outgoing('OPTIONS', 1), { transport: 'TCP', host: '127.0.0.1', port: 1 }, { onTransportError: (e) => (error = e), onTerminated: () => (terminated = true) });
    await waitUntil(() => terminated);
    assert.ok(error);
    assert.equal(s.layer.size, 0);
  });
});

describe('server transactions', () => {
  it('non-INVITE: retransmissions are absorbed and answered with the last response; Timer J ends it', async () => {
    let calls = 0;
    const s = await stack({
      onRequest: (_r, tx) => {
        calls++;
        tx.reply(200);
      },
    });
    const p = await peer();
    const text = request('OPTIONS', { port: p.port });
    p.send(text, s.udpPort);
    await waitUntil(() => p.received.length === 1);
    p.send(text, s.udpPort);
    p.send(text, s.udpPort);
    await waitUntil(() => p.received.length === 3);
    assert.equal(calls, 1);
    const tags = new Set(p.messages().map((m) => m.toTag()));
    assert.equal(tags.size, 1, 'the same response each time');
    assert.equal(s.layer.size, 1);
    await waitUntil(() => s.layer.size === 0, 3000, 'Timer J');
  });

  it('rport and received: the response goes to the source port, whatever the Via says', async () => {
    const s = await stack({ onRequest: (_r, tx) => void tx.reply(200) });
    const p = await peer();
    p.send(request('OPTIONS', { port: p.port, via: 'SIP/2.0/UDP 192.0.2.99:9999;branch=z9hG4bKrport1;rport' }), s.udpPort);
    await waitUntil(() => p.received.length === 1, 2000, 'a response at the source port');
    const via = p.messages()[0].topVia()!;
    assert.equal(via.received, '127.0.0.1');
    assert.equal(via.rport, p.port);
    assert.equal(via.host, '192.0.2.99');
  });

  it('without rport (and force_rport off) a UDP response goes to the Via sent-by port (§18.2.2)', async () => {
    const s = await stack({ onRequest: (_r, tx) => void tx.reply(200) }, { transport: { forceRport: false } });
    const p = await peer();
    const other = await peer();
    p.send(request('OPTIONS', { port: p.port, via: `SIP/2.0/UDP 127.0.0.1:${other.port};branch=z9hG4bKnorport` }), s.udpPort);
    await waitUntil(() => other.received.length === 1);
    assert.equal(p.received.length, 0);
    assert.equal(other.messages()[0].topVia()!.received, undefined, 'same host: no received');
    // with rport asked for, the source port wins again
    p.send(request('OPTIONS', { port: p.port, via: `SIP/2.0/UDP 127.0.0.1:${other.port};branch=z9hG4bKwithrport;rport` }), s.udpPort);
    await waitUntil(() => p.received.length === 1);
  });

  it('INVITE: 1xx then 486; Timer G retransmits until the ACK, which is absorbed (Confirmed, Timer I)', async () => {
    let serverTx: ServerTransaction | undefined;
    const s = await stack({
      onRequest: (r, tx) => {
        serverTx = tx;
        tx.reply(180);
      },
    });
    const sends = recordSends(s.transport);
    const p = await peer();
    const invite = request('INVITE', { port: p.port, branch: 'z9hG4bKinv486' });
    p.send(invite, s.udpPort);
    await waitUntil(() => p.received.length === 1);
    p.send(invite, s.udpPort);
    await waitUntil(() => p.received.length === 2);
    assert.deepEqual(p.messages().map((m) => (m as SipResponse).status), [180, 180], 'a retransmitted INVITE gets the last provisional again');
    serverTx!.reply(486);
    await waitUntil(() => p.messages((m) => (m as SipResponse).status === 486).length >= 3, 2000, 'Timer G');
    const times = sends.filter((x) => !x.message.isRequest() && (x.message as SipResponse).status === 486).map((x) => x.at);
    const g = gaps(times);
    assert.ok(g[0] >= 22 && g[1] >= 47, `G doubles: ${g.join(', ')}`);
    const final = p.messages((m) => (m as SipResponse).status === 486)[0];
    const ack = request('ACK', { port: p.port, branch: 'z9hG4bKinv486', toTag: final.toTag(), callId: final.callId() });
    p.send(ack.replace(/CSeq: 1 ACK/, 'CSeq: 1 ACK'), s.udpPort);
    await waitUntil(() => serverTx!.state === 'confirmed', 1000);
    const count = p.received.length;
    p.send(ack, s.udpPort);
    await sleep(120);
    assert.equal(p.received.length, count, 'no more retransmissions after the ACK');
    await waitUntil(() => s.layer.size === 0, 1000, 'Timer I');
  });

  it('INVITE: without an ACK Timer H fires after 64*T1 and G is capped at T2', async () => {
    let timedOut = false;
    const s = await stack({
      onRequest: (_r, tx) => {
        tx.onTimeout = () => (timedOut = true);
        tx.reply(603);
      },
    });
    const sends = recordSends(s.transport);
    const p = await peer();
    p.send(request('INVITE', { port: p.port }), s.udpPort);
    await waitUntil(() => timedOut, 4000, 'Timer H');
    // 0, 25, 75, 175, then every 100 (T2) until H at 1600: 18 responses
    checkSchedule(sends.map((x) => x.at), [25, 50, 100, ...Array(14).fill(100)], 'Timer G');
    assert.ok(p.received.length >= 10);
    assert.equal(s.layer.size, 0);
  });

  it('INVITE: a 2xx is retransmitted until the ACK (a new branch) reaches the TU', async () => {
    let acked = 0;
    let tuAcks = 0;
    const s = await stack({
      onRequest: (_r, tx) => {
        tx.onAck = () => acked++;
        tx.reply(200, 'OK', [['Contact', '<sip:service@127.0.0.1>']]);
      },
      onAck: () => tuAcks++,
    });
    const p = await peer();
    p.send(request('INVITE', { port: p.port, callId: 'two-xx' }), s.udpPort);
    await waitUntil(() => p.received.length >= 4, 2000, '2xx retransmissions');
    const ok = p.messages()[0];
    p.send(request('ACK', { port: p.port, callId: 'two-xx', toTag: ok.toTag() }), s.udpPort);
    await waitUntil(() => acked === 1 && tuAcks === 1);
    const count = p.received.length;
    await sleep(250);
    assert.equal(p.received.length, count, 'retransmission stopped');
    assert.equal(s.layer.counts.pending2xx, 0);
    await waitUntil(() => s.layer.size === 0, 3000, 'Timer L');
  });

  it('INVITE: a 2xx never ACKed is reported after 64*T1', async () => {
    let noAck = false;
    const s = await stack({
      onRequest: (_r, tx) => {
        tx.onTimeout = () => (noAck = true);
        tx.reply(200);
      },
    });
    const p = await peer();
    p.send(request('INVITE', { port: p.port }), s.udpPort);
    await waitUntil(() => noAck, 4000, 'no ACK for 2xx');
    assert.ok(p.received.length >= 10, `${p.received.length} retransmissions`);
    await waitUntil(() => s.layer.size === 0, 2000);
  });

  it('INVITE: 100 Trying goes out by itself when the TU is slow', async () => {
    const s = await stack({ onRequest: () => undefined }, { timers: { trying: 30 } });
    const p = await peer();
    p.send(request('INVITE', { port: p.port }), s.udpPort);
    await waitUntil(() => p.received.length === 1);
    assert.equal((p.messages()[0] as SipResponse).status, 100);
    assert.equal(p.messages()[0].toTag(), undefined);
  });

  it('CANCEL: 200 to the CANCEL, the TU is told, 487 to the INVITE (To tag kept), then the ACK', async () => {
    let cancelled = 0;
    let serverTx: ServerTransaction | undefined;
    const s = await stack({
      onRequest: (_r, tx) => {
        serverTx = tx;
        tx.onCancel = () => cancelled++;
        tx.reply(180);
      },
    });
    const p = await peer();
    p.send(request('INVITE', { port: p.port, branch: 'z9hG4bKcancelme', callId: 'cancel-call' }), s.udpPort);
    await waitUntil(() => p.received.length === 1);
    const ringing = p.messages()[0];
    p.send(request('CANCEL', { port: p.port, branch: 'z9hG4bKcancelme', callId: 'cancel-call' }), s.udpPort);
    await waitUntil(() => p.received.length >= 3);
    const statuses = p.messages().map((m) => `${(m as SipResponse).status} ${m.cseq()!.method}`);
    assert.deepEqual(statuses.slice(0, 3), ['180 INVITE', '200 CANCEL', '487 INVITE']);
    assert.equal(cancelled, 1);
    assert.equal(p.messages()[2].toTag(), ringing.toTag());
    p.send(request('ACK', { port: p.port, branch: 'z9hG4bKcancelme', callId: 'cancel-call', toTag: ringing.toTag() }), s.udpPort);
    await waitUntil(() => serverTx!.state === 'confirmed' || serverTx!.state === 'terminated');
    // a CANCEL matching nothing: 481
    p.send(request('CANCEL', { port: p.port, branch: 'z9hG4bKnothing' }), s.udpPort);
    await waitUntil(() => p.messages((m) => (m as SipResponse).status === 481).length === 1);
    await waitUntil(() => s.layer.size === 0, 3000);
  });

  it('a flood beyond maxTransactions is answered 503 and the table stays bounded', async () => {
    const s = await stack({ onRequest: () => undefined }, { maxTransactions: 5 });
    const p = await peer();
    for (let i = 0; i < 40; i++) p.send(request('OPTIONS', { port: p.port }), s.udpPort);
    await waitUntil(() => p.received.length === 35, 3000, '35 × 503');
    assert.ok(p.messages().every((m) => (m as SipResponse).status === 503 && m.get('retry-after') === '5'));
    assert.equal(s.layer.size, 5);
    assert.throws(() => s.layer.sendRequest(outgoing('OPTIONS', p.port), { transport: 'UDP', host: '127.0.0.1', port: p.port }), /too many/);
  });

  it('at the limit, transactions only absorbing retransmissions make room for new ones', async () => {
    const s = await stack({ onRequest: (_r, tx) => void tx.reply(200) }, { maxTransactions: 5 });
    const p = await peer();
    for (let i = 0; i < 20; i++) {
      p.send(request('OPTIONS', { port: p.port }), s.udpPort);
      await sleep(2);
    }
    await waitUntil(() => p.received.length === 20, 3000, '20 answers');
    assert.ok(p.messages().every((m) => (m as SipResponse).status === 200));
    assert.ok(s.layer.size <= 5);
    assert.ok(s.layer.evicted >= 15);
  });

  it('malformed requests with a readable Via get 400; garbage is dropped; a throwing TU gets 500', async () => {
    const drops: string[] = [];
    const s = await stack({
      onRequest: () => {
        throw new Error('boom');
      },
    });
    s.transport.handlers.onDrop = (reason) => drops.push(reason);
    const p = await peer();
    p.send(request('OPTIONS', { port: p.port }).replace(/Call-ID: .*\r\n/, ''), s.udpPort);
    await waitUntil(() => p.received.length === 1);
    assert.match(p.received[0].text, /^SIP\/2\.0 400 Bad Request \(missing call-id\)\r\n/);
    p.send('\u0000\u0001garbage\r\n\r\n', s.udpPort);
    p.send('\r\n\r\n', s.udpPort);
    p.send(request('OPTIONS', { port: p.port }), s.udpPort);
    await waitUntil(() => p.received.length === 2);
    assert.match(p.received[1].text, /^SIP\/2\.0 500 /);
    assert.equal(drops.length, 2, drops.join('; '));
  });
});

describe('TCP', () => {
  it('frames a stream cut at odd places, answers on the same connection, pongs keep-alives', async () => {
    const seen: SipMessage[] = [];
    const s = await stack({
      onRequest: (r, tx) => {
        seen.push(r);
        tx.reply(200);
      },
    });
    const c = new TcpPeer();
    await c.connect(s.tcpPort);
    closeAfterTest(() => c.close());
    const wire = Buffer.from('\r\n\r\n' + request('OPTIONS', { port: c.port, transport: 'TCP' }) + request('MESSAGE', { port: c.port, transport: 'TCP', body: 'hello over tcp' }));
    for (let i = 0; i < wire.length; i += 17) {
      c.write(wire.subarray(i, i + 17));
      await sleep(1);
    }
    await waitUntil(() => (c.text.match(/SIP\/2\.0 200/g) ?? []).length === 2);
    assert.ok(c.text.startsWith('\r\n'), 'CRLF pong for the CRLFCRLF ping');
    assert.equal(seen.length, 2);
    assert.equal(seen[1].body.toString(), 'hello over tcp');
    assert.equal(s.transport.connectionCount, 1);
  });

  it('closes connections that exceed the size bound or speak garbage, and bounds their number', async () => {
    const s = await stack({ onRequest: (_r, tx) => void tx.reply(200) }, { transport: { maxConnections: 3, limits: { maxMessageSize: 2048 } } });
    const big = new TcpPeer();
    await big.connect(s.tcpPort);
    closeAfterTest(() => big.close());
    big.write('OPTIONS sip:x SIP/2.0\r\nX-Pad: ' + 'a'.repeat(4000));
    await waitUntil(() => big.closed, 2000, 'oversized header section closes');
    const noLength = new TcpPeer();
    await noLength.connect(s.tcpPort);
    closeAfterTest(() => noLength.close());
    noLength.write(request('OPTIONS', { port: 1, transport: 'TCP' }).replace(/Content-Length: \d+\r\n/, ''));
    await waitUntil(() => noLength.closed, 2000, 'missing Content-Length closes');
    const peers: TcpPeer[] = [];
    for (let i = 0; i < 6; i++) {
      const c = new TcpPeer();
      await c.connect(s.tcpPort);
      closeAfterTest(() => c.close());
      peers.push(c);
    }
    await sleep(50);
    assert.ok(s.transport.connectionCount <= 3);
    assert.ok(peers.filter((c) => c.closed).length >= 3);
  });

  it('closes idle connections', async () => {
    const s = await stack({}, { transport: { idleTimeoutMs: 100 } });
    const c = new TcpPeer();
    await c.connect(s.tcpPort);
    closeAfterTest(() => c.close());
    await waitUntil(() => c.closed, 2000, 'idle close');
    await waitUntil(() => s.transport.connectionCount === 0);
  });

  it('client and server transactions between two stacks over TCP reuse one connection', async () => {
    let serverSeen = 0;
    const b = await stack({
      onRequest: (_r, tx) => {
        serverSeen++;
        tx.reply(200);
      },
    });
    const a = await stack();
    const results: number[] = [];
    const send = (): ClientTransaction =>
      a.layer.sendRequest(outgoing('OPTIONS', b.tcpPort), { transport: 'TCP', host: '127.0.0.1', port: b.tcpPort }, { onResponse: (r) => results.push(r.status) });
    send();
    await waitUntil(() => results.length === 1);
    send();
    await waitUntil(() => results.length === 2);
    assert.deepEqual(results, [200, 200]);
    assert.equal(serverSeen, 2);
    assert.equal(a.transport.connectionCount, 1);
    await waitUntil(() => a.layer.size === 0 && b.layer.size === 0, 2000, 'reliable transports end at once (K, J = 0)');
  });
});

describe('response routing (RFC 3261 §18.2.2, RFC 3581)', () => {
  it('prefers the stamped source, then maddr, then received / sent-by', () => {
    const udp = { transport: 'UDP' as const, address: '198.51.100.7', port: 40000 };
    const v = (text: string) => parseVia(text)!;
    assert.deepEqual(responseDestination(v('SIP/2.0/UDP h.example:5070;branch=z9hG4bK1;received=198.51.100.7;rport=40000;maddr=203.0.113.9'), udp), { transport: 'UDP', host: '198.51.100.7', port: 40000 });
    assert.deepEqual(responseDestination(v('SIP/2.0/UDP h.example:5070;branch=z9hG4bK1;maddr=203.0.113.9'), udp), { transport: 'UDP', host: '203.0.113.9', port: 5070 });
    assert.deepEqual(responseDestination(v('SIP/2.0/UDP h.example:5070;branch=z9hG4bK1;received=198.51.100.7'), udp), { transport: 'UDP', host: '198.51.100.7', port: 5070 });
    assert.deepEqual(responseDestination(v('SIP/2.0/UDP h.example;branch=z9hG4bK1')), { transport: 'UDP', host: 'h.example', port: 5060 });
    assert.deepEqual(responseDestination(v('SIP/2.0/TCP h.example;branch=z9hG4bK1;received=198.51.100.7'), { transport: 'TCP', address: '198.51.100.7', port: 50000 }), { transport: 'TCP', host: '198.51.100.7', port: 5060 }, 'no open connection: a new one to received and the sent-by port');
  });
});
