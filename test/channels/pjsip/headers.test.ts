// SIP headers in the dialplan and through ARI, against phones of our own (raw UDP, hand-written
// SIP): PJSIP_HEADER(read)/PJSIP_HEADERS on an inbound INVITE's headers, read by the dialplan and
// through ARI; headers on the INVITE the callee receives from PJSIP_HEADER(add) in a Dial b()
// pre-dial handler, from SIPAddHeader, and from ARI originate/create variables; the callee's 200 OK
// headers (PJSIP_RESPONSE_HEADER); and what is
// refused: CR/LF in values, bad names, headers the stack writes, more than 32 headers.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SessionHeaders } from '../../../src/channels/pjsip/headers.ts';
import { InvalidError } from '../../../src/core/errors.ts';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let work: string;
let server: TestServer;
let events: EventSocket;
let callee: Callee;

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `Name: value` lines of a SIP message's header block. */
function headerLines(message: string): string[] {
  return message.split('\r\n\r\n')[0].split('\r\n').slice(1);
}

/** Keeps the headers a response must copy from its request. */
function responseTo(request: string, status: string, toTag: string): string {
  const keep = headerLines(request)
    .filter((line) => /^(via|from|to|call-id|cseq):/i.test(line))
    .map((line) => (/^to:/i.test(line) && !/;tag=/.test(line) ? `${line};tag=${toTag}` : line));
  return `SIP/2.0 ${status}\r\n${keep.join('\r\n')}\r\nContent-Length: 0\r\n\r\n`;
}

/** The dialled party: records every INVITE and refuses it 486 Busy Here, or answers it. */
class Callee {
  readonly socket = dgram.createSocket('udp4');
  readonly invites: string[] = [];
  /** Answer 200 OK (with X-Reply headers) instead of 486. */
  answering = false;

