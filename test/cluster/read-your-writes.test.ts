// Read-your-writes of the dynamic configuration and device states across members (docs/cluster.md,
// "Endpoints and device states"): once a write through B is answered, a read through B or A sees
// it, every time (the answer waits until each live member's watcher has applied it: kv-seen.ts).
// A member alive by its heartbeats but answering no kv-seen delays an answer by the bound at most;
// hostile kv-seen requests are answered with an error and change nothing. A real nats-server -js;
// the three members in this process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { READ_YOUR_WRITES_MS } from '../../src/cluster/kv-seen.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { clusterStatus, type Json, NO_NATS, stopThreeMembers, type ThreeMembers, until } from './cluster-fixture.ts';

const skip = NO_NATS;
const ROUNDS = 30;
const JSON_HEADERS = { 'content-type': 'application/json' };

describe('read-your-writes of dynamic configuration and device states across cluster members', { skip }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  const servers: ThreeMembers = { a: undefined, b: undefined, c: undefined };
  const members = async (server: TestServer): Promise<number> => (await clusterStatus(server.url)).members.length;

  before(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    let n = 0;
    for (const name of ['a', 'b', 'c'] as const) {
      servers[name] = await startTestServer({ server_id: `02:00:00:00:9${n++}:01`, cluster: { nats_url: nats.url, node_id: `node${name.toUpperCase()}`, failure_seconds: 3 } });
    }
    for (const server of [servers.a!, servers.b!, servers.c!]) await until(`three members seen from ${server.url}`, async () => (await members(server)) === 3);
  });

  after(async () => {
    await nc?.close();
    await stopThreeMembers(servers);
    await nats?.stop();
  });

  it(`${ROUNDS} rounds: a dynamic endpoint created, then deleted, through B is there, then gone, through B and A at once`, async () => {
    const { a, b } = servers as Record<'a' | 'b' | 'c', TestServer>;
    for (let round = 0; round < ROUNDS; round++) {
      const id = `ryw${round}`;
      const created = await b.ari(`/asterisk/config/dynamic/res_pjsip/endpoint/${id}`, { method: 'PUT', headers: JSON_HEADERS, body: JSON.stringify({ fields: [{ attribute: 'context', value: 'default' }] }) });
      assert.equal(created.status, 200, await created.clone().text());
      const [viaB, viaA] = await Promise.all([b.ari(`/endpoints/PJSIP/${id}`), a.ari(`/endpoints/PJSIP/${id}`)]);
      assert.deepEqual([viaB.status, viaA.status], [200, 200], `round ${round}: the endpoint through B and A after its creation`);
      assert.equal((await b.ari(`/asterisk/config/dynamic/res_pjsip/endpoint/${id}`, { method: 'DELETE' })).status, 204);
      const [goneB, goneA] = await Promise.all([b.ari(`/endpoints/PJSIP/${id}`), a.ari(`/endpoints/PJSIP/${id}`)]);
      assert.deepEqual([goneB.status, goneA.status], [404, 404], `round ${round}: the endpoint through B and A after its deletion`);
    }
  });

  it(`${ROUNDS} rounds: a Stasis: device state set through B reads the same through A at once, and its deletion too`, async () => {
    const { a, b } = servers as Record<'a' | 'b' | 'c', TestServer>;
    const states = ['BUSY', 'INUSE', 'RINGING', 'ONHOLD', 'NOT_INUSE'];
    for (let round = 0; round < ROUNDS; round++) {
      const state = states[round % states.length]!;
      assert.equal((await b.ari(`/deviceStates/Stasis:ryw?deviceState=${state}`, { method: 'PUT' })).status, 204);
      const read = (await (await a.ari('/deviceStates/Stasis:ryw')).json()) as Json;
      assert.equal(read.state, state, `round ${round}: the state through A after the PUT through B`);
    }
    assert.equal((await b.ari('/deviceStates/Stasis:ryw', { method: 'DELETE' })).status, 204);
    // Deleted through B: A answers as B does (a device nobody set reads UNKNOWN).
    assert.deepEqual((await (await a.ari('/deviceStates/Stasis:ryw')).json()) as Json, (await (await b.ari('/deviceStates/Stasis:ryw')).json()) as Json);
    assert.equal(((await (await a.ari('/deviceStates/Stasis:ryw')).json()) as Json).state, 'UNKNOWN');
  });

  it('hostile kv-seen requests are answered with an error; nothing waits', async () => {
    const ask = async (payload: string | Uint8Array): Promise<Json> => JSON.parse(Buffer.from((await nc.request('pb.patchbay.node.nodeA.kv-seen', payload, { timeout: 5000 })).data).toString('utf8')) as Json;
    const hostile: Array<[string, string | Uint8Array]> = [
      ['not JSON', 'nope{'],
      ['huge', JSON.stringify({ bucket: 'config', revision: 1, pad: 'x'.repeat(100_000) })],
      ['an array', '[1,2]'],
      ['negative revision', JSON.stringify({ bucket: 'config', revision: -5 })],
      ['zero revision', JSON.stringify({ bucket: 'devstates', revision: 0 })],
      ['fractional revision', JSON.stringify({ bucket: 'config', revision: 1.5 })],
      ['revision as a string', JSON.stringify({ bucket: 'config', revision: '3' })],
      ['unknown bucket', JSON.stringify({ bucket: 'globals', revision: 1 })],
      ['no bucket', JSON.stringify({ revision: 1 })],
      ['negative wait', JSON.stringify({ bucket: 'config', revision: 1, waitMs: -1 })],
      ['binary', new Uint8Array([0xff, 0x00, 0xfe])],
    ];
    for (const [what, payload] of hostile) {
      const began = Date.now();
      const answer = await ask(payload);
      assert.equal(typeof answer.error, 'string', `${what}: ${JSON.stringify(answer)}`);
      assert.ok(Date.now() - began < READ_YOUR_WRITES_MS, `${what}: answered at once`);
    }
    // A revision far ahead is waited for no longer than the bound, and said not reached.
    const began = Date.now();
    const ahead = await ask(JSON.stringify({ bucket: 'config', revision: 1e12, waitMs: 200 }));
    assert.equal(ahead.reached, false);
    assert.ok(Date.now() - began < READ_YOUR_WRITES_MS + 2000, `a revision never reached: answered after ${Date.now() - began} ms`);
    // A reached one at once.
    const seen = await ask(JSON.stringify({ bucket: 'config', revision: 1 }));
    assert.equal(seen.reached, true, JSON.stringify(seen));
    // The member still serves writes with read-your-writes.
    const { a, b } = servers as Record<'a' | 'b' | 'c', TestServer>;
    assert.equal((await b.ari('/deviceStates/Stasis:after-hostile?deviceState=BUSY', { method: 'PUT' })).status, 204);
    assert.equal(((await (await a.ari('/deviceStates/Stasis:after-hostile')).json()) as Json).state, 'BUSY');
  });

  it('a member alive by its heartbeats but answering no kv-seen delays the answer by the bound at most', async () => {
    const { a, b } = servers as Record<'a' | 'b' | 'c', TestServer>;
    const silent = await connect({ servers: nats.url });
    // nodeZ: heartbeats, and its kv-seen (and ARI) requests swallowed.
    silent.subscribe('pb.patchbay.node.nodeZ.>', { callback: () => undefined });
    const beat = (): void => silent.publish('pb.patchbay.hb', JSON.stringify({ node: 'nodeZ', instance: 'silent-ryw', asteriskId: '02:00:00:00:9f:01', ari: 'http://127.0.0.1:9', load: { channels: 0, bridges: 0 }, draining: false }));
    beat();
    const heartbeats = setInterval(beat, 500);
    try {
      await until('the silent member seen by B', async () => (await members(b)) === 4);
      for (let round = 0; round < 2; round++) {
        const began = Date.now();
        const response = await b.ari(`/deviceStates/Stasis:silent?deviceState=${round === 0 ? 'BUSY' : 'INUSE'}`, { method: 'PUT' });
        const took = Date.now() - began;
        assert.equal(response.status, 204);
        // At least most of the bound (the silent member was waited for), and not much beyond it (a loaded machine's margin).
        assert.ok(took >= READ_YOUR_WRITES_MS / 2, `round ${round}: answered after ${took} ms: the silent member was not waited for`);
        assert.ok(took < READ_YOUR_WRITES_MS + 3000, `round ${round}: answered after ${took} ms, beyond the bound`);
        // The live members have it.
        assert.equal(((await (await a.ari('/deviceStates/Stasis:silent')).json()) as Json).state, round === 0 ? 'BUSY' : 'INUSE');
      }
    } finally {
      clearInterval(heartbeats);
      await silent.close();
    }
    const counted = (await clusterStatus(b.url)).shared_state;
    assert.ok(counted.writes_unconfirmed >= 2 && counted.writes_confirmed >= 2 * ROUNDS, JSON.stringify(counted));
    await until('the silent member declared dead', async () => (await members(b)) === 3);
    // Without it, an answer waits for the live members only.
    const began = Date.now();
    assert.equal((await b.ari('/deviceStates/Stasis:silent?deviceState=NOT_INUSE', { method: 'PUT' })).status, 204);
    assert.ok(Date.now() - began < READ_YOUR_WRITES_MS, `answered after ${Date.now() - began} ms once the silent member was gone`);
  });
});
