// Sequenced events and resuming the event stream, over real WebSockets: every event carries a
// consecutive `sequence`; a client that reconnects with resumeAfter gets every event it missed
// exactly once, in order, then the live stream; a point the buffer no longer holds is reported
// (EventsLost); calls sent to an application while its resumable connection is away wait for it;
// acknowledged (at-least-once) delivery re-sends what was not acknowledged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';
import { unlessCluster } from '../helpers/cluster-server.ts';

type Message = Record<string, unknown>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw event connection that records every message and can be dropped without a close handshake. */
class Client {
  readonly messages: Message[] = [];
  private listeners: (() => void)[] = [];
  readonly closed: Promise<void>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)) as Message);
      for (const listener of this.listeners.splice(0)) listener();
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static open(target: { readonly url: string }, query: string): Promise<Client> {
    const socket = new WebSocket(`${target.url.replace('http', 'ws')}/ari/events?${query}`, { headers: { authorization: AUTH } });
    const client = new Client(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(client));
      socket.once('error', reject);
      socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
    });
  }

  /** Waits until `predicate` holds for the messages received so far. */
  async until(predicate: (messages: Message[]) => boolean, timeoutMs = 15_000, what = 'messages'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${this.messages.length}: ${JSON.stringify(this.messages.slice(-3)).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.listeners.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  of(type: string): Message[] {
    return this.messages.filter((message) => message.type === type);
  }

  /** The sequence of the last numbered event received. */
  lastSequence(): number {
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const sequence = this.messages[i]!.sequence;
      if (typeof sequence === 'number') return sequence;
    }
    return 0;
  }

  /** Drops the TCP connection at once, as a crash or a network failure does. */
  drop(): Promise<void> {
    this.socket.terminate();
    return this.closed;
  }

  close(): Promise<void> {
    this.socket.close();
    return this.closed;
  }
}

let server: TestServer;
before(async () => {
  server = await startTestServer({ ari: { event_log: { reconnect_grace_seconds: 30 } } });
});
after(() => server.stop());

