// SIP over WebSocket (RFC 7118) on the HTTP server's /ws, as browsers use it: the `sip`
// subprotocol is required, a REGISTER binds the contact to its connection, calls to the endpoint
// arrive over that connection, and the contact goes when the connection closes. Bounds: message
// size and connections per source.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitUntil } from '../../sip/helpers.ts';

let dir: string;
let server: TestServer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-sip-ws-'));
  const conf = join(dir, 'pjsip.conf');
  writeFileSync(
    conf,
    [
      '[udp]', 'type=transport', 'protocol=udp', 'bind=127.0.0.1:0', '',
      '[ws]', 'type=transport', 'protocol=ws', '',
      '[browser]', 'type=endpoint', 'context=default', 'allow=ulaw', 'aors=browser', '',
      '[browser]', 'type=aor', 'max_contacts=5', '',
    ].join('\n'),
  );
  server = await startTestServer({ sip: { pjsip_conf: conf, tcp: { max_connections_per_source: 3 } } });
});

after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A browser-like client: one WebSocket, SIP messages as text frames, collected as they arrive. */
class WsPhone {
  readonly received: string[] = [];
  readonly host = `${Math.random().toString(36).slice(2, 10)}.invalid`;
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.received.push(data.toString()));
  }

  static async open(url: string, protocol: string | null = 'sip'): Promise<WsPhone> {
    const socket = new WebSocket(url, protocol === null ? [] : [protocol]);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    });
    return new WsPhone(socket);
  }

  send(text: string): void {
    this.socket.send(text);
  }

  async next(predicate: (message: string) => boolean, what: string): Promise<string> {
    await waitUntil(() => this.received.some(predicate), 20_000, what);
    const index = this.received.findIndex(predicate);
    return this.received.splice(index, 1)[0]!;
  }

  register(callId: string, cseq = 1, expires = 600): void {
    this.send(
      `REGISTER sip:127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/WS ${this.host};branch=z9hG4bK-${callId}-${cseq}\r\nMax-Forwards: 70\r\n` +
        `From: <sip:browser@127.0.0.1>;tag=reg${cseq}\r\nTo: <sip:browser@127.0.0.1>\r\nCall-ID: ${callId}\r\nCSeq: ${cseq} REGISTER\r\n` +
        `Contact: <sip:u7x@${this.host};transport=ws>;expires=${expires}\r\nUser-Agent: ws-test\r\nContent-Length: 0\r\n\r\n`,
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}

const wsUrl = (): string => `${server.url.replace('http', 'ws')}/ws`;
const browserContacts = () => server.core.pjsip.contacts().filter((contact) => contact.aor === 'browser');

test('an upgrade without the sip subprotocol is refused, and /ws without an upgrade answers 426', async () => {
  await assert.rejects(WsPhone.open(wsUrl(), null), /HTTP 400/);
  await assert.rejects(WsPhone.open(wsUrl(), 'chat'), /HTTP 400/);
  const plain = await fetch(`${server.url}/ws`);
  assert.equal(plain.status, 426);
});

test('REGISTER over the WebSocket binds the contact to the connection; a call reaches it there; closing drops it', async () => {
  const phone = await WsPhone.open(wsUrl());
  phone.register('ws-reg-1');
  const ok = await phone.next((m) => m.startsWith('SIP/2.0 200'), '200 to REGISTER');
  assert.match(ok, /^Via: SIP\/2\.0\/WS [a-z0-9]+\.invalid;.*received=127\.0\.0\.1/m);
  assert.match(ok, /^Contact: <sip:u7x@[a-z0-9]+\.invalid;transport=ws>;expires=600/m);
  await waitUntil(() => browserContacts().length === 1, 10_000, 'the contact');
  assert.match(browserContacts()[0]!.source, /^ws 127\.0\.0\.1:\d+$/);

  // An ARI originate to the endpoint: the INVITE comes over this WebSocket, not to the .invalid host.
  const created = await server.ari('/channels?endpoint=PJSIP/browser&app=ws-test', { method: 'POST' });
  assert.equal(created.status, 200);
  const channel = (await created.json()) as { id: string };
  const invite = await phone.next((m) => m.startsWith('INVITE '), 'the INVITE');
  assert.match(invite, /^INVITE sip:u7x@[a-z0-9]+\.invalid;transport=ws SIP\/2\.0/);
  assert.match(invite, /^Via: SIP\/2\.0\/WS /m);
  assert.match(invite, /^Contact: <sip:[^>]*;transport=ws>/m);
  // Busy here: the channel goes.
  const header = (name: string) => new RegExp(`^${name}: .*$`, 'mi').exec(invite)![0];
  phone.send(`SIP/2.0 486 Busy Here\r\n${invite.split('\r\n').filter((line) => /^Via:/i.test(line)).join('\r\n')}\r\n${header('From')}\r\n${header('To')};tag=busy\r\n${header('Call-ID')}\r\n${header('CSeq')}\r\nContent-Length: 0\r\n\r\n`);
  await phone.next((m) => m.startsWith('ACK '), 'the ACK of 486');
  await waitUntil(() => server.core.channels.get(channel.id) === undefined, 10_000, 'the channel to go');

  await phone.close();
  await waitUntil(() => browserContacts().length === 0, 10_000, 'the contact to go with its connection');
  // Nothing reaches the endpoint now.
  const refused = await server.ari('/channels?endpoint=PJSIP/browser&app=ws-test', { method: 'POST' });
  assert.notEqual(refused.status, 200);
});

test('a malformed message is answered 400 on the connection, which stays; an oversized one closes it', async () => {
  const phone = await WsPhone.open(wsUrl());
  phone.send(`OPTIONS sip:127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/WS ${phone.host};branch=z9hG4bK-bad\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:a@b>\r\nCall-ID: bad\r\nCSeq: x OPTIONS\r\n\r\n`);
  assert.match(await phone.next((m) => m.startsWith('SIP/2.0 '), 'an answer'), /^SIP\/2\.0 400/);
  phone.send(`OPTIONS sip:127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/WS ${phone.host};branch=z9hG4bK-good\r\nMax-Forwards: 70\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:a@b>\r\nCall-ID: good\r\nCSeq: 1 OPTIONS\r\n\r\n`);
  assert.match(await phone.next((m) => m.startsWith('SIP/2.0 '), 'an answer'), /^SIP\/2\.0 200/);
  const closed = new Promise<number>((resolve) => phone.socket.once('close', (code) => resolve(code)));
  phone.send('x'.repeat(70_000));
  assert.equal(await closed, 1009);
});

test('connections from one address are bounded', async () => {
  const phones = await Promise.all([1, 2, 3].map(() => WsPhone.open(wsUrl())));
  await assert.rejects(WsPhone.open(wsUrl()), /HTTP 503/);
  await Promise.all(phones.map((phone) => phone.close()));
  // Room again once they are gone.
  const again = await retry(() => WsPhone.open(wsUrl()));
  await again.close();
});

async function retry<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (tries > 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
