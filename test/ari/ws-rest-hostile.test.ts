// REST over the ARI event WebSocket against hostile shapes (the live sweep's ARI part): every
// malformed RESTRequest gets the RESTResponse Asterisk 22 sends for it (res/ari/ari_websockets.c and
// ari_websocket_requests.c: /work/shared/ari-websocket-features.md §2.3), and fragmented, binary,
// oversized and flooding frames or pings leave the server answering with its bounds holding.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

/** A raw client of /ari/events: every text message it receives, parsed. */
class RawEvents {
  readonly received: Array<Record<string, unknown>> = [];
  closeCode: number | undefined;
  #waiters: Array<() => void> = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, binary) => {
      if (!binary) this.received.push(JSON.parse(String(data)) as Record<string, unknown>);
      for (const waiter of this.#waiters.splice(0)) waiter();
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      for (const waiter of this.#waiters.splice(0)) waiter();
    });
    socket.on('error', () => undefined);
  }

  static async open(app: string, options: WebSocket.ClientOptions = {}): Promise<RawEvents> {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/ari/events?app=${app}`, { headers: { Authorization: AUTH }, ...options });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new RawEvents(socket);
  }

  /** Waits until `count` RESTResponses arrived (or the socket closed); returns them all. */
  async responses(count: number, timeoutMs = 20_000): Promise<Array<Record<string, unknown>>> {
    const deadline = Date.now() + timeoutMs;
    const answers = (): Array<Record<string, unknown>> => this.received.filter((m) => m.type === 'RESTResponse');
    while (answers().length < count && this.closeCode === undefined && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return answers();
  }

  close(): void {
    this.socket.terminate();
  }
}

async function stillAnswering(): Promise<void> {
  assert.equal((await server.ari('/asterisk/ping')).status, 200);
  const events = await RawEvents.open('after-check');
  events.socket.send(JSON.stringify({ type: 'RESTRequest', request_id: 'ok', method: 'GET', uri: 'asterisk/ping' }));
  const [reply] = await events.responses(1);
  assert.equal(reply?.status_code, 200);
  events.close();
}

const bodyOf = (reply: Record<string, unknown>): unknown => (typeof reply.message_body === 'string' ? JSON.parse(reply.message_body) : undefined);

describe('RESTRequest shapes over the event WebSocket (as Asterisk 22 answers them)', () => {
  it('a frame that is not JSON: 400 "Failed to parse request message JSON", empty ids and uri, no body', async () => {
    const events = await RawEvents.open('shapes');
    for (const text of ['{', 'nope', '', '{"type":"RESTRequest",', '\u0000']) events.socket.send(text);
    const replies = await events.responses(5);
    assert.equal(replies.length, 5);
    for (const reply of replies) {
      assert.equal(reply.status_code, 400);
      assert.equal(reply.reason_phrase, 'Failed to parse request message JSON');
      assert.equal(reply.transaction_id, '');
      assert.equal(reply.request_id, '');
      assert.equal(reply.uri, '');
      assert.equal(reply.message_body, undefined);
      assert.equal(reply.content_type, undefined);
    }
    events.close();
  });

  it('each malformed field gets 400 "Bad request" with the message Asterisk writes, ids echoed', async () => {
    const events = await RawEvents.open('fields');
    const cases: Array<[Record<string, unknown> | unknown[] | number | null, string]> = [
      [[], "No 'type' property."],
      [7, "No 'type' property."],
      [null, "No 'type' property."],
      [{ method: 'GET', uri: 'asterisk/ping' }, "No 'type' property."],
      [{ type: 42, method: 'GET', uri: 'asterisk/ping' }, "No 'type' property."],
      [{ type: 'RESTRequestX', method: 'GET', uri: 'asterisk/ping' }, 'Unknown request type.'],
      [{ type: 'RESTRequest', method: 'GET' }, "Empty or missing 'uri' property."],
      [{ type: 'RESTRequest', method: 'GET', uri: '' }, "Empty or missing 'uri' property."],
      [{ type: 'RESTRequest', method: 'GET', uri: { path: 'x' } }, "Empty or missing 'uri' property."],
      [{ type: 'RESTRequest', uri: 'asterisk/ping' }, "Unknown or missing 'method' property."],
      [{ type: 'RESTRequest', method: 'get', uri: 'asterisk/ping' }, "Unknown or missing 'method' property."],
      [{ type: 'RESTRequest', method: 'PATCH', uri: 'asterisk/ping' }, "Unknown or missing 'method' property."],
      [{ type: 'RESTRequest', method: ['GET'], uri: 'asterisk/ping' }, "Unknown or missing 'method' property."],
      [{ type: 'RESTRequest', method: 'GET', uri: 'asterisk/ping', query_strings: [1] }, "Unable to parse 'query_strings' array."],
      [{ type: 'RESTRequest', method: 'GET', uri: 'asterisk/ping', query_strings: [{ name: 'a', value: 1 }] }, "Unable to parse 'query_strings' array."],
      [{ type: 'RESTRequest', method: 'GET', uri: 'asterisk/ping', query_strings: [{ name: null, value: 'x' }] }, "Unable to parse 'query_strings' array."],
      [{ type: 'RESTRequest', method: 'POST', uri: 'asterisk/variable', message_body: '{"variable":"A"}' }, "No 'content_type' for 'message_body'."],
      [{ type: 'RESTRequest', method: 'POST', uri: 'asterisk/variable', message_body: 'x', content_type: 'text/plain' }, 'Unknown content type.'],
      [{ type: 'RESTRequest', method: 'POST', uri: 'asterisk/variable', message_body: 'x', content_type: 'application/json; charset=utf-8' }, 'Unknown content type.'],
      [{ type: 'RESTRequest', method: 'POST', uri: 'asterisk/variable', message_body: '{nope', content_type: 'application/json' }, "Unable to parse 'message_body' as 'application/json'."],
    ];
    for (const [index, [request]] of cases.entries()) {
      const ids = request !== null && typeof request === 'object' && !Array.isArray(request) ? { transaction_id: `t${index}`, request_id: `r${index}`, ...request } : request;
      events.socket.send(JSON.stringify(ids));
    }
    const replies = await events.responses(cases.length);
    assert.equal(replies.length, cases.length);
    for (const [index, [request, message]] of cases.entries()) {
      const reply = replies[index];
      const what = JSON.stringify(request);
      assert.equal(reply.status_code, 400, what);
      assert.equal(reply.reason_phrase, 'Bad request', what);
      assert.deepEqual(bodyOf(reply), { message }, what);
      const isObject = request !== null && typeof request === 'object' && !Array.isArray(request);
      assert.equal(reply.request_id, isObject ? `r${index}` : '', what);
      assert.equal(reply.transaction_id, isObject ? `t${index}` : '', what);
    }
    events.close();
  });

  it('a frame or a message_body nested deeper than 2048 levels is unparseable, as jansson makes it in Asterisk', async () => {
    const events = await RawEvents.open('depth');
    const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    events.socket.send(`{"type":"RESTRequest","method":"GET","uri":"asterisk/ping","x":${deep(2048)}}`);
    const request = { type: 'RESTRequest', method: 'POST', uri: 'asterisk/variable', content_type: 'application/json', request_id: 'deep' };
    events.socket.send(JSON.stringify({ ...request, message_body: `{"variable":"A","x":${deep(2048)}}` }));
    events.socket.send(JSON.stringify({ ...request, request_id: 'bound', message_body: `{"variable":"A","value":"1","x":${deep(2047)}}` }));
    const [frame, body, bound] = await events.responses(3);
    assert.equal(frame?.status_code, 400);
    assert.equal(frame?.reason_phrase, 'Failed to parse request message JSON');
    assert.equal(body?.status_code, 400);
    assert.deepEqual(bodyOf(body), { message: "Unable to parse 'message_body' as 'application/json'." });
    // 2048 levels in all (the body's object and 2047 arrays) are read and the request is carried out.
    assert.equal(bound?.request_id, 'bound');
    assert.equal(bound?.status_code, 204);
    events.close();
    await stillAnswering();
  });

  it('hostile but well-formed: a query in the uri is split off (and not echoed), huge and odd values are answered', async () => {
    const events = await RawEvents.open('odd-values');
    const requests = [
      { type: 'RESTRequest', request_id: 'q', method: 'GET', uri: 'asterisk/variable?variable=NOPE' },
      { type: 'RESTRequest', request_id: 'big', method: 'GET', uri: `channels/${'x'.repeat(200_000)}` },
      { type: 'RESTRequest', request_id: 'many', method: 'GET', uri: 'asterisk/ping', query_strings: Array.from({ length: 5000 }, (_, i) => ({ name: `n${i}`, value: 'v' })) },
      { type: 'RESTRequest', request_id: 'ignored-qs', method: 'GET', uri: 'asterisk/ping', query_strings: 'a=b' },
      { type: 'RESTRequest', request_id: 'body-not-string', method: 'GET', uri: 'asterisk/ping', message_body: { a: 1 } },
      { type: 'RESTRequest', request_id: { nested: true }, transaction_id: ['x'], method: 'GET', uri: 'asterisk/ping' },
      { type: 'RESTRequest', request_id: 'form', method: 'POST', uri: 'asterisk/variable', content_type: 'application/x-www-form-urlencoded', message_body: 'variable=FORMED&value=%E2%98%BA' },
      { type: 'RESTRequest', request_id: 'upgrade', method: 'GET', uri: 'events' },
    ];
    for (const request of requests) events.socket.send(JSON.stringify(request));
    const replies = await events.responses(requests.length);
    assert.equal(replies.length, requests.length);
    const byId = new Map(replies.map((reply) => [reply.request_id, reply]));
    assert.equal(byId.get('q')?.uri, 'asterisk/variable');
    assert.equal(byId.get('q')?.status_code, 200);
    assert.ok((byId.get('big')?.status_code as number) < 500);
    assert.equal(byId.get('many')?.status_code, 200);
    assert.equal(byId.get('ignored-qs')?.status_code, 200);
    assert.equal(byId.get('body-not-string')?.status_code, 200);
    assert.equal(byId.get('')?.status_code, 200, 'ids that are not strings are echoed as ""');
    assert.equal(byId.get('form')?.status_code, 204);
    assert.equal(byId.get('upgrade')?.status_code, 400);
    events.close();
    assert.equal(((await (await server.ari('/asterisk/variable?variable=FORMED')).json()) as { value: string }).value, '\u263a');
  });

  it('repeated request ids are each answered, in order', async () => {
    const events = await RawEvents.open('repeats');
    for (let i = 0; i < 20; i++) events.socket.send(JSON.stringify({ type: 'RESTRequest', request_id: 'same', transaction_id: String(i), method: 'GET', uri: 'asterisk/ping' }));
    const replies = await events.responses(20);
    assert.deepEqual(replies.map((reply) => reply.transaction_id), Array.from({ length: 20 }, (_, i) => String(i)));
    events.close();
  });

  it('paths that climb out or name object internals are not found, and change nothing', async () => {
    const events = await RawEvents.open('climbing');
    const uris = ['../../../etc/passwd', '__proto__', 'channels/__proto__', 'sounds/../../x', 'recordings/stored/..%2F..%2Fetc%2Fpasswd/file', 'channels/constructor/variable?variable=__proto__'];
    for (const uri of uris) events.socket.send(JSON.stringify({ type: 'RESTRequest', request_id: uri, method: 'GET', uri }));
    const replies = await events.responses(uris.length);
    assert.deepEqual(replies.map((reply) => [reply.request_id, reply.status_code]), uris.map((uri) => [uri, 404]));
    // A global variable named like a prototype key is a variable like any other: nothing is polluted.
    events.socket.send(JSON.stringify({ type: 'RESTRequest', request_id: 'proto-var', method: 'GET', uri: 'asterisk/variable?variable=__proto__' }));
    const [variable] = (await events.responses(uris.length + 1)).slice(uris.length);
    assert.equal(variable?.status_code, 200);
    assert.deepEqual(bodyOf(variable!), { value: '' });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    events.close();
    await stillAnswering();
  });
});

describe('frames over the event WebSocket', () => {
  it('binary frames are ignored (as Asterisk does); fragmented text is reassembled', async () => {
    const events = await RawEvents.open('frames');
    events.socket.send(Buffer.from('{"type":"RESTRequest","method":"GET","uri":"asterisk/ping"}'), { binary: true });
    const text = JSON.stringify({ type: 'RESTRequest', request_id: 'frag', method: 'GET', uri: 'asterisk/ping' });
    events.socket.send(text.slice(0, 10), { fin: false });
    events.socket.send(text.slice(10, 30), { fin: false });
    events.socket.send(text.slice(30), { fin: true });
    const replies = await events.responses(1);
    assert.deepEqual(replies.map((reply) => [reply.request_id, reply.status_code]), [['frag', 200]]);
    events.close();
  });

  it('a frame over the payload bound closes the socket with 1009; the server goes on', async () => {
    const events = await RawEvents.open('oversized');
    events.socket.send('x'.repeat(32 * 1024 * 1024));
    await events.responses(1, 20_000);
    assert.equal(events.closeCode, 1009);
    await stillAnswering();
  });

  it('a flood of requests and pings from a client that reads nothing leaves the server answering', async () => {
    const events = await RawEvents.open('flood');
    events.socket.pause();
    const request = JSON.stringify({ type: 'RESTRequest', method: 'GET', uri: 'asterisk/info' });
    for (let i = 0; i < 20_000; i++) events.socket.send(request);
    for (let i = 0; i < 5000; i++) events.socket.ping(Buffer.alloc(125, 1));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await stillAnswering();
    events.close();
  });
});
