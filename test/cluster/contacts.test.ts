// SIP registrations cluster-wide: a raw UDP phone registers through member A; member B calls it
// (ARI originate of PJSIP/alice, and Dial(PJSIP/alice) in B's dialplan) by sending straight to the
// registered contact. Unregistering, and a registration's expiry, take the contact from B too; a
// contact registered over TCP through A is refused on B with an error naming A; hostile entries in
// the bucket are ignored. A real nats-server -js; both members in this process.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { contactKey } from '../../src/cluster/contacts.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { RawPhone } from '../interop/raw-phone.ts';
import { clusterStatus, dialplanDir, type Json, memberSettings, NO_NATS, until } from './cluster-fixture.ts';

const DIALPLAN = `[phones]
exten => park,1,Answer()
 same => n,Wait(60)
exten => call-alice,1,Dial(PJSIP/alice,20)
 same => n,Hangup()
`;

const skip = NO_NATS;

describe('SIP registrations across cluster members', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  let nc: NatsConnection;
  const phone = new RawPhone('alice');
  let registerSeq = 0;

  const settings = (node: string, serverId: string): Json => ({
    ...memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3 }),
    config_objects: {
      res_pjsip: {
        endpoint: {
          alice: { context: 'phones', allow: 'ulaw', aors: 'alice' },
          carol: { context: 'phones', allow: 'ulaw', aors: 'carol' },
        },
        aor: {
          alice: { max_contacts: 1, remove_existing: 'yes', minimum_expiration: 1 },
          carol: { max_contacts: 1 },
        },
      },
    },
  });
  const known = async (server: TestServer): Promise<number> => (await clusterStatus(server.url)).contacts.known_elsewhere;

  /** REGISTER alice's contact at A for `expires` seconds; resolves with the final status. */
  async function register(expires: number): Promise<number> {
    registerSeq++;
    const callId = 'reg-alice-cluster';
    const text = [
      `REGISTER sip:127.0.0.1:${a.core.pjsip.port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${phone.sipPort};branch=z9hG4bKreg${registerSeq}x${Date.now()};rport`,
      'Max-Forwards: 70',
      `From: <sip:alice@127.0.0.1>;tag=regtag`,
      `To: <sip:alice@127.0.0.1>`,
      `Call-ID: ${callId}`,
      `CSeq: ${registerSeq} REGISTER`,
      `Contact: <sip:alice@127.0.0.1:${phone.sipPort}>`,
      `Expires: ${expires}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    phone.sip.send(Buffer.from(text, 'latin1'), a.core.pjsip.port, '127.0.0.1');
    const answer = await phone.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 10_000, (m) => new RegExp(`^CSeq:\\s*${registerSeq} REGISTER`, 'im').test(m));
    return Number(answer.split(' ')[1]);
  }

  before(async () => {
    dir = dialplanDir('patchbay-cluster-contacts-', DIALPLAN);
    nats = await startNatsServer();
    await phone.open();
    a = await startTestServer(settings('nodeA', '02:00:00:00:1a:01'));
    b = await startTestServer(settings('nodeB', '02:00:00:00:1b:01'));
    nc = await connect({ servers: nats.url });
    // The phone answers requests to the member that calls it: B.
    phone.serverPort = b.core.pjsip.port;
  });

  after(async () => {
    phone.close();
    await nc?.close();
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('originates PJSIP/alice on B to the phone registered through A, straight to its UDP contact', async () => {
    assert.equal(await register(120), 200);
    await until('B knows the contact registered on A', async () => (await known(b)) === 1);
    assert.equal(await known(a), 0, 'a member does not count its own registrations as elsewhere');
    const created = await b.ari('/channels?endpoint=PJSIP/alice&extension=park&context=phones&channelId=to-alice', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    const invite = await phone.nextMessage(/^INVITE /, 15_000);
    // The INVITE came from B's SIP port, not A's.
    assert.match(invite, new RegExp(`^Via: SIP/2\\.0/UDP [^;]*:${b.core.pjsip.port}[;\\s]`, 'im'));
    await until('the call is up on B', async () => ((await (await b.ari('/channels/to-alice')).json()) as Json).state === 'Up');
    assert.equal((await b.ari('/channels/to-alice', { method: 'DELETE' })).status, 204);
    await phone.nextMessage(/^BYE /, 15_000);
  });

  it("Dial(PJSIP/alice) in B's dialplan reaches the phone registered through A", async () => {
    const created = await b.ari('/channels?endpoint=Local/call-alice@phones&extension=park&context=phones&channelId=dial-alice&otherChannelId=dial-alice-2', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    const invite = await phone.nextMessage(/^INVITE /, 15_000);
    assert.match(invite, new RegExp(`^Via: SIP/2\\.0/UDP [^;]*:${b.core.pjsip.port}[;\\s]`, 'im'));
    await until('the dialled leg is up on B', async () => {
      const channels = (await (await b.ari('/channels')).json()) as Json[];
      return channels.some((channel) => String(channel.name).startsWith('PJSIP/alice-') && channel.state === 'Up');
    });
    assert.equal((await b.ari('/channels/dial-alice', { method: 'DELETE' })).status, 204);
    await phone.nextMessage(/^BYE /, 15_000);
  });

  it('an unregistration on A withdraws the contact from B, and B answers that alice cannot be reached', async () => {
    assert.equal(await register(0), 200);
    await until('B forgets the contact', async () => (await known(b)) === 0);
    const refused = await b.ari('/channels?endpoint=PJSIP/alice&extension=park&context=phones&channelId=to-alice-2', { method: 'POST' });
    assert.notEqual(refused.status, 200);
    assert.match(await refused.text(), /No reachable contact/);
  });

  it("a registration's expiry takes its contact away on B as well", async () => {
    assert.equal(await register(2), 200);
    await until('B knows the short registration', async () => (await known(b)) === 1);
    await until('the registration expired everywhere', async () => (await known(b)) === 0, 15_000);
    const refused = await b.ari('/channels?endpoint=PJSIP/alice&extension=park&context=phones&channelId=to-alice-3', { method: 'POST' });
    assert.notEqual(refused.status, 200);
  });

  it('a contact registered over TCP through A is refused on B with an error naming A; hostile entries are ignored', async () => {
    const kv = await new Kvm(nc).open('pb_patchbay_contacts');
    const uri = 'sip:carol@127.0.0.1:5999;transport=tcp';
    // As A writes a TCP registration (its connection lives on A).
    await kv.put(contactKey('carol', 'nodeA', uri), JSON.stringify({ aor: 'carol', uri, holder: 'nodeA', transport: 'tcp', expiresAt: Date.now() + 60_000 }));
    // Hostile: not JSON, a value under another contact's key, a bad transport, a huge URI.
    await kv.put('x.y.z', 'not json');
    await kv.put(contactKey('carol', 'nodeA', 'sip:other@127.0.0.1'), JSON.stringify({ aor: 'carol', uri: 'sip:carol@127.0.0.1:5', holder: 'nodeA', transport: 'udp', expiresAt: Date.now() + 60_000 }));
    const bad = 'sip:carol@127.0.0.1:7';
    await kv.put(contactKey('carol', 'nodeA', bad), JSON.stringify({ aor: 'carol', uri: bad, holder: 'nodeA', transport: 'sctp', expiresAt: Date.now() + 60_000 }));
    const huge = `sip:${'c'.repeat(5000)}@127.0.0.1`;
    await kv.put(contactKey('carol', 'nodeA', huge), JSON.stringify({ aor: 'carol', uri: huge, holder: 'nodeA', transport: 'udp', expiresAt: Date.now() + 60_000 }));
    await until('B knows the TCP contact', async () => (await known(b)) === 1);
    const refused = await b.ari('/channels?endpoint=PJSIP/carol&extension=park&context=phones&channelId=to-carol', { method: 'POST' });
    assert.notEqual(refused.status, 200);
    assert.match(await refused.text(), /registered over TCP through cluster member nodeA only/);
    await kv.delete(contactKey('carol', 'nodeA', uri));
    await until('B forgets the TCP contact', async () => (await known(b)) === 0);
  });
});
