// REFER both ways. On a call in Stasis, a phone's REFER (blind, then attended with Replaces) is
// accepted with 202, raises ChannelTransfer (destination, the requesting channel, its bridge), and
// POST /channels/{id}/transfer_progress sends the sipfrag NOTIFYs ("100 Trying" held back until the
// first, as Asterisk 22's ari-only handling: captured) and raises ChannelTransfer with the state. Out of a call, POST /endpoints/refer and
// /endpoints/PJSIP/{id}/refer send a REFER to the endpoint's contact (Refer-To, display name,
// extra headers, to_self), and the far end's NOTIFYs are answered 200; errors are ARI's.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** A UDP phone of a few lines: records what it receives, answers requests 200 unless told otherwise. */
class Phone {
  readonly socket = dgram.createSocket('udp4');
  readonly messages: string[] = [];
  readonly callId = `refer-${Math.random().toString(36).slice(2)}`;
  readonly tag = `p${Math.random().toString(36).slice(2)}`;
  remoteTag = '';
  remoteContact = '';
  #cseq = 1;
  /** Status answered to requests by method (default 200). */
  readonly answers = new Map<string, number>();

  constructor(readonly user: string) {}

  async open(): Promise<this> {
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    this.socket.on('message', (data, remote) => {
      const text = data.toString('latin1');
      this.messages.push(text);
      if (!text.startsWith('SIP/2.0') && !text.startsWith('ACK')) {
        const method = text.split(' ')[0]!;
        const status = this.answers.get(method) ?? 200;
        const keep = text.split('\r\n').filter((line) => /^(via|from|to|call-id|cseq):/i.test(line));
        const withTag = keep.map((line) => (/^to:/i.test(line) && !/;tag=/i.test(line) ? `${line};tag=phone` : line));
        this.socket.send(`SIP/2.0 ${status} Whatever\r\n${withTag.join('\r\n')}\r\nContent-Length: 0\r\n\r\n`, remote.port, remote.address);
      }
    });
    return this;
  }

  get port(): number {
    return this.socket.address().port;
  }

  close(): void {
    this.socket.close();
  }

