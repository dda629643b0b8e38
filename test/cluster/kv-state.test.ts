// Device states, dynamic configuration, endpoints and graceful drain across cluster members:
// Stasis: and Custom: device states and /asterisk/config/dynamic objects written on one member are
// read on the other (also by a member that joins later), DeviceStateChanged reaches an application
// subscribed through the other member, hostile bucket entries are ignored; a phone registered
// through A is online on B with its contact and its channel on A; a draining A refuses new work
// asked of it through B while its call goes on. A real nats-server -js; both members in this process.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { sharedKey } from '../../src/cluster/shared-state.ts';
import { sharedObjectName } from '../../src/core/dynamic-config/store.ts';
import { AUTH, startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { RawPhone } from '../interop/raw-phone.ts';
import { dialplanDir, type Json, NO_NATS, until } from './cluster-fixture.ts';

const DIALPLAN = `[kv]
exten => park,1,Answer()
 same => n,Wait(120)
exten => setlamp,1,Set(DEVICE_STATE(Custom:lamp)=BUSY)
 same => n,Hangup()
exten => hang,1,Hangup()
`;
const JSON_HEADERS = { 'content-type': 'application/json' };

const skip = NO_NATS;

describe('device states, dynamic configuration, endpoints and drain across cluster members', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer | undefined;
  let nc: NatsConnection;
  let app: EventSocket | undefined;
  const phone = new RawPhone('alice');

  const settings = (node: string, serverId: string): Json => ({
    server_id: serverId,
    dialplan: { file: join(dir, 'extensions.conf') },
    // B's graceful stop gives up waiting after 2 s (the last test); A's waits for its last call.
    // No test here wants a death, and one asserts none was ever logged: a 3 s heartbeat miss on a
    // loaded machine would log one. 30 s is still longer than the wait for A's leave (20 s), so a
    // leave not told would still fail that test rather than pass as a death.
    cluster: { nats_url: nats.url, node_id: node, failure_seconds: 30, ...(node === 'nodeB' ? { drain_timeout_seconds: 2 } : {}) },
    config_objects: {
      res_pjsip: {
        endpoint: { alice: { context: 'kv', allow: 'ulaw', aors: 'alice' } },
        aor: { alice: { max_contacts: 1, remove_existing: 'yes' } },
      },
    },
  });
  const json = async (server: TestServer, path: string): Promise<Json> => {
    const response = await server.ari(path);
    return { status: response.status, ...((await response.json()) as Json) };
  };
  const stateOn = async (server: TestServer, device: string): Promise<string> => (await json(server, `/deviceStates/${encodeURIComponent(device)}`)).state;
  const configOn = async (server: TestServer, path: string): Promise<{ status: number; fields: Record<string, string> }> => {
    const response = await server.ari(`/asterisk/config/dynamic/${path}`);
    const body = (await response.json()) as unknown;
    return { status: response.status, fields: Array.isArray(body) ? Object.fromEntries(body.map((t: Json) => [t.attribute, t.value])) : {} };
  };
  const admin = async (server: TestServer, path: string): Promise<any> => (await fetch(`${server.url}/admin/${path}`, { headers: { authorization: AUTH } })).json();

  before(async () => {
    dir = dialplanDir('patchbay-cluster-kv-', DIALPLAN);
    nats = await startNatsServer();
    await phone.open();
    a = await startTestServer(settings('nodeA', '02:00:00:00:3a:01'));
    nc = await connect({ servers: nats.url });
  });

  after(async () => {
    phone.close();
    await app?.close();
    await nc?.close();
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a member that joins later finds the device states and configuration objects written before', async () => {
    assert.equal((await a.ari('/deviceStates/Stasis:desk?deviceState=INUSE', { method: 'PUT' })).status, 204);
    // DEVICE_STATE(Custom:lamp)=BUSY in A's dialplan.
    assert.equal((await a.ari('/channels?endpoint=Local/setlamp@kv&extension=hang&context=kv', { method: 'POST' })).status, 200);
    await until('A ran the dialplan', async () => (await stateOn(a, 'Custom:lamp')) === 'BUSY');
    const created = await a.ari('/asterisk/config/dynamic/res_pjsip/endpoint/bob', {
      method: 'PUT',
      headers: JSON_HEADERS,
      body: JSON.stringify({ fields: [{ attribute: 'context', value: 'kv' }, { attribute: 'allow', value: 'ulaw' }] }),
    });
    assert.equal(created.status, 200, await created.clone().text());

    b = await startTestServer(settings('nodeB', '02:00:00:00:3b:01'));
    const joined = b;
    await until('B reads Stasis:desk', async () => (await stateOn(joined, 'Stasis:desk')) === 'INUSE');
    await until('B reads Custom:lamp', async () => (await stateOn(joined, 'Custom:lamp')) === 'BUSY');
    await until('B has the endpoint object bob', async () => (await configOn(joined, 'res_pjsip/endpoint/bob')).fields.context === 'kv');
    // The object is live configuration there: B's PJSIP technology has the endpoint.
    await until('B has the endpoint PJSIP/bob', async () => (await joined.ari('/endpoints/PJSIP/bob')).status === 200);
    const listed = (await (await joined.ari('/deviceStates')).json()) as Json[];
    assert.ok(listed.some((device) => device.name === 'Stasis:desk' && device.state === 'INUSE'), JSON.stringify(listed));
  });

  it('device states written on either member are read on both, and DeviceStateChanged reaches an application through the other member', async () => {
    const other = b!;
    app = await other.events('app=kvapp');
    const subscribed = await other.ari('/applications/kvapp/subscription?eventSource=deviceState:Stasis:door', { method: 'POST' });
    assert.equal(subscribed.status, 200, await subscribed.clone().text());
    assert.equal((await a.ari('/deviceStates/Stasis:door?deviceState=RINGING', { method: 'PUT' })).status, 204);
    const event = await app.nextOfType('DeviceStateChanged', 15_000);
    assert.deepEqual(event.device_state, { name: 'Stasis:door', state: 'RINGING' });
    assert.equal(await stateOn(other, 'Stasis:door'), 'RINGING');
    // Once, not once per member.
    const more = (await app.quiet(1000)).filter((m) => m.type === 'DeviceStateChanged');
    assert.equal(more.length, 0, JSON.stringify(more));

    assert.equal((await other.ari('/deviceStates/Stasis:door', { method: 'DELETE' })).status, 204);
    await until('A sees Stasis:door removed', async () => (await a.ari('/deviceStates/Stasis:door', { method: 'DELETE' })).status === 404);
    assert.equal(await stateOn(a, 'Stasis:door'), 'UNKNOWN');

    // Written on B, read on A.
    assert.equal((await other.ari('/deviceStates/Stasis:desk?deviceState=ONHOLD', { method: 'PUT' })).status, 204);
    await until('A reads ONHOLD', async () => (await stateOn(a, 'Stasis:desk')) === 'ONHOLD');
    // Racing writes from both: each is sent without waiting, so the bucket's order (not the order
    // of the HTTP answers) decides; both members end with the bucket's newest value.
    for (const state of ['NOT_INUSE', 'BUSY', 'RINGING', 'INUSE']) {
      const writer = state === 'NOT_INUSE' || state === 'RINGING' ? a : other;
      assert.equal((await writer.ari(`/deviceStates/Stasis:desk?deviceState=${state}`, { method: 'PUT' })).status, 204);
    }
    const bucket = await new Kvm(nc).open('pb_patchbay_devstates');
    const newest = async (): Promise<string | undefined> => ((await bucket.get(sharedKey('Stasis:desk')))?.json<{ value?: string }>())?.value;
    await until('both read the newest write', async () => {
      const value = await newest();
      return value !== undefined && (await stateOn(a, 'Stasis:desk')) === value && (await stateOn(other, 'Stasis:desk')) === value;
    });
  });

  it('dynamic configuration changed and deleted on B applies on A', async () => {
    const other = b!;
    const changed = await other.ari('/asterisk/config/dynamic/res_pjsip/endpoint/bob', {
      method: 'PUT',
      headers: JSON_HEADERS,
      body: JSON.stringify({ fields: [{ attribute: 'context', value: 'elsewhere' }] }),
    });
    assert.equal(changed.status, 200);
    await until('A reads the change', async () => (await configOn(a, 'res_pjsip/endpoint/bob')).fields.context === 'elsewhere');
    assert.equal((await configOn(a, 'res_pjsip/endpoint/bob')).fields.allow, 'ulaw', 'the fields not changed stay');
    assert.equal((await other.ari('/asterisk/config/dynamic/res_pjsip/endpoint/bob', { method: 'DELETE' })).status, 204);
    await until('A no longer has bob', async () => (await configOn(a, 'res_pjsip/endpoint/bob')).status === 404);
    await until('nor the endpoint PJSIP/bob', async () => (await a.ari('/endpoints/PJSIP/bob')).status === 404);
  });

  it('hostile entries in the device state and configuration buckets are ignored', async () => {
    const other = b!;
    const kvm = new Kvm(nc);
    const states = await kvm.open('pb_patchbay_devstates');
    const config = await kvm.open('pb_patchbay_config');
    const entry = (name: string, value?: unknown): string => JSON.stringify({ name, origin: 'hostile', ...(value !== undefined ? { value } : {}) });
    await states.put('garbage', 'not json');
    await states.put(sharedKey('Stasis:evil'), entry('Stasis:evil', 'EXPLODED'));
    await states.put(sharedKey('PJSIP/alice'), entry('PJSIP/alice', 'INUSE'));
    await states.put(sharedKey('Stasis:other'), entry('Stasis:wrongkey', 'BUSY'));
    await states.put(sharedKey('Stasis:num'), JSON.stringify({ name: 'Stasis:num', origin: 'hostile', value: 7 }));
    await assert.rejects(states.put(sharedKey('Stasis:big'), entry('Stasis:big', 'x'.repeat(2000))), 'the bucket refuses values beyond its bound');
    const evilName = sharedObjectName('res_pjsip', 'endpoint', 'evil');
    await config.put(sharedKey(evilName), entry(evilName, JSON.stringify({ no_such_attribute: 'x' })));
    const badValue = sharedObjectName('res_pjsip', 'endpoint', 'evil2');
    await config.put(sharedKey(badValue), entry(badValue, JSON.stringify({ allow: '!ulaw,BLECH' })));
    await config.put(sharedKey('["nope"]'), entry('["nope"]', '{}'));
    const unknownType = sharedObjectName('res_pjsip', 'no_such_type', 'x');
    await config.put(sharedKey(unknownType), entry(unknownType, '{}'));
    await config.put(sharedKey(sharedObjectName('res_pjsip', 'endpoint', 'evil3')), entry(sharedObjectName('res_pjsip', 'endpoint', 'evil3'), '[1,2]'));
    // A good write after them still travels: the watchers went on.
    assert.equal((await a.ari('/deviceStates/Stasis:after?deviceState=ONHOLD', { method: 'PUT' })).status, 204);
    await until('B reads the write made after the hostile entries', async () => (await stateOn(other, 'Stasis:after')) === 'ONHOLD');
    for (const server of [a, other]) {
      assert.equal(await stateOn(server, 'Stasis:evil'), 'UNKNOWN');
      assert.equal(await stateOn(server, 'Stasis:wrongkey'), 'UNKNOWN');
      assert.equal(await stateOn(server, 'Stasis:num'), 'UNKNOWN');
      for (const id of ['evil', 'evil2', 'evil3']) assert.equal((await configOn(server, `res_pjsip/endpoint/${id}`)).status, 404, id);
    }
  });

  it('a phone registered through A is online on B, with its contact and its call on A', async () => {
    const other = b!;
    phone.serverPort = a.core.pjsip.port;
    const register = [
      `REGISTER sip:127.0.0.1:${a.core.pjsip.port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${phone.sipPort};branch=z9hG4bKkvreg${Date.now()};rport`,
      'Max-Forwards: 70',
      'From: <sip:alice@127.0.0.1>;tag=kvreg',
      'To: <sip:alice@127.0.0.1>',
      'Call-ID: kv-reg-alice',
      'CSeq: 1 REGISTER',
      `Contact: <sip:alice@127.0.0.1:${phone.sipPort}>`,
      'Expires: 300',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    phone.sip.send(Buffer.from(register, 'latin1'), a.core.pjsip.port, '127.0.0.1');
    assert.match(await phone.nextMessage(/^SIP\/2\.0 200/, 10_000), /REGISTER/);
    // B's own view (not only A's part of the merged answer): the endpoint is online there too.
    await until('B itself has PJSIP/alice online', () => other.core.endpoints.get('PJSIP', 'alice')?.state === 'online');
    assert.equal((await json(other, '/endpoints/PJSIP/alice')).state, 'online');
    assert.equal(await stateOn(other, 'PJSIP/alice'), 'NOT_INUSE');
    const contacts = (await admin(other, 'pjsip/contacts')) as Json[];
    const elsewhere = contacts.find((contact) => contact.aor === 'alice');
    assert.ok(elsewhere, JSON.stringify(contacts));
    assert.match(elsewhere.uri, new RegExp(`:${phone.sipPort}`));
    assert.match(elsewhere.source, /via cluster member nodeA/);
    const endpoints = (await admin(other, 'pjsip/endpoints')) as Json[];
    const alice = endpoints.find((endpoint) => endpoint.id === 'alice');
    assert.equal(alice?.state, 'online');
    assert.equal(alice?.contacts, 1);

    // A call to the phone on A: B lists it on the endpoint and aggregates the device's state.
    const call = await a.ari('/channels?endpoint=PJSIP/alice&extension=park&context=kv&channelId=kv-alice-call', { method: 'POST' });
    assert.equal(call.status, 200, await call.clone().text());
    await until('the call is up on A', async () => (await json(a, '/channels/kv-alice-call')).state === 'Up');
    const seen = await json(other, '/endpoints/PJSIP/alice');
    assert.deepEqual(seen.channel_ids, ['kv-alice-call']);
    assert.equal(seen.state, 'online');
    assert.equal(await stateOn(other, 'PJSIP/alice'), 'INUSE');
    const listed = (await (await other.ari('/endpoints/PJSIP')).json()) as Json[];
    assert.deepEqual(listed.find((endpoint) => endpoint.resource === 'alice')?.channel_ids, ['kv-alice-call']);
  });

  it('a draining member refuses new work asked of it through another member, while its call goes on', async () => {
    const other = b!;
    let idle = false;
    a.drain(true, () => {
      idle = true;
    });
    await until('B sees A draining', async () => ((await admin(other, 'cluster')).members as Json[]).some((m) => m.node === 'nodeA' && m.draining === true), 5000);
    const metrics = await (await fetch(`${other.url}/metrics`)).text();
    assert.match(metrics, /patchbay_cluster_member_draining\{member="nodeA"\} 1/);
    assert.match(metrics, /patchbay_cluster_member_channels\{member="nodeA"\} [1-9]/);
    assert.match(metrics, /patchbay_cluster_member_draining\{member="nodeB"\} 0/);

    const placed = await other.ari('/channels?endpoint=Local/hang@kv&extension=hang&context=kv&cluster_node=nodeA', { method: 'POST' });
    assert.equal(placed.status, 503);
    assert.match(((await placed.json()) as Json).message, /nodeA is shutting down gracefully/);
    // A snoop channel on A's call is new work on A: refused there, as a single draining server does.
    const snoop = await other.ari('/channels/kv-alice-call/snoop?spy=in&app=kvapp', { method: 'POST' });
    assert.equal(snoop.status, 503, await snoop.clone().text());
    assert.match(((await snoop.json()) as Json).message, /shutting down gracefully/);
    // Without a hint the new channel is placed on B, never on the draining A.
    const elsewhere = await other.ari('/channels?endpoint=Local/park@kv&extension=park&context=kv', { method: 'POST' });
    assert.equal(elsewhere.status, 200);
    const elsewhereId = ((await elsewhere.json()) as Json).id as string;
    assert.ok(other.core.channels.get(elsewhereId), 'placed on B');

    // A's call is still reachable through B, and A is idle once it ends.
    assert.equal((await json(other, '/channels/kv-alice-call')).state, 'Up');
    assert.equal(idle, false);
    assert.equal((await other.ari('/channels/kv-alice-call', { method: 'DELETE' })).status, 204);
    await until('A is idle', () => idle);
    await other.ari(`/channels/${elsewhereId}`, { method: 'DELETE' });

    a.drain(false);
    await until('B sees A up again', async () => ((await admin(other, 'cluster')).members as Json[]).some((m) => m.node === 'nodeA' && m.draining === false), 5000);
    assert.equal((await other.ari('/channels?endpoint=Local/hang@kv&extension=hang&context=kv&cluster_node=nodeA', { method: 'POST' })).status, 200);
  });

  it('a member that stops says it leaves: the other takes it out without declaring it dead', async () => {
    const other = b!;
    await a.stop();
    await until('B no longer lists A', async () => !((await admin(other, 'cluster')).members as Json[]).some((m) => m.node === 'nodeA'));
    assert.ok(other.logLines.some((line) => line.includes('cluster member left')), 'B logged the leave');
    assert.ok(!other.logLines.some((line) => line.includes('declared dead')), 'and no death');
  });

  it('a drain timeout ends the wait for the last call', async () => {
    const other = b!;
    const call = await other.ari('/channels?endpoint=Local/park@kv&extension=park&context=kv', { method: 'POST' });
    assert.equal(call.status, 200);
    let stopped = false;
    other.drain(true, () => {
      stopped = true;
    });
    await until('the drain timeout passed', () => stopped, 20_000);
    assert.ok(other.core.channels.size > 0, 'with the call still up');
    assert.ok(other.logLines.some((line) => line.includes('drain_timeout_seconds passed')));
  });
});
