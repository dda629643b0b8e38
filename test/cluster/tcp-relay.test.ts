// A phone registered over TCP through member A, called from member B over A's connection (issue
// 26, docs/cluster.md "Registrations"): a raw TCP phone (it sees what a phone sees on its
// connection) registers through A; B originates PJSIP/alice and runs Dial(PJSIP/alice). The phone
// sees A only (Via, Contact, From), the call comes up, RTP flows between the phone and B directly
// both ways (B's Echo sends the phone's tone back); BYE from B and from the phone; CANCEL of a
// ringing call; a MESSAGE from B; the bound on relayed calls; the phone's
// connection closing mid-call ends B's call (cause 27); a contact whose connection A no longer has
// fails as unreachable; hostile flow messages are refused. A real nats-server -js; both members in
// this process.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { RawTcpPhone, sipHeader } from '../helpers/raw-tcp-phone.ts';
import { clusterStatus, dialplanDir, type Json, memberSettings, nextChannelEvent, NO_NATS, until } from './cluster-fixture.ts';

const DIALPLAN = `[phones]
exten => echo,1,Answer()
 same => n,Echo()
exten => park,1,Answer()
 same => n,Wait(60)
exten => call-alice,1,Dial(PJSIP/alice,20)
 same => n,Hangup()
`;

/** cluster.max_relayed_dialogs on both members: small, so that the bound is reached in a test. */
const MAX_RELAYED = 2;

const skip = NO_NATS;