  async open(): Promise<this> {
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    this.socket.on('message', (data, rinfo) => {
      const text = data.toString('latin1');
      const reply = (message: string): void => void this.socket.send(Buffer.from(message, 'latin1'), rinfo.port, rinfo.address);
      if (text.startsWith('BYE ')) return reply(responseTo(text, '200 OK', 'ans'));
      if (!text.startsWith('INVITE ')) return;
      this.invites.push(text);
      if (!this.answering) return reply(responseTo(text, '486 Busy Here', 'busy'));
      const sdp = ['v=0', 'o=bob 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40002 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
      const ok = responseTo(text, '200 OK', 'ans').replace(
        'Content-Length: 0\r\n\r\n',
        `Contact: <sip:bob@127.0.0.1:${this.port}>\r\nX-Reply: yes\r\nX-Reply: again\r\nContent-Type: application/sdp\r\nContent-Length: ${sdp.length}\r\n\r\n${sdp}`,
      );
      reply(ok);
    });
    return this;
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** The next INVITE whose Call-ID was not seen before. */
  async nextInvite(after: number): Promise<string> {
    return waitFor('an INVITE at the callee', () => (this.invites.length > after ? this.invites[after] : undefined));
  }
}

/** A phone that calls `exten` with extra header lines; ACKs the final response. */
class Phone {
  readonly socket = dgram.createSocket('udp4');
  readonly messages: string[] = [];
  readonly callId = `hdr-${Math.random().toString(36).slice(2)}`;
  #via = '';

  async open(): Promise<this> {
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    this.socket.on('message', (data) => {
      const text = data.toString('latin1');
      this.messages.push(text);
      if (/^SIP\/2\.0 [3-6]\d\d/.test(text)) {
        const to = headerLines(text).find((line) => /^to:/i.test(line)) ?? '';
        this.send(`ACK sip:x@127.0.0.1 SIP/2.0\r\n${this.#via}\r\nFrom: <sip:caller@127.0.0.1>;tag=ph\r\n${to}\r\nCall-ID: ${this.callId}\r\nCSeq: 1 ACK\r\nContent-Length: 0\r\n\r\n`);
      }
    });
    return this;
  }

  send(text: string): void {
    this.socket.send(Buffer.from(text, 'latin1'), server.core.pjsip.port, '127.0.0.1');
  }

  call(exten: string, extra: string[]): void {
    const port = this.socket.address().port;
    this.#via = `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${Math.random().toString(36).slice(2)};rport`;
    const sdp = ['v=0', 'o=phone 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
    this.send(
      [
        `INVITE sip:${exten}@127.0.0.1:${server.core.pjsip.port} SIP/2.0`,
        this.#via,
        'Max-Forwards: 70',
        `From: <sip:caller@127.0.0.1:${port}>;tag=ph`,
        `To: <sip:${exten}@127.0.0.1:${server.core.pjsip.port}>`,
        `Call-ID: ${this.callId}`,
        'CSeq: 1 INVITE',
        `Contact: <sip:caller@127.0.0.1:${port}>`,
        ...extra,
        'Content-Type: application/sdp',
        `Content-Length: ${sdp.length}`,
        '',
        sdp,
      ].join('\r\n'),
    );
  }

  async finalResponse(): Promise<string> {
    return waitFor('a final response', () => this.messages.find((m) => /^SIP\/2\.0 [2-6]\d\d/.test(m)), 10_000);
  }

  close(): void {
    this.socket.close();
  }
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'patchbay-sip-headers-'));
  callee = await new Callee().open();
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(
    dialplanFile,
    [
      '[headers-in]',
      'exten => 100,1,Set(CUSTOMER=${PJSIP_HEADER(read,X-Customer)})',
      ' same => n,Set(SECOND=${PJSIP_HEADER(read,X-Customer,2)})',
      ' same => n,Set(ANYX=${PJSIP_HEADER(read,X-*,3)})',
      ' same => n,Set(XNAMES=${PJSIP_HEADERS(X-)})',
      ' same => n,Set(CALLID=${CHANNEL(pjsip,call-id)})',
      ' same => n,Set(MISSING=${PJSIP_HEADER(read,X-Nothing)})',
      ' same => n,Stasis(hdr-app)',
      'exten => 200,1,SIPAddHeader(X-Account: 7, with a comma)',
      ' same => n,SIPAddHeader(X-Dropped: 1)',
      ' same => n,SIPRemoveHeader(X-Dropped:)',
      ' same => n,SIPAddHeader(Bad Name: 1)',
      ' same => n,Dial(PJSIP/bob,5,b(add-headers^s^1(abc^def)))',
      // Busy callee → busy caller (486), anything else → 21 (403): shows what Dial saw.
      ' same => n,Hangup(${IF($["${DIALSTATUS}"="BUSY"]?17:21)})',
      '[add-headers]',
      'exten => s,1,Set(PJSIP_HEADER(add,X-Pre)=${ARG1}-${ARG2})',
      ' same => n,Set(PJSIP_HEADER(add,X-Gone)=1)',
      ' same => n,Set(PJSIP_HEADER(add,X-Gone)=2)',
      ' same => n,Set(REMOVED=${PJSIP_HEADER(remove,X-Gone)})',
      ' same => n,Set(PJSIP_HEADER(add,X-Removed-Count)=${REMOVED})',
      ' same => n,Set(PJSIP_HEADER(add,X-Upd)=old)',
      ' same => n,Set(PJSIP_HEADER(update,X-Upd)=new)',
      ' same => n,Return()',
      '',
    ].join('\n'),
  );
  server = await startTestServer({
    config_objects: {
      res_pjsip: {
        endpoint: {
          caller: { context: 'headers-in', allow: 'ulaw' },
          bob: { context: 'headers-in', allow: 'ulaw', aors: 'bob' },
        },
        aor: { bob: { contact: `sip:bob@127.0.0.1:${callee.port}` } },
      },
    },
    dialplan: { file: dialplanFile },
  } as never);
  events = await server.events('app=hdr-app&subscribeAll=true');
});

after(async () => {
  await events.close();
  await server.stop();
  callee.socket.close();
  rmSync(work, { recursive: true, force: true });
});

async function nextEvent(match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

async function variable(channelId: string, name: string): Promise<{ status: number; value?: string }> {
  const response = await server.ari(`/channels/${channelId}/variable?variable=${encodeURIComponent(name)}`);
  const body = (await response.json()) as Json;
  return { status: response.status, value: body.value };
}

function originate(variables: Record<string, string>): Promise<Response> {
  return server.ari('/channels?endpoint=PJSIP/bob&app=hdr-app', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ variables }),
  });
}

