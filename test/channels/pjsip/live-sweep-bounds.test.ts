// The live hostile-input sweep's bounds (see live-sweep.test.ts for the dialog cases): TCP framing
// with a Content-Length that lies, a slowloris connection, many TCP connections and many dialogs
// from one source, and digest challenges answered with hostile Authorization — each against a
// started server, which afterwards still answers a well-behaved peer from another address.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { digestHa1, digestResponse } from '../../../src/sip/auth/digest.ts';
import { HostilePeer, statusOf, type PeerDialog } from '../../helpers/hostile-peer.ts';
import { parsePrometheus, sumOf } from '../../helpers/prometheus.ts';
import { sipHeader } from '../../helpers/sip-inbox.ts';
import type { TestServer } from '../../helpers/server.ts';
import { ALICE_PASSWORD, pollUntil, startSweepServer, type SweepServer } from './live-sweep-server.ts';

let started: SweepServer | undefined;
let server: TestServer;
const peers: HostilePeer[] = [];

before(async () => {
  started = await startSweepServer('patchbay-live-bounds-', 'exten => hold,1,Answer()\n same => n,Wait(60)\n', {
    tcp: { max_connections_per_source: 4, first_message_timeout_seconds: 2 },
    failed_auth: { max_per_source: 4, max_per_endpoint: 100 },
  });
  server = started.server;
});

after(async () => {
  for (const peer of peers) peer.close();
  await started?.stop();
});

async function open(transport: 'UDP' | 'TCP', address = '127.0.0.1'): Promise<HostilePeer> {
  const peer = await HostilePeer.open(transport, server.core.pjsip.port, address);
  peers.push(peer);
  return peer;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  if (!(await pollUntil(condition, timeoutMs))) throw new Error(`timed out waiting for ${what}`);
}

/** A well-behaved OPTIONS from another address must get 200. */
async function stillServed(address: string, transport: 'UDP' | 'TCP' = 'TCP'): Promise<void> {
  const probe = await open(transport, address);
  const answer = await probe.request({ method: 'OPTIONS' }, 10_000);
  assert.equal(answer && statusOf(answer), 200, `OPTIONS from ${address} over ${transport}`);
  probe.close();
}

const pick = <T>(items: readonly T[], i: number): T => items[i % items.length];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('live sweep: TCP framing', () => {
  it('a Content-Length larger than the body waits for the rest; the completed message is answered', async () => {
    const peer = await open('TCP');
    const built = peer.build({ method: 'OPTIONS', body: 'x'.repeat(10), contentType: 'text/plain', contentLength: 40 });
    peer.sendRaw(built.text);
    await sleep(500);
    assert.equal(peer.responses.length, 0, 'nothing answered before the body is whole');
    await stillServed('127.0.0.2');
    peer.sendRaw('y'.repeat(30));
    const final = await peer.finalFor(built.callId, built.cseq, 'OPTIONS', 10_000);
    assert.equal(final && statusOf(final), 200);
  });

  it('a Content-Length smaller than the body: the rest is no message, and never a 5xx', async () => {
    const peer = await open('TCP');
    peer.sendRaw(peer.build({ method: 'OPTIONS', body: 'z'.repeat(300), contentType: 'text/plain', contentLength: 5 }).text);
    await until(() => peer.responses.length > 0 || peer.closed, 10_000, 'an answer or a closed connection');
    assert.ok(peer.responses.every((r) => r.status < 500), JSON.stringify(peer.responses));
    await stillServed('127.0.0.2');
  });

  it('a Content-Length of 10^11 or garbage closes the connection instead of buffering', async () => {
    for (const length of ['99999999999', '-5', 'abc', '1e3']) {
      const peer = await open('TCP');
      const head = peer.build({ method: 'OPTIONS', headers: [`Content-Length: ${length}`] }).text.toString('latin1').replace(/Content-Length: 0\r\n/, '');
      peer.sendRaw(head);
      // The bound is the parser's message size: more than it (65,535) must not be held.
      for (let i = 0; i < 10 && !peer.closed; i++) peer.sendRaw('q'.repeat(8192));
      await until(() => peer.closed || peer.responses.some((r) => r.status >= 400), 10_000, `the answer to Content-Length ${length}`);
      assert.ok(peer.responses.every((r) => r.status < 500), `Content-Length ${length}: ${JSON.stringify(peer.responses)}`);
    }
    await stillServed('127.0.0.2');
  });

  it('slowloris: a message trickled a byte at a time is cut off by first_message_timeout_seconds', async () => {
    const peer = await open('TCP', '127.0.0.3');
    const text = peer.build({ method: 'OPTIONS' }).text.toString('latin1');
    const started = Date.now();
    for (let i = 0; i < text.length - 4 && !peer.closed && Date.now() - started < 15_000; i++) {
      peer.sendRaw(text[i]);
      await sleep(100);
    }
    assert.ok(peer.closed, 'the trickling connection was closed');
    await stillServed('127.0.0.2');
  });
});