describe('a phone registered over TCP through member A, called from member B', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  let nc: NatsConnection;
  let phone: RawTcpPhone;
  let events: EventSocket;

  const settings = (node: string, serverId: string): Json => ({
    ...memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3, max_relayed_dialogs: MAX_RELAYED }),
    config_objects: {
      res_pjsip: {
        endpoint: { alice: { context: 'phones', allow: 'ulaw', aors: 'alice' } },
        aor: { alice: { max_contacts: 1, remove_existing: 'yes' } },
      },
    },
  });
  const status = async (server: TestServer): Promise<Json> => clusterStatus(server.url);
  const channel = async (server: TestServer, id: string): Promise<Json | undefined> => {
    const response = await server.ari(`/channels/${id}`);
    return response.status === 200 ? ((await response.json()) as Json) : undefined;
  };
  const nextEvent = (type: string, channelId: string, timeoutMs = 20_000): Promise<Json> => nextChannelEvent(events, type, channelId, timeoutMs);
  async function registerPhone(): Promise<void> {
    phone = new RawTcpPhone('alice');
    await phone.open(a.core.pjsip.port);
    const answer = await phone.register(a.core.pjsip.port);
    assert.match(answer, /^SIP\/2\.0 200/);
    // This connection's contact, and only it (a previous phone's is withdrawn by remove_existing).
    const own = (uri: string): boolean => uri.includes(`127.0.0.1:${phone.localPort};`);
    await until('B knows the TCP contact registered on A', async () => {
      const elsewhere = b.core.pjsip.contacts().filter((contact) => contact.source.includes('via cluster member'));
      return elsewhere.length === 1 && own(elsewhere[0]!.uri) && (await status(b)).contacts.known_elsewhere === 1;
    });
  }
  const relayedIdle = async (): Promise<void> =>
    until('no relayed dialog left on either member', async () => {
      const [onA, onB] = [(await status(a)).relayed_dialogs, (await status(b)).relayed_dialogs];
      return onA.lent === 0 && onB.through_others === 0;
    }, 20_000);

  before(async () => {
    dir = dialplanDir('patchbay-cluster-tcp-relay-', DIALPLAN);
    nats = await startNatsServer();
    a = await startTestServer(settings('nodeA', '02:00:00:00:2a:01'));
    b = await startTestServer(settings('nodeB', '02:00:00:00:2b:01'));
    nc = await connect({ servers: nats.url });
    events = await b.events('app=relay-app');
    await until('the members know each other', async () => (await status(a)).members.length === 2 && (await status(b)).members.length === 2);
    await registerPhone();
  });

  after(async () => {
    phone?.close();
    await events?.close();
    await nc?.close();
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('originates PJSIP/alice on B over A\'s connection: the phone sees A, RTP flows with B both ways, BYE from B', async () => {
    const aPort = a.core.pjsip.port;
    const created = await b.ari('/channels?endpoint=PJSIP/alice&extension=echo&context=phones&channelId=relay-1', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    const invite = await phone.nextMessage(/^INVITE /);
    // One peer on the connection: A's address in Via, Contact and From — never B's SIP port.
    assert.match(sipHeader(invite, '(?:via|v)') ?? '', new RegExp(`^SIP/2\\.0/TCP 127\\.0\\.0\\.1:${aPort};`));
    assert.match(sipHeader(invite, '(?:contact|m)') ?? '', new RegExp(`<sip:alice@127\\.0\\.0\\.1:${aPort};transport=tcp>`));
    assert.doesNotMatch(invite, new RegExp(`:${b.core.pjsip.port}\\b`));
    await until('the call is up on B', async () => (await channel(b, 'relay-1'))?.state === 'Up');
    assert.equal((await channel(a, 'relay-1'))?.id, 'relay-1', 'B\'s channel is listed through A too (forwarded)');
    assert.equal(a.core.channels.size, 0, 'A holds no channel: it only lent its connection');
    const lent = await status(a);
    assert.equal(lent.relayed_dialogs.lent, 1);
    assert.equal((await status(b)).relayed_dialogs.through_others, 1);
    // RTP between the phone and B: B receives the phone's tone and its Echo sends it back.
    const heardFrom = phone.received.length;
    await until('the phone hears B\'s echo', () => phone.received.length - heardFrom >= 25, 15_000);
    const statistics = (await (await b.ari('/channels/relay-1/rtp_statistics')).json()) as Json;
    assert.ok(statistics.rxcount > 0 && statistics.txcount > 0, JSON.stringify(statistics));
    assert.equal((await b.ari('/channels/relay-1', { method: 'DELETE' })).status, 204);
    const bye = await phone.nextMessage(/^BYE /);
    assert.match(sipHeader(bye, '(?:via|v)') ?? '', new RegExp(`^SIP/2\\.0/TCP 127\\.0\\.0\\.1:${aPort};`));
    await relayedIdle();
  });

  it("Dial(PJSIP/alice) in B's dialplan reaches the phone over A's connection; the phone hangs up (BYE through A to B)", async () => {
    const created = await b.ari('/channels?endpoint=Local/call-alice@phones&app=relay-app&channelId=dial-1', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    const invite = await phone.nextMessage(/^INVITE /);
    const callId = sipHeader(invite, '(?:call-id|i)') ?? '';
    await nextEvent('StasisStart', 'dial-1');
    let dialled: Json | undefined;
    await until('the dialled leg is up on B', async () => {
      const channels = (await (await b.ari('/channels')).json()) as Json[];
      dialled = channels.find((entry) => String(entry.name).startsWith('PJSIP/alice-') && entry.state === 'Up');
      return dialled !== undefined;
    });
    const answer = await phone.bye(callId);
    assert.match(answer, /^SIP\/2\.0 200/, 'B answered the BYE over A\'s connection');
    await until('the dialled leg is gone on B', async () => (await channel(b, dialled!.id)) === undefined);
    await nextEvent('StasisEnd', 'dial-1');
    await relayedIdle();
  });

  it("sendMessage to pjsip:alice on B reaches the phone as a SIP MESSAGE over A's connection", async () => {
    const sent = await b.ari(`/endpoints/sendMessage?to=pjsip:alice&from=${encodeURIComponent('sip:app@patchbay')}&body=hi%20alice`, { method: 'PUT' });
    assert.equal(sent.status, 202, await sent.clone().text());
    const message = await phone.nextMessage(/^MESSAGE /);
    assert.match(sipHeader(message, '(?:via|v)') ?? '', new RegExp(`^SIP/2\\.0/TCP 127\\.0\\.0\\.1:${a.core.pjsip.port};`));
    assert.match(message, /\r\n\r\nhi alice$/);
    await relayedIdle();
  });

  it('a call hung up on B while the phone rings: the CANCEL reaches the phone through A, and the 487 is ACKed', async () => {
    phone.answer = false;
    try {
      const created = await b.ari('/channels?endpoint=PJSIP/alice&app=relay-app&channelId=relay-ring', { method: 'POST' });
      assert.equal(created.status, 200, await created.clone().text());
      const invite = await phone.nextMessage(/^INVITE /);
      await until('B hears the ringing', async () => (await channel(b, 'relay-ring'))?.state === 'Ringing');
      assert.equal((await b.ari('/channels/relay-ring', { method: 'DELETE' })).status, 204);
      const cancel = await phone.nextMessage(/^CANCEL /);
      assert.equal(sipHeader(cancel, '(?:call-id|i)'), sipHeader(invite, '(?:call-id|i)'));
      const ack = await phone.nextMessage(/^ACK /);
      assert.match(ack, /^CSeq:\s*\d+ ACK/im);
      await relayedIdle();
    } finally {
      phone.answer = true;
    }
  });

  it("the phone's connection closing mid-call ends B's call as a transport failure; a new call to the stale contact fails as unreachable", async () => {
    const created = await b.ari('/channels?endpoint=PJSIP/alice&app=relay-app&channelId=relay-close', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    await phone.nextMessage(/^INVITE /);
    await nextEvent('StasisStart', 'relay-close');
    phone.closeConnection();
    const destroyed = await nextEvent('ChannelDestroyed', 'relay-close');
    assert.equal(destroyed.cause, 27, JSON.stringify(destroyed));
    await relayedIdle();
    // The binding lives on (its expiry) but A has no connection for it: B's call fails as a
    // single server's call over a connection that cannot be made (cause 27), never a new connection.
    const again = await b.ari('/channels?endpoint=PJSIP/alice&app=relay-app&channelId=relay-stale', { method: 'POST' });
    assert.equal(again.status, 200, await again.clone().text());
    const failed = await nextEvent('ChannelDestroyed', 'relay-stale');
    assert.equal(failed.cause, 27, JSON.stringify(failed));
    await relayedIdle();
    phone.close();
    await registerPhone();
  });

  it('cluster.max_relayed_dialogs bounds the calls B runs through other members: past it the call is refused as unreachable', async () => {
    const ids = ['relay-cap-1', 'relay-cap-2'];
    for (const id of ids) {
      const created = await b.ari(`/channels?endpoint=PJSIP/alice&app=relay-app&channelId=${id}`, { method: 'POST' });
      assert.equal(created.status, 200, await created.clone().text());
      await phone.nextMessage(/^INVITE /);
      await nextEvent('StasisStart', id);
    }
    assert.equal((await status(b)).relayed_dialogs.through_others, MAX_RELAYED);
    const refused = await b.ari('/channels?endpoint=PJSIP/alice&app=relay-app&channelId=relay-cap-3', { method: 'POST' });
    assert.notEqual(refused.status, 200);
    assert.match(await refused.text(), /registered over TCP through cluster member nodeA, which cannot be reached from here: too many calls through other members/);
    for (const id of ids) {
      assert.equal((await b.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
      await phone.nextMessage(/^BYE /);
    }
    await relayedIdle();
  });

  it('hostile flow messages are refused: not JSON, a non-member, malformed SIP, an oversized message, a contact without a connection, past the bound', async () => {
    const ask = async (subject: string, payload: string | Uint8Array): Promise<Json> => JSON.parse(Buffer.from((await nc.request(subject, typeof payload === 'string' ? Buffer.from(payload) : payload, { timeout: 5000 })).data).toString()) as Json;
    const subject = 'pb.patchbay.node.nodeA.sipflow';
    assert.equal((await ask(subject, 'not json')).status, 400);
    const sip = Buffer.from('OPTIONS sip:alice@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5;branch=z9hG4bKx\r\nFrom: <sip:x@y>;tag=1\r\nTo: <sip:alice@127.0.0.1>\r\nCall-ID: hostile-1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n').toString('base64');
    const send = (fields: Json): string => JSON.stringify({ op: 'send', from: 'nodeB', flow: 'f1', contact: 'sip:alice@127.0.0.1:5;transport=tcp', data: sip, ...fields });
    assert.equal((await ask(subject, send({ from: 'intruder' }))).status, 403);
    assert.equal((await ask(subject, send({ data: Buffer.from('garbage').toString('base64') }))).status, 400);
    assert.equal((await ask(subject, send({ data: Buffer.alloc(70_000, 65).toString('base64') }))).status, 400);
    assert.equal((await ask(subject, send({ data: '!!not base64!!' }))).status, 400);
    assert.equal((await ask(subject, send({ flow: 'a.b' }))).status, 400);
    const unknown = await ask(subject, send({}));
    assert.equal(unknown.status, 404, JSON.stringify(unknown));
    // A's own bound per member: as B, flows to the phone's real contact; past MAX_RELAYED, 503.
    const contact = `sip:alice@127.0.0.1:${phone.localPort};transport=tcp`;
    const options = (callId: string): string => Buffer.from(`OPTIONS ${contact} SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:${a.core.pjsip.port};branch=z9hG4bK${callId}\r\nFrom: <sip:b@127.0.0.1>;tag=1\r\nTo: <${contact}>\r\nCall-ID: ${callId}\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`).toString('base64');
    for (let n = 1; n <= MAX_RELAYED; n++) assert.equal((await ask(subject, send({ flow: `cap${n}`, contact, data: options(`cap-${n}`) }))).status, 200);
    const over = await ask(subject, send({ flow: 'cap-over', contact, data: options('cap-over') }));
    assert.equal(over.status, 503, JSON.stringify(over));
    assert.equal((await ask(subject, send({ flow: 'cap1', contact, data: options('cap-other') }))).status, 400, 'one flow, one dialog');
    assert.equal((await status(a)).relayed_dialogs.lent, MAX_RELAYED);
    for (let n = 1; n <= MAX_RELAYED; n++) nc.publish(subject, Buffer.from(JSON.stringify({ op: 'release', from: 'nodeB', flow: `cap${n}` })));
    await until('A forgets the released flows', async () => (await status(a)).relayed_dialogs.lent === 0);
    // Deliveries and closes from anyone but a flow's holder, or for no flow, are dropped on B.
    nc.publish('pb.patchbay.node.nodeB.sipflow', Buffer.from(JSON.stringify({ op: 'deliver', from: 'nodeA', flow: 'nope', data: sip, address: '127.0.0.1', port: 5 })));
    nc.publish('pb.patchbay.node.nodeB.sipflow', Buffer.from(JSON.stringify({ op: 'closed', from: 'intruder', flow: 'nope' })));
    // And the relay still works afterwards.
    const created = await b.ari('/channels?endpoint=PJSIP/alice&app=relay-app&channelId=relay-after', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    await phone.nextMessage(/^INVITE /);
    await nextEvent('StasisStart', 'relay-after');
    assert.equal((await b.ari('/channels/relay-after', { method: 'DELETE' })).status, 204);
    await phone.nextMessage(/^BYE /);
    await relayedIdle();
  });

  it('A stopping (leaving the cluster) ends the calls B runs over its connections', async () => {
    const created = await b.ari('/channels?endpoint=PJSIP/alice&app=relay-app&channelId=relay-leave', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    await phone.nextMessage(/^INVITE /);
    await nextEvent('StasisStart', 'relay-leave');
    await a.stop();
    const destroyed = await nextEvent('ChannelDestroyed', 'relay-leave', 30_000);
    assert.equal(destroyed.cause, 27, JSON.stringify(destroyed));
    assert.equal((await status(b)).relayed_dialogs.through_others, 0);
  });
});