describe('PJSIP_HEADER on an inbound INVITE', () => {
  test('the dialplan reads X-Customer (first and second), X-* by position, the X- names and the Call-ID; ARI reads them too', { timeout: 30_000 }, async () => {
    const phone = await new Phone().open();
    try {
      phone.call('100', ['X-Customer: 42', 'X-Other: z', 'X-Customer: 43', 'Subject: hello']);
      const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith('PJSIP/caller-'));
      const id = start.channel.id as string;
      assert.deepEqual(await variable(id, 'CUSTOMER'), { status: 200, value: '42' });
      assert.deepEqual(await variable(id, 'SECOND'), { status: 200, value: '43' });
      assert.deepEqual(await variable(id, 'ANYX'), { status: 200, value: '43' });
      assert.deepEqual(await variable(id, 'XNAMES'), { status: 200, value: 'X-Customer,X-Other' });
      assert.deepEqual(await variable(id, 'CALLID'), { status: 200, value: phone.callId });
      assert.deepEqual(await variable(id, 'MISSING'), { status: 200, value: '' });
      // Straight through ARI's getChannelVar, names compared case-insensitively.
      assert.deepEqual(await variable(id, 'PJSIP_HEADER(read,x-other)'), { status: 200, value: 'z' });
      assert.deepEqual(await variable(id, 'PJSIP_HEADER(read,Subject)'), { status: 200, value: 'hello' });
      const port = phone.socket.address().port;
      assert.deepEqual(await variable(id, 'CHANNEL(pjsip,remote_uri)'), { status: 200, value: `sip:caller@127.0.0.1:${port}` });
      assert.deepEqual(await variable(id, 'CHANNEL(pjsip,request_uri)'), { status: 200, value: `sip:100@127.0.0.1:${server.core.pjsip.port}` });
      assert.deepEqual(await variable(id, 'CHANNEL(pjsip,remote_tag)'), { status: 200, value: 'ph' });
      assert.deepEqual(await variable(id, 'CHANNEL(pjsip,secure)'), { status: 200, value: '0' });
      assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
      assert.match(await phone.finalResponse(), /^SIP\/2\.0 [4-6]\d\d/);
    } finally {
      phone.close();
    }
  });

  test('PJSIP_HEADER on a channel that is not PJSIP fails: ARI 400 on read', async () => {
    const response = await server.ari('/channels?endpoint=Local/100@headers-in&app=hdr-app', { method: 'POST' });
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200);
    const read = await server.ari(`/channels/${channel.id}/variable?variable=${encodeURIComponent('PJSIP_HEADER(read,X-Customer)')}`);
    assert.equal(read.status, 400);
    assert.deepEqual(await read.json(), { message: 'Unable to read provided function' });
    await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
  });
});

