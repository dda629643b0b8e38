// Qualify: AORs with qualify_frequency > 0 get OPTIONS for each contact (static and registered);
// a peer that answers is Reachable with a measured round trip, one that stops answering becomes
// Unreachable after qualify_timeout, and the endpoint's state, ContactStatusChange and
// PeerStatusChange follow, as GET /ari/endpoints/PJSIP/<id> and the event stream show.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { SipRequest, createResponse } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { formatUri } from '../../../src/sip/uri.ts';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';

/** A UDP peer that answers OPTIONS with 200 while `answering`, and can REGISTER itself. */
class OptionsPeer {
  readonly socket = dgram.createSocket('udp4');
  port = 0;
  answering = true;
  readonly options: Array<{ at: number; request: SipRequest }> = [];
  readonly responses: string[] = [];

  async start(): Promise<this> {
    this.socket.on('message', (data, remote) => {
      const parsed = parseMessage(data);
      if (!parsed.ok) return;
      const message = parsed.message;
      if (!(message instanceof SipRequest)) {
        this.responses.push(data.toString());
        return;
      }
      if (message.method !== 'OPTIONS') return;
      this.options.push({ at: Date.now(), request: message });
      if (!this.answering) return;
      const response = createResponse(message, 200, 'OK', { toTag: 'peer' });
      this.socket.send(response.serialize(), remote.port, remote.address);
    });
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', () => resolve()));
    this.port = this.socket.address().port;
    return this;
  }

  register(user: string, serverPort: number): void {
    const text = [
      `REGISTER sip:127.0.0.1:${serverPort} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bKreg${Date.now()};rport`,
      'Max-Forwards: 70',
      `From: <sip:${user}@127.0.0.1>;tag=reg1`,
      `To: <sip:${user}@127.0.0.1>`,
      `Call-ID: reg-${user}-${this.port}`,
      'CSeq: 1 REGISTER',
      `Contact: <sip:${user}@127.0.0.1:${this.port}>`,
      'Expires: 60',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    this.socket.send(text, serverPort, '127.0.0.1');
  }

  close(): void {
    this.socket.close();
  }
}

describe('qualify: OPTIONS to the contacts of qualified AORs', () => {
  let server: TestServer;
  let trunkPeer: OptionsPeer;
  let phonePeer: OptionsPeer;
  let events: EventSocket;

  before(async () => {
    trunkPeer = await new OptionsPeer().start();
    phonePeer = await new OptionsPeer().start();
    server = await startTestServer({
      config_objects: {
        res_pjsip: {
          endpoint: {
            phone: { context: 'default', allow: 'ulaw', aors: 'phone' },
          },
          aor: {
            // qualify_timeout 2 s: an answer read late by a loaded event loop must not count as silence.
            phone: { max_contacts: 1, qualify_frequency: 1, qualify_timeout: 2 },
          },
        },
      },
    } as never);
    events = await server.events('app=qualify-watch');
    assert.equal((await server.ari('/applications/qualify-watch/subscription?eventSource=endpoint:PJSIP', { method: 'POST' })).status, 200);
  });

  after(async () => {
    await events.close();
    await server.stop();
    trunkPeer.close();
    phonePeer.close();
  });

  async function state(resource: string): Promise<string> {
    const response = await server.ari(`/endpoints/PJSIP/${resource}`);
    assert.equal(response.status, 200);
    return ((await response.json()) as { state: string }).state;
  }

  /** The next event of `type` for `resource`, skipping the rest. */
  async function next(type: string, resource: string, timeoutMs = 20_000): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = (await events.nextOfType(type, Math.max(1, deadline - Date.now()))) as Record<string, any>;
      if (event.endpoint?.resource === resource) return event;
    }
  }