describe('live sweep: overlong request lines', () => {
  it('a request line past 8 KiB is answered 414 (a long Request-URI) over UDP and TCP, not met with silence', async () => {
    for (const transport of ['UDP', 'TCP'] as const) {
      const peer = await open(transport);
      const params = Array.from({ length: 3000 }, (_, i) => `p${i}=1`).join(';');
      const answer = await peer.request({ method: 'OPTIONS', uri: `sip:hold@127.0.0.1:${server.core.pjsip.port};${params}` }, 10_000);
      assert.equal(answer && statusOf(answer), 414, transport);
      // The connection is still good for the next request.
      const next = await peer.request({ method: 'OPTIONS' }, 10_000);
      assert.equal(next && statusOf(next), 200, transport);
      peer.close();
    }
  });
});

describe('live sweep: per-source bounds', () => {
  it('TCP connections from one address stop at max_connections_per_source; another address is served', async () => {
    const flood: HostilePeer[] = [];
    for (let i = 0; i < 6; i++) flood.push(await open('TCP', '127.0.0.4'));
    await until(() => flood.filter((peer) => peer.closed).length >= 2, 5000, 'the connections past the bound closed');
    await stillServed('127.0.0.5');
    for (const peer of flood) peer.close();
  });

  it('a UDP flood past the transaction bound from one source: another source still gets 200, not 503', async () => {
    const flood = await open('UDP', '127.0.0.10');
    // More requests than the layer holds transactions (10,000): each lingers 32 s (Timer J) once answered.
    for (let i = 0; i < 12_000; i++) {
      flood.send({ method: pick(['OPTIONS', 'INFO', 'MESSAGE'], i), toTag: i % 3 === 1 ? `t${i}` : undefined, contentType: i % 3 === 2 ? 'text/plain' : undefined, body: i % 3 === 2 ? 'hi' : undefined });
      // Paced a little: loopback UDP drops what the receive buffers cannot hold, on either side.
      if (i % 50 === 49) await sleep(10);
    }
    // Answered once a second passes without another answer.
    for (let seen = -1; seen !== flood.responses.length; ) {
      seen = flood.responses.length;
      await sleep(1000);
    }
    const statuses = new Map<number, number>();
    for (const response of flood.responses) statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const gauge = sumOf(parsePrometheus(await (await fetch(`${server.url}/metrics`)).text()), 'patchbay_sip_transactions');
    const figures = `${flood.responses.length} answers ${JSON.stringify([...statuses])}, ${gauge} transactions live`;
    await stillServed('127.0.0.11', 'UDP');
    const unavailable = flood.responses.filter((r) => r.status === 503).length;
    assert.equal(unavailable, 0, `${unavailable} requests of the flood got 503 (${figures})`);
  });

  it('dialogs from one source stop at max_calls_per_endpoint (486) and leave nothing behind', async () => {
    const peer = await open('UDP', '127.0.0.6');
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => peer.call()));
    const dialogs = outcomes.filter((o): o is PeerDialog => typeof o !== 'number');
    assert.equal(dialogs.length, 4, JSON.stringify(outcomes.map((o) => (typeof o === 'number' ? o : 200))));
    assert.deepEqual(outcomes.filter((o) => typeof o === 'number'), [486, 486]);
    for (const dialog of dialogs) assert.equal(await peer.hangUp(dialog), 200);
    await until(async () => ((await (await server.ari('/channels')).json()) as unknown[]).length === 0, 15_000, 'no channel left');
  });
});