describe('headers on an outbound INVITE', () => {
  test('Dial with a b() pre-dial handler and SIPAddHeader: the callee\'s INVITE carries X-Pre, X-Account, the updated X-Upd; removed ones are gone', { timeout: 30_000 }, async () => {
    const phone = await new Phone().open();
    const seen = callee.invites.length;
    try {
      phone.call('200', []);
      const invite = await callee.nextInvite(seen);
      const lines = headerLines(invite);
      assert.ok(lines.includes('X-Pre: abc-def'), invite);
      assert.ok(lines.includes('X-Account: 7, with a comma'), invite);
      assert.ok(lines.includes('X-Upd: new'), invite);
      assert.ok(lines.includes('X-Removed-Count: 2'), invite);
      assert.ok(!lines.some((line) => /^X-Gone:|^X-Dropped:|^Bad Name/i.test(line)), invite);
      // The callee said busy: Dial goes on and the caller is refused.
      assert.match(await phone.finalResponse(), /^SIP\/2\.0 486/);
    } finally {
      phone.close();
    }
  });

  test('ARI originate with variables {"PJSIP_HEADER(add,X-Trace)": "abc"}: the INVITE carries X-Trace: abc', { timeout: 30_000 }, async () => {
    const seen = callee.invites.length;
    const response = await originate({ 'PJSIP_HEADER(add,X-Trace)': 'abc', 'PJSIP_HEADER(add,P-Asserted-Identity)': '<sip:100@example.com>' });
    assert.equal(response.status, 200);
    const invite = await callee.nextInvite(seen);
    const lines = headerLines(invite);
    assert.ok(lines.includes('X-Trace: abc'), invite);
    assert.ok(lines.includes('P-Asserted-Identity: <sip:100@example.com>'), invite);
  });

  test('ARI create, then setChannelVar PJSIP_HEADER(add,X-Set), then dial: the INVITE carries it', { timeout: 30_000 }, async () => {
    const created = await server.ari('/channels/create?endpoint=PJSIP/bob&app=hdr-app', { method: 'POST' });
    const channel = (await created.json()) as Json;
    assert.equal(created.status, 200, JSON.stringify(channel));
    const set = await server.ari(`/channels/${channel.id}/variable?variable=${encodeURIComponent('PJSIP_HEADER(add,X-Set)')}&value=from-ari`, { method: 'POST' });
    assert.equal(set.status, 204);
    assert.deepEqual(await variable(channel.id, 'PJSIP_HEADER(read,X-Set)'), { status: 200, value: 'from-ari' });
    const seen = callee.invites.length;
    assert.equal((await server.ari(`/channels/${channel.id}/dial`, { method: 'POST' })).status, 204);
    const invite = await callee.nextInvite(seen);
    assert.ok(headerLines(invite).includes('X-Set: from-ari'), invite);
  });

  test('PJSIP_RESPONSE_HEADER(S): the headers of the 200 OK that answered the INVITE, read through ARI', { timeout: 30_000 }, async () => {
    callee.answering = true;
    try {
      const response = await originate({});
      const channel = (await response.json()) as Json;
      assert.equal(response.status, 200);
      await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === channel.id && e.channel.state === 'Up');
      assert.deepEqual(await variable(channel.id, 'PJSIP_RESPONSE_HEADER(read,X-Reply)'), { status: 200, value: 'yes' });
      assert.deepEqual(await variable(channel.id, 'PJSIP_RESPONSE_HEADER(read,x-reply,2)'), { status: 200, value: 'again' });
      assert.deepEqual(await variable(channel.id, 'PJSIP_RESPONSE_HEADERS(X-)'), { status: 200, value: 'X-Reply' });
      assert.equal((await server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
      await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === channel.id);
    } finally {
      callee.answering = false;
    }
  });

  test('CR/LF injection, bad names and stack headers are refused with 400; SIPADDHEADER with CR/LF is dropped at send time', { timeout: 30_000 }, async () => {
    const refused: Array<Record<string, string>> = [
      { 'PJSIP_HEADER(add,X-Evil)': 'a\r\nVia: SIP/2.0/UDP evil' },
      { 'PJSIP_HEADER(add,X-Evil)': 'a\nInjected: 1' },
      { 'PJSIP_HEADER(add,X-Bad:Name)': '1' },
      { 'PJSIP_HEADER(add,X Bad)': '1' },
      { 'PJSIP_HEADER(add,Call-ID)': 'forged' },
      { 'PJSIP_HEADER(add,X-Long)': 'x'.repeat(1025) },
      { 'PJSIP_HEADER(update,X-Never-Added)': '1' },
      { 'PJSIP_HEADER(shout,X-Foo)': '1' },
    ];
    for (const variables of refused) {
      const response = await originate(variables);
      assert.equal(response.status, 400, JSON.stringify(variables));
      assert.equal(typeof ((await response.json()) as Json).message, 'string');
    }
    const seen = callee.invites.length;
    const response = await originate({ SIPADDHEADER01: 'X-Evil: a\r\nInjected: 1', SIPADDHEADER02: 'X-Fine: yes' });
    assert.equal(response.status, 200);
    const invite = await callee.nextInvite(seen);
    assert.ok(headerLines(invite).includes('X-Fine: yes'), invite);
    assert.ok(!/Injected|X-Evil/.test(invite), invite);
  });

  test('at most 32 added headers: the 33rd is refused', { timeout: 30_000 }, async () => {
    const variables: Record<string, string> = {};
    for (let i = 1; i <= 32; i++) variables[`PJSIP_HEADER(add,X-H${i})`] = String(i);
    const seen = callee.invites.length;
    assert.equal((await originate(variables)).status, 200);
    const invite = await callee.nextInvite(seen);
    assert.equal(headerLines(invite).filter((line) => /^X-H\d+:/.test(line)).length, 32);
    variables['PJSIP_HEADER(add,X-H33)'] = '33';
    assert.equal((await originate(variables)).status, 400);
  });
});

describe('SessionHeaders', () => {
  test('read by occurrence and prefix, names once each, remove by pattern, spent once taken', () => {
    const headers = new SessionHeaders([
      { name: 'Via', value: 'a' },
      { name: 'X-One', value: ' 1 ' },
      { name: 'x-one', value: '2' },
      { name: 'X-Two', value: '3' },
    ]);
    assert.equal(headers.read('X-ONE'), '1');
    assert.equal(headers.read('X-One', 2), '2');
    assert.equal(headers.read('X-One', 3), undefined);
    assert.equal(headers.read('X-*', 3), '3');
    assert.deepEqual(headers.names('x-'), ['X-One', 'X-Two']);
    assert.deepEqual(headers.names(), ['Via', 'X-One', 'X-Two']);
    assert.equal(headers.remove('X-*'), 3);
    assert.equal(headers.remove('*'), 1);
    headers.add('X-New', '');
    assert.throws(() => headers.add('X-New', 'a\rb'), InvalidError);
    assert.throws(() => headers.add('Content-Length', '0'), InvalidError);
    assert.throws(() => headers.add('X-Star*', '0'), InvalidError);
    assert.deepEqual(headers.takeForRequest(), [{ name: 'X-New', value: '' }]);
    assert.equal(headers.sent, true);
  });
});