  async next(firstLine: RegExp, timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.messages.findIndex((message) => firstLine.test(message.split('\r\n')[0]!));
      if (index >= 0) return this.messages.splice(index, 1)[0]!;
      if (Date.now() > deadline) throw new Error(`no ${firstLine} (got ${this.messages.map((m) => m.split('\r\n')[0]).join(' | ')})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  send(text: string, serverPort: number): void {
    this.socket.send(text, serverPort, '127.0.0.1');
  }

  #headers(method: string, cseq: number, serverPort: number): string {
    return [
      `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK${Math.random().toString(36).slice(2)};rport`,
      'Max-Forwards: 70',
      `From: <sip:${this.user}@127.0.0.1:${this.port}>;tag=${this.tag}`,
      `To: <sip:100@127.0.0.1:${serverPort}>${this.remoteTag ? `;tag=${this.remoteTag}` : ''}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:${this.user}@127.0.0.1:${this.port}>`,
    ].join('\r\n');
  }

  /** INVITE extension 100. */
  invite(serverPort: number): void {
    const sdp = ['v=0', 'o=phone 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
    this.send(`INVITE sip:100@127.0.0.1:${serverPort} SIP/2.0\r\n${this.#headers('INVITE', 1, serverPort)}\r\nContent-Type: application/sdp\r\nContent-Length: ${sdp.length}\r\n\r\n${sdp}`, serverPort);
  }

  /** Waits for the 200 to the INVITE and ACKs it. */
  async acked(serverPort: number): Promise<void> {
    const ok = await this.next(/^SIP\/2\.0 200/, 10_000);
    this.messages.length = 0;
    this.remoteTag = /^(?:to|t):.*;tag=([^;\s]+)/im.exec(ok)?.[1] ?? '';
    this.remoteContact = /^(?:contact|m):.*<([^>]+)>/im.exec(ok)?.[1] ?? `sip:100@127.0.0.1:${serverPort}`;
    this.send(`ACK ${this.remoteContact} SIP/2.0\r\n${this.#headers('ACK', 1, serverPort)}\r\nContent-Length: 0\r\n\r\n`, serverPort);
  }

  /** A REFER in the call's dialog; resolves with the final response. */
  async refer(serverPort: number, referTo: string, extra: string[] = []): Promise<string> {
    const cseq = ++this.#cseq;
    this.send(`REFER ${this.remoteContact} SIP/2.0\r\n${this.#headers('REFER', cseq, serverPort)}\r\nRefer-To: ${referTo}\r\n${extra.map((line) => `${line}\r\n`).join('')}Content-Length: 0\r\n\r\n`, serverPort);
    return this.next(new RegExp(`^SIP/2\\.0 \\d{3}`), 5000).then((response) => {
      assert.match(response, new RegExp(`^CSeq:\\s*${cseq} REFER`, 'mi'));
      return response;
    });
  }
}

describe('REFER', () => {
  let server: TestServer;
  let events: EventSocket;
  let work: string;
  const bob = new Phone('bob');
  const carol = new Phone('carol');

  before(async () => {
    await bob.open();
    await carol.open();
    work = mkdtempSync(join(tmpdir(), 'patchbay-refer-'));
    writeFileSync(join(work, 'extensions.conf'), '[in]\nexten => 100,1,Stasis(xfer)\n');
    server = await startTestServer({
      dialplan: { file: join(work, 'extensions.conf') },
      config_objects: {
        res_pjsip: {
          endpoint: {
            bob: { context: 'in', allow: 'ulaw', aors: 'bob' },
            carol: { context: 'in', allow: 'ulaw', aors: 'carol' },
            dave: { context: 'in', allow: 'ulaw', aors: 'dave' },
          },
          aor: { bob: { contact: `sip:bob@127.0.0.1:${bob.port}` }, carol: { contact: `sip:carol@127.0.0.1:${carol.port}` }, dave: {} },
        },
      },
    } as never);
    events = await server.events('app=xfer');
  });

  after(async () => {
    await events.close();
    await server.stop();
    bob.close();
    carol.close();
    rmSync(work, { recursive: true, force: true });
  });

  const post = (path: string, body?: unknown) =>
    server.ari(path, { method: 'POST', ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });

  async function event(type: string): Promise<Json> {
    return (await events.nextOfType(type, 5000)) as Json;
  }

  test('a blind transfer on a call in Stasis: 202, ChannelTransfer, no NOTIFY yet; transfer_progress → NOTIFY 100 then 200, and the state', async () => {
    const port = server.core.pjsip.port;
    bob.invite(port);
    const start = await event('StasisStart');
    const channelId = start.channel.id as string;
    assert.equal((await post(`/channels/${channelId}/answer`)).status, 204);
    await bob.acked(port);
    const bridge = (await (await post('/bridges?type=mixing')).json()) as Json;
    assert.equal((await post(`/bridges/${bridge.id}/addChannel?channel=${channelId}`)).status, 204);
    // From a bridge, Asterisk's default handling would carry the blind transfer out itself (stasis-refer.test.ts).
    assert.equal((await post(`/channels/${channelId}/variable?variable=${encodeURIComponent('PJSIP_TRANSFER_HANDLING()')}&value=ari-only`)).status, 204);

    const response = await bob.refer(port, '<sip:200@127.0.0.1>', ['Referred-By: <sip:bob@127.0.0.1>']);
    assert.match(response, /^SIP\/2\.0 202/);

    const transfer = await event('ChannelTransfer');
    assert.equal(transfer.state, undefined, 'no state in the first event');
    assert.equal(transfer.refer_to.requested_destination.destination, '200');
    assert.equal(transfer.refer_to.requested_destination.protocol_id, undefined);
    assert.equal(transfer.referred_by.source_channel.id, channelId);
    assert.equal(transfer.referred_by.bridge.id, bridge.id);

    // Errors first: a bad state, an unknown channel.
    assert.equal((await post(`/channels/${channelId}/transfer_progress?states=bogus`)).status, 400);
    assert.equal((await post('/channels/nope/transfer_progress?states=channel_answered')).status, 404);

    // Nothing reaches the phone until the application reports (Asterisk sends no NOTIFY before).
    assert.equal(bob.messages.filter((m) => m.startsWith('NOTIFY')).length, 0);
    assert.equal((await post(`/channels/${channelId}/transfer_progress?states=channel_answered`)).status, 204);
    const trying = await bob.next(/^NOTIFY /);
    assert.match(trying, /^Event:\s*refer/im);
    assert.match(trying, /^Subscription-State:\s*active;expires=(59\d|600)\r?$/im);
    assert.match(trying, /^Content-Type:\s*message\/sipfrag/im);
    assert.match(trying, /\r\n\r\nSIP\/2\.0 100 Trying/);
    assert.match(trying, new RegExp(`^Call-ID:\\s*${bob.callId}`, 'im'));
    const done = await bob.next(/^NOTIFY /);
    assert.match(done, /^Subscription-State:\s*terminated/im);
    assert.match(done, /\r\n\r\nSIP\/2\.0 200 OK/);
    const answered = await event('ChannelTransfer');
    assert.equal(answered.state, 'channel_answered');
    assert.equal(answered.refer_to.requested_destination.destination, '200');

    // The transfer is over: further progress sends nothing.
    assert.equal((await post(`/channels/${channelId}/transfer_progress?states=channel_declined`)).status, 204);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(bob.messages.filter((m) => m.startsWith('NOTIFY')).length, 0);

    // An attended transfer: Replaces gives the protocol id and the tags.
    const attended = await bob.refer(port, '<sip:300@127.0.0.1?Replaces=abc%40host%3Bto-tag%3D11%3Bfrom-tag%3D22>');
    assert.match(attended, /^SIP\/2\.0 202/);
    const second = await event('ChannelTransfer');
    assert.equal(second.refer_to.requested_destination.destination, '300');
    assert.equal(second.refer_to.requested_destination.protocol_id, 'abc@host');
    assert.deepEqual(second.refer_to.requested_destination.additional_protocol_params, [
      { parameter_name: 'from', parameter_value: '22' },
      { parameter_name: 'to', parameter_value: '11' },
    ]);
    // A second REFER while one is pending: 491.
    assert.match(await bob.refer(port, '<sip:400@127.0.0.1>'), /^SIP\/2\.0 491/);
    // Progress first: "100 Trying", active.
    assert.equal((await post(`/channels/${channelId}/transfer_progress?states=channel_progress`)).status, 204);
    assert.match(await bob.next(/^NOTIFY /), /\r\n\r\nSIP\/2\.0 100 Trying/);
    assert.equal((await event('ChannelTransfer')).state, 'channel_progress');
    // unavailable is reported as channel_declined (as Asterisk renders it), sipfrag 503.
    assert.equal((await post(`/channels/${channelId}/transfer_progress?states=channel_unavailable`)).status, 204);
    assert.match(await bob.next(/^NOTIFY /), /SIP\/2\.0 503 Service Unavailable/);
    assert.equal((await event('ChannelTransfer')).state, 'channel_declined');
    // A REFER without Refer-To: 400.
    assert.match(await bob.refer(port, ''), /^SIP\/2\.0 400/);

    assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
    await bob.next(/^BYE /);
    await server.ari(`/bridges/${bridge.id}`, { method: 'DELETE' });
  });

  test('POST /endpoints/refer sends a REFER to the endpoint with Refer-To, display name and headers; its NOTIFY gets 200', async () => {
    bob.messages.length = 0;
    const response = await post('/endpoints/refer?to=pjsip:bob&from=sip:operator@pbx&refer_to=sip:300@example.com', { variables: { display_name: 'Front Desk', 'X-Case': '42', Via: 'blocked' } });
    assert.equal(response.status, 202);
    const refer = await bob.next(/^REFER /);
    assert.match(refer, new RegExp(`^REFER sip:bob@127\\.0\\.0\\.1:${bob.port} SIP/2\\.0`));
    assert.match(refer, /^Refer-To:\s*"Front Desk" <sip:300@example\.com>/im);
    assert.match(refer, /^X-Case:\s*42/im);
    assert.match(refer, /^From:\s*<sip:operator@/im);
    assert.equal((refer.match(/^Via:/gim) ?? []).length, 1, 'a variable cannot add a Via');
    assert.match(refer, /^Contact:/im);

    // The far end's NOTIFY in the REFER's subscription: 200, not 481.
    const callId = /^Call-ID:\s*(\S+)/im.exec(refer)![1];
    const fromTag = /^From:.*;tag=([^;\s]+)/im.exec(refer)![1];
    const port = server.core.pjsip.port;
    const notify = [
      `NOTIFY sip:operator@127.0.0.1:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${bob.port};branch=z9hG4bKn${Date.now()};rport`,
      'Max-Forwards: 70',
      `From: <sip:bob@127.0.0.1>;tag=phone`,
      `To: <sip:operator@pbx>;tag=${fromTag}`,
      `Call-ID: ${callId}`,
      'CSeq: 1 NOTIFY',
      'Event: refer',
      'Subscription-State: terminated;reason=noresource',
      'Content-Type: message/sipfrag;version=2.0',
      'Content-Length: 16',
      '',
      'SIP/2.0 200 OK\r\n',
    ].join('\r\n');
    bob.send(notify, port);
    assert.match(await bob.next(/^SIP\/2\.0 \d+/), /^SIP\/2\.0 200/);
    // Terminated: the next NOTIFY of that Call-ID is unknown.
    bob.send(notify.replace(/branch=z9hG4bKn\d+/, 'branch=z9hG4bKagain'), port);
    assert.match(await bob.next(/^SIP\/2\.0 \d+/), /^SIP\/2\.0 481/);
  });

  test('referToEndpoint with to_self points at this server; errors: unknown endpoint 404, bad refer_to 400, empty to 400', async () => {
    const response = await post('/endpoints/PJSIP/carol/refer?from=pbx&refer_to=pjsip:bob&to_self=true');
    assert.equal(response.status, 202);
    const refer = await carol.next(/^REFER /);
    assert.match(refer, new RegExp(`^Refer-To:\\s*<sip:bob@127\\.0\\.0\\.1:${server.core.pjsip.port}>`, 'im'));

    // Without to_self: bob's contact.
    assert.equal((await post('/endpoints/PJSIP/carol/refer?from=pbx&refer_to=bob')).status, 202);
    assert.match(await carol.next(/^REFER /), new RegExp(`^Refer-To:\\s*<sip:bob@127\\.0\\.0\\.1:${bob.port}>`, 'im'));

    assert.equal((await post('/endpoints/PJSIP/nobody/refer?from=pbx&refer_to=sip:1@x')).status, 404);
    assert.equal((await post('/endpoints/refer?to=pjsip:nobody&from=pbx&refer_to=sip:1@x')).status, 404);
    assert.equal((await post('/endpoints/refer?to=nosuchtech:x&from=pbx&refer_to=sip:1@x')).status, 404);
    const bad = await post('/endpoints/refer?to=pjsip:bob&from=pbx&refer_to=not-a-thing');
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as Json).message, /refer_to/);
    assert.equal((await post('/endpoints/refer?to=&from=pbx&refer_to=sip:1@x')).status, 400);
    assert.equal((await post('/endpoints/refer?to=pjsip:bob&from=pbx&refer_to=sip:1@x', { variables: { X: 5 } })).status, 400);
    // dave has no contact: accepted (202, as Asterisk), nothing sent.
    assert.equal((await post('/endpoints/refer?to=pjsip:dave&from=pbx&refer_to=sip:1@x')).status, 202);
  });
});