describe('live sweep: hostile Authorization', () => {
  const register = async (peer: HostilePeer, authorization?: string): Promise<string | undefined> =>
    peer.request({ method: 'REGISTER', uri: `sip:127.0.0.1:${server.core.pjsip.port}`, user: 'alice', toUser: 'alice', headers: [...(authorization ? [`Authorization: ${authorization}`] : []), 'Expires: 60'] });

  const challenge = async (peer: HostilePeer): Promise<{ nonce: string; realm: string }> => {
    const answer = await register(peer);
    assert.equal(answer && statusOf(answer), 401);
    const header = sipHeader(answer ?? '', 'www-authenticate') ?? '';
    const param = (name: string): string => new RegExp(`${name}="?([^",]*)"?`, 'i').exec(header)?.[1] ?? '';
    return { nonce: param('nonce'), realm: param('realm') };
  };

  const good = (nonce: string, realm: string, nc = '00000001'): string => {
    const uri = `sip:127.0.0.1:${server.core.pjsip.port}`;
    const cnonce = randomBytes(4).toString('hex');
    const response = digestResponse('MD5', digestHa1('MD5', 'alice', realm, ALICE_PASSWORD), { method: 'REGISTER', uri, nonce, qop: 'auth', nc, cnonce });
    return `Digest username="alice", realm="${realm}", nonce="${nonce}", uri="${uri}", response="${response}", algorithm=MD5, qop=auth, nc=${nc}, cnonce="${cnonce}"`;
  };

  it('hostile answers to a challenge get 4xx, never 5xx; a failing source does not lock out another', async () => {
    const attacker = await open('UDP', '127.0.0.7');
    const { nonce, realm } = await challenge(attacker);
    const hostile = [
      good('n'.repeat(7000), realm),
      good(nonce, 'wrong-realm'),
      good(nonce, realm).replace('algorithm=MD5', 'algorithm=SHA-512-256'),
      good(nonce, realm).replace('algorithm=MD5', 'algorithm=NO-SUCH'),
      good(nonce, realm).replace('qop=auth', 'qop=auth-int'),
      good(nonce, realm, 'ffffffffffffffffffff'),
      good(nonce, realm, 'zz'),
      'Digest ' + 'a=b,'.repeat(1500),
      'Digest username="alice", realm="' + '\\"'.repeat(2000) + '"',
      'Basic YWxpY2U6czNjcmV0',
      'Digest',
      '',
    ];
    for (const authorization of hostile) {
      const answer = await register(attacker, authorization || ' ');
      const status = answer ? statusOf(answer) : 0;
      assert.ok(status >= 400 && status < 500, `Authorization ${authorization.slice(0, 80)} → ${status}`);
    }
    // nc replay: the right answer once is 200; the very same answer (same nonce, nc, cnonce) again is refused.
    const friend = await open('UDP', '127.0.0.8');
    const fresh = await challenge(friend);
    const once = good(fresh.nonce, fresh.realm);
    assert.equal(statusOf((await register(friend, once)) ?? ''), 200, 'a good source is not locked out by the failing one');
    const replay = await register(friend, once);
    assert.ok(replay && statusOf(replay) >= 400 && statusOf(replay) < 500, `a replayed nc got ${replay && statusOf(replay)}`);
    await stillServed('127.0.0.9', 'UDP');
  });
});