  test('a static contact that answers is Reachable with a round trip; silent, it becomes Unreachable', async () => {
    // Created once the app listens, through dynamic configuration: qualifying starts with it.
    const put = async (type: string, id: string, record: Record<string, string>) => {
      const body = JSON.stringify({ fields: Object.entries(record).map(([attribute, value]) => ({ attribute, value })) });
      const response = await server.ari(`/asterisk/config/dynamic/res_pjsip/${type}/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
      assert.equal(response.status, 200, await response.text());
    };
    await put('aor', 'trunk', { contact: `sip:trunk@127.0.0.1:${trunkPeer.port}`, qualify_frequency: '1', qualify_timeout: '2' });
    await put('endpoint', 'trunk', { context: 'default', allow: 'ulaw', aors: 'trunk' });
    const reachable = await next('ContactStatusChange', 'trunk');
    assert.equal(reachable.contact_info.contact_status, 'Reachable');
    assert.equal(reachable.contact_info.aor, 'trunk');
    assert.equal(reachable.contact_info.uri, `sip:trunk@127.0.0.1:${trunkPeer.port}`);
    assert.ok(Number(reachable.contact_info.roundtrip_usec) > 0, `roundtrip_usec ${reachable.contact_info.roundtrip_usec}`);
    assert.equal((await next('PeerStatusChange', 'trunk')).peer.peer_status, 'Reachable');
    assert.equal(await state('trunk'), 'online');

    // The OPTIONS as the peer saw it: to the contact, our own From, a fresh Call-ID each time.
    const first = trunkPeer.options[0]!.request;
    assert.equal(formatUri(first.uri), `sip:trunk@127.0.0.1:${trunkPeer.port}`);
    assert.match(first.get('to') ?? '', new RegExp(`sip:trunk@127.0.0.1:${trunkPeer.port}`));
    assert.match(first.get('from') ?? '', /;tag=/);
    assert.equal(first.cseq()?.method, 'OPTIONS');

    // Probes repeat at about qualify_frequency (1 s, less up to 10 % of jitter).
    const before = trunkPeer.options.length;
    const waitedFrom = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2600));
    // A loaded machine may also delay the probes themselves: two are awaited, not assumed.
    for (const deadline = Date.now() + 20_000; trunkPeer.options.length - before < 2 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    const probes = trunkPeer.options.slice(before);
    // At most one per 0.9 s of the time that really passed (a loaded machine wakes this test late),
    // and one more that may have been on its way.
    const waited = Date.now() - waitedFrom;
    assert.ok(probes.length >= 2 && probes.length <= Math.ceil(waited / 900) + 1, `${probes.length} probes in ${waited} ms`);
    assert.equal(new Set(trunkPeer.options.map((o) => o.request.callId())).size, trunkPeer.options.length);

    trunkPeer.answering = false;
    const unreachable = await next('ContactStatusChange', 'trunk');
    assert.equal(unreachable.contact_info.contact_status, 'Unreachable');
    assert.equal((await next('PeerStatusChange', 'trunk')).peer.peer_status, 'Unreachable');
    assert.equal(await state('trunk'), 'offline');
    // An Unreachable contact is not dialled: the request fails at once.
    const refused = await server.ari('/channels?endpoint=PJSIP/trunk&app=qualify-watch', { method: 'POST' });
    assert.ok(refused.status >= 400, `status ${refused.status}`);

    // Answering again: Reachable again.
    trunkPeer.answering = true;
    assert.equal((await next('ContactStatusChange', 'trunk')).contact_info.contact_status, 'Reachable');
    assert.equal(await state('trunk'), 'online');
  });

  test('a registered contact is Unknown, then qualified; unanswered it takes the endpoint offline', async () => {
    assert.equal(await state('phone'), 'offline');
    phonePeer.register('phone', server.core.pjsip.port);
    const created = await next('ContactStatusChange', 'phone');
    assert.equal(created.contact_info.contact_status, 'Unknown');
    assert.equal(await state('phone'), 'online');
    const reachable = await next('ContactStatusChange', 'phone');
    assert.equal(reachable.contact_info.contact_status, 'Reachable');
    assert.equal(reachable.contact_info.uri, `sip:phone@127.0.0.1:${phonePeer.port}`);
    assert.ok(Number(reachable.contact_info.roundtrip_usec) > 0);
    assert.ok(phonePeer.responses.some((text) => text.startsWith('SIP/2.0 200')), 'the REGISTER was accepted');

    phonePeer.answering = false;
    assert.equal((await next('ContactStatusChange', 'phone')).contact_info.contact_status, 'Unreachable');
    assert.equal((await next('PeerStatusChange', 'phone')).peer.peer_status, 'Unreachable');
    assert.equal(await state('phone'), 'offline');
  });
});