async function userEvent(app: string, name: string, variables: Record<string, string> = {}): Promise<void> {
  const response = await server.ari(`/events/user/${encodeURIComponent(name)}?application=${app}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ variables }),
  });
  assert.equal(response.status, 204, await response.text());
}

function sequences(messages: Message[]): number[] {
  return messages.filter((message) => typeof message.sequence === 'number').map((message) => message.sequence as number);
}

function assertConsecutive(numbers: number[], from: number): void {
  numbers.forEach((value, index) => assert.equal(value, from + index, `sequence at position ${index}`));
}

/** Waits until the server has seen the application's connection go (the client's side closes first). */
async function awaitAway(app: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const response = await server.ari(`/applications/${app}`);
    if (response.status === 200 && (await response.json()).connected === false) return;
    await sleep(10);
  }
  throw new Error(`${app} still connected`);
}

async function channelStatus(id: string): Promise<number> {
  return (await server.ari(`/channels/${id}`)).status;
}

describe('sequenced events', () => {
  test('every event carries sequence, consecutive per application; other fields are unchanged', async () => {
    const a = await Client.open(server, 'app=seq-a');
    const b = await Client.open(server, 'app=seq-b');
    for (let i = 0; i < 5; i++) await userEvent('seq-a', `a${i}`);
    for (let i = 0; i < 3; i++) await userEvent('seq-b', `b${i}`);
    await a.until((m) => m.length === 5);
    await b.until((m) => m.length === 3);
    assertConsecutive(sequences(a.messages), 1);
    assertConsecutive(sequences(b.messages), 1);
    const first = a.messages[0]!;
    assert.equal(first.type, 'ChannelUserevent');
    assert.equal(first.eventname, 'a0');
    assert.equal(first.application, 'seq-a');
    assert.equal(first.asterisk_id, server.core.serverId);
    // A second connection taking the application over: ApplicationReplaced is about the old
    // connection, not numbered; the new one carries on with the application's numbering.
    const a2 = await Client.open(server, 'app=seq-a');
    await a.until((m) => m.some((message) => message.type === 'ApplicationReplaced'));
    assert.equal(a.of('ApplicationReplaced')[0]!.sequence, undefined);
    await userEvent('seq-a', 'a5');
    await a2.until((m) => m.length === 1);
    assert.equal(a2.messages[0]!.sequence, 6);
    await Promise.all([a.close(), a2.close(), b.close()]);
  });

  test('the Application resource shows a disconnected application; a connected one is unchanged', async () => {
    const client = await Client.open(server, 'app=seq-state&resumable=true');
    const connected = await (await server.ari('/applications/seq-state')).json();
    assert.equal(connected.connected, undefined);
    await client.close();
    const away = await (await server.ari('/applications/seq-state')).json();
    assert.equal(away.connected, false);
    assert.match(String(away.disconnected_since), /^\d{4}-\d\d-\d\dT/);
    const until = Date.parse(String(away.calls_held_until).replace(/(\d\d)(\d\d)$/, '$1:$2'));
    assert.ok(until > Date.now() + 25_000 && until <= Date.now() + 31_000, `calls_held_until ${away.calls_held_until}`);
    // Back again: the plain shape.
    const again = await Client.open(server, 'app=seq-state');
    assert.equal((await (await server.ari('/applications/seq-state')).json()).connected, undefined);
    await again.close();
    // A plain connection does not hold its calls: the application is gone, as before.
    assert.equal((await server.ari('/applications/seq-state')).status, 404);
  });

  test('Swagger documents the added field, the parameters and EventsLost', async () => {
    const events = await (await server.ari('/api-docs/events.json')).json();
    assert.equal(events.models.Event.properties.sequence.type, 'long');
    assert.equal(events.models.EventsLost.extends, 'Event');
    assert.deepEqual(Object.keys(events.models.EventsLost.properties).sort(), ['from_sequence', 'reason', 'to_sequence']);
    const websocket = events.apis.find((api: { path: string }) => api.path === '/events').operations[0];
    const params = websocket.parameters.map((param: { name: string }) => param.name);
    for (const name of ['resumeAfter', 'ack', 'resumable']) assert.ok(params.includes(name), name);
    const applications = await (await server.ari('/api-docs/applications.json')).json();
    assert.equal(applications.models.Application.properties.connected.type, 'boolean');
    assert.equal(applications.models.Application.properties.disconnected_since.type, 'Date');
  });

  test('bad resume parameters are refused with 400 before the upgrade', async () => {
    for (const query of ['app=x&resumeAfter=-1', 'app=x&resumeAfter=abc', 'app=x,y&resumeAfter=3', 'app=x&resumeAfter=z:3', 'app=x,y&resumeAfter=x:1,x:2', 'app=x&resumeAfter=1e3', `app=x&resumeAfter=${'9'.repeat(16)}`]) {
      await assert.rejects(Client.open(server, query), /upgrade refused: 400/, query);
    }
  });
});

describe('resuming', () => {
  test('the socket drops during a burst of 1,000 events: resuming after the last one processed delivers each exactly once, in order', async () => {
    const APP = 'burst';
    let client = await Client.open(server, `app=${APP}&resumable=true`);
    const processed: Message[] = [];
    // 1,000 user events raised over REST, 20 requests at a time, while the client drops its
    // socket after 300 and reconnects while the burst goes on.
    const raise = (async () => {
      for (let i = 0; i < 1000; i += 20) {
        await Promise.all(Array.from({ length: 20 }, (_, k) => userEvent(APP, `e${i + k}`)));
      }
    })();
    await client.until((m) => m.length >= 300, 20_000, '300 events');
    await client.drop();
    processed.push(...client.messages);
    const last = client.lastSequence();
    assert.ok(last >= 300 && last < 1000, `dropped after ${last}`);
    await sleep(50);
    client = await Client.open(server, `app=${APP}&resumeAfter=${last}`);
    await raise;
    await client.until((m) => m.length >= 1000 - last, 20_000, 'the rest of the burst');
    await sleep(100);
    processed.push(...client.messages);
    assert.equal(client.of('EventsLost').length, 0);
    const names = processed.map((message) => message.eventname);
    assert.equal(processed.length, 1000, 'no duplicate, no gap');
    assert.equal(new Set(names).size, 1000);
    assertConsecutive(sequences(processed), 1);
    await client.close();
  });

  test('a resume point older than the buffer is reported with EventsLost, then the held events follow', async () => {
    const small = await startTestServer({ ari: { event_log: { max_events: 10 } } });
    try {
      const open = (query: string): Promise<Client> => Client.open(small, query);
      const first = await open('app=old&resumable=true');
      for (let i = 1; i <= 3; i++) {
        const response = await small.ari(`/events/user/n${i}?application=old`, { method: 'POST' });
        assert.equal(response.status, 204);
      }
      await first.until((m) => m.length === 3);
      await first.drop();
      for (let i = 4; i <= 30; i++) await small.ari(`/events/user/n${i}?application=old`, { method: 'POST' });
      const resumed = await open('app=old&resumeAfter=3');
      await resumed.until((m) => m.length === 11, 15_000, 'EventsLost and 10 events');
      const [lost, ...rest] = resumed.messages;
      assert.equal(lost!.type, 'EventsLost');
      assert.equal(lost!.application, 'old');
      assert.equal(lost!.from_sequence, 4);
      assert.equal(lost!.to_sequence, 20);
      assert.equal(lost!.reason, 'expired');
      assert.equal(lost!.sequence, undefined);
      assertConsecutive(sequences(rest), 21);
      assert.deepEqual(rest.map((message) => message.eventname), Array.from({ length: 10 }, (_, i) => `n${i + 21}`));
      // A point the server never numbered (its numbering restarted): everything after it is unknown.
      const ahead = await open('app=old&resumeAfter=500');
      await ahead.until((m) => m.length >= 11);
      assert.equal(ahead.messages[0]!.type, 'EventsLost');
      assert.equal(ahead.messages[0]!.from_sequence, 501);
      assert.equal(ahead.messages[0]!.to_sequence, undefined);
      assert.equal(ahead.messages[0]!.reason, 'unknown_sequence');
      await Promise.all([resumed.close(), ahead.close()]);
    } finally {
      await small.stop();
    }
  });
});

describe('replaying a large backlog', () => {
  test('3 MB of missed events to a socket with a 64 KiB slow-consumer budget: replay paces itself, nothing is cut off', async () => {
    const paced = await startTestServer({ ari: { websocket: { max_queued_bytes: 65536, max_queued_messages: 64 }, event_log: { max_events: 5000 } } });
    try {
      const first = await Client.open(paced, 'app=backlog&resumable=true');
      await first.drop();
      const deadline = Date.now() + 15_000;
      while (paced.core.applications.isActive('backlog') && Date.now() < deadline) await sleep(10);
      const pad = 'p'.repeat(1000);
      for (let i = 1; i <= 3000; i++) {
        paced.core.applications.sendTo('backlog', { type: 'ChannelUserevent', timestamp: '2026-01-01T00:00:00.000+0000', eventname: `b${i}`, userevent: { pad } });
      }
      const resumed = await Client.open(paced, 'app=backlog&resumeAfter=0');
      // Live events raised while the replay is under way come after it, in order.
      for (let i = 3001; i <= 3050; i++) {
        paced.core.applications.sendTo('backlog', { type: 'ChannelUserevent', timestamp: '2026-01-01T00:00:00.000+0000', eventname: `b${i}`, userevent: { pad } });
        if (i % 10 === 0) await sleep(1);
      }
      await resumed.until((m) => m.length >= 3050, 20_000, '3050 events');
      await sleep(100);
      assert.equal(resumed.messages.length, 3050);
      assertConsecutive(sequences(resumed.messages), 1);
      assert.deepEqual(resumed.messages.map((message) => message.eventname), Array.from({ length: 3050 }, (_, i) => `b${i + 1}`));
      assert.equal(resumed.socket.readyState, WebSocket.OPEN, 'not cut off as a slow consumer');
      await resumed.close();
    } finally {
      await paced.stop();
    }
  });
});

describe('calls survive an application restart', () => {
  test('channels in the application stay; channels sent to it meanwhile wait, and get StasisStart after the reconnect', async () => {
    const APP = 'restart';
    let client = await Client.open(server, `app=${APP}&resumable=true`);
    const before = await server.ari(`/channels/r-old?endpoint=Local/answer@default&app=${APP}&otherChannelId=r-old-2`, { method: 'POST' });
    assert.equal(before.status, 200);
    await client.until((m) => m.some((message) => message.type === 'StasisStart'), 15_000, 'StasisStart r-old');
    const playback = await server.ari(`/channels/r-old/play/r-tone?media=${encodeURIComponent('tone:440;tonezone=us')}`, { method: 'POST' });
    assert.equal(playback.status, 201, await playback.text());
    await client.until((m) => m.some((message) => message.type === 'PlaybackStarted'));
    await client.drop();
    const seen = client.lastSequence();
    await awaitAway(APP);

    // While the application is away: three originates into it.
    for (const id of ['r-new1', 'r-new2', 'r-new3']) {
      const response = await server.ari(`/channels/${id}?endpoint=Local/answer@default&app=${APP}&otherChannelId=${id}-2`, { method: 'POST' });
      assert.equal(response.status, 200);
    }
    await sleep(300);
    for (const id of ['r-old', 'r-new1', 'r-new2', 'r-new3']) assert.equal(await channelStatus(id), 200, `${id} is still up`);
    assert.equal((await server.ari('/playbacks/r-tone')).status, 200, 'the playback goes on');
    const state = await (await server.ari(`/applications/${APP}`)).json();
    assert.equal(state.connected, false);
    assert.ok(state.channel_ids.includes('r-old'));

    client = await Client.open(server, `app=${APP}&resumeAfter=${seen}`);
    await client.until((m) => m.filter((message) => message.type === 'StasisStart').length === 3, 15_000, 'StasisStart for each waiting call');
    const starts = client.of('StasisStart').map((message) => (message.channel as { id: string }).id);
    assert.deepEqual(starts, ['r-new1', 'r-new2', 'r-new3']);
    assertConsecutive(sequences(client.messages), seen + 1);
    // The channels are controlled again: the application can act on them.
    for (const id of ['r-new1', 'r-new2', 'r-new3', 'r-old']) {
      assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204, id);
    }
    await client.close();
  });

  test('a channel reaching Stasis() in the dialplan while the application is away waits and enters when it is back', unlessCluster('reads server.core.stasis of the member asked (B); the channel waits on A or C'), async () => {
    // Extension 1000 of the default dialplan runs Stasis(test-app,dialplan).
    let client = await Client.open(server, 'app=test-app&resumable=true');
    await client.drop();
    await awaitAway('test-app');
    const response = await server.ari('/channels/r-dp?endpoint=Local/1000@default&extension=answer&context=default&otherChannelId=r-dp-2', { method: 'POST' });
    assert.equal(response.status, 200);
    const deadline = Date.now() + 15_000;
    while (server.core.stasis.waitingFor('test-app').length === 0 && Date.now() < deadline) await sleep(20);
    assert.deepEqual(server.core.stasis.waitingFor('test-app').map((channel) => channel.id), ['r-dp-2']);
    await sleep(200);
    assert.equal(await channelStatus('r-dp-2'), 200);
    client = await Client.open(server, 'app=test-app');
    await client.until((m) => m.some((message) => message.type === 'StasisStart'), 15_000, 'StasisStart r-dp-2');
    const start = client.of('StasisStart')[0]!;
    assert.equal((start.channel as { id: string }).id, 'r-dp-2');
    assert.deepEqual(start.args, ['dialplan']);
    assert.equal((await server.ari('/channels/r-dp-2', { method: 'DELETE' })).status, 204);
    await client.close();
  });

  test('after the grace period a waiting channel is hung up, as for an application that is not registered', async () => {
    // 5 s of grace: the channel must still be up 300 ms after its originate, which on a loaded
    // machine (two requests and a sleep) can take more than the 1 s this once had.
    const quick = await startTestServer({ ari: { event_log: { reconnect_grace_seconds: 5 } } });
    try {
      const socket = new WebSocket(`${quick.url.replace('http', 'ws')}/ari/events?app=gone&resumable=true`, { headers: { authorization: AUTH } });
      await new Promise((resolve) => socket.once('open', resolve));
      socket.terminate();
      await new Promise((resolve) => socket.once('close', resolve));
      await sleep(50);
      const response = await quick.ari('/channels/g1?endpoint=Local/answer@default&app=gone', { method: 'POST' });
      assert.equal(response.status, 200);
      await sleep(300);
      assert.equal((await quick.ari('/channels/g1')).status, 200, 'waits during the grace period');
      const deadline = Date.now() + 15_000;
      while ((await quick.ari('/channels/g1')).status === 200 && Date.now() < deadline) await sleep(100);
      assert.equal((await quick.ari('/channels/g1')).status, 404, 'hung up after the grace period');
      assert.equal((await quick.ari('/applications/gone')).status, 404, 'the application is forgotten');
    } finally {
      await quick.stop();
    }
  });
});

describe('acknowledged delivery', () => {
  test('unacknowledged events are sent again after a reconnect; bad acks are answered 400', async () => {
    const APP = 'acked';
    let client = await Client.open(server, `app=${APP}&ack=true`);
    for (let i = 1; i <= 10; i++) await userEvent(APP, `k${i}`);
    await client.until((m) => m.length === 10);
    client.socket.send(JSON.stringify({ type: 'Ack', application: APP, sequence: 6 }));
    client.socket.send(JSON.stringify({ type: 'Ack', sequence: 99 }));
    client.socket.send(JSON.stringify({ type: 'Ack', sequence: 'x' }));
    await client.until((m) => m.filter((message) => message.type === 'RESTResponse').length === 2);
    for (const reply of client.of('RESTResponse')) assert.equal(reply.status_code, 400);
    await client.drop();
    for (let i = 11; i <= 12; i++) await userEvent(APP, `k${i}`);
    client = await Client.open(server, `app=${APP}&ack=true`);
    await client.until((m) => m.length === 6);
    assert.deepEqual(client.messages.map((message) => message.eventname), ['k7', 'k8', 'k9', 'k10', 'k11', 'k12']);
    assertConsecutive(sequences(client.messages), 7);
    // An ack on a connection without ack=true is refused.
    const plain = await Client.open(server, 'app=not-acked');
    plain.socket.send(JSON.stringify({ type: 'Ack', sequence: 0 }));
    await plain.until((m) => m.length === 1);
    assert.equal(plain.messages[0]!.status_code, 400);
    await Promise.all([client.close(), plain.close()]);
  });
});
