// DTMF and audio across a Local pair: digits sent into one half with POST /channels/{id}/dtmf come
// out of the other half as ChannelDtmfReceived, in order and on their timers; audio frames written
// into one half arrive unchanged at the other (and as silence while muted).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import { createFrame, type Frame } from '../../src/media/frame.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const APP = 'dtmf-app';

type Json = Record<string, any>;

let server: TestServer;
let events: EventSocket;
/** The default dialplan's `1000` extension hands its caller to test-app. */
let testApp: EventSocket;

before(async () => {
  server = await startTestServer();
  events = await server.events(`app=${APP}`);
  testApp = await server.events('app=test-app');
  // Every channel's events, whoever controls it.
  const subscribed = await server.ari(`/applications/${APP}/subscription?eventSource=channel:`, { method: 'POST' });
  assert.equal(subscribed.status, 200);
});

after(async () => {
  await events?.close();
  await testApp?.close();
  await server?.stop();
});

async function post(path: string): Promise<Response> {
  const response = await server.ari(path, { method: 'POST' });
  assert.ok(response.status === 200 || response.status === 204, `${path}: ${response.status} ${await response.clone().text()}`);
  return response;
}

async function next(socket: EventSocket, type: string, id: string, timeoutMs = 3000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await socket.next(Math.max(1, deadline - Date.now()))) as Json;
    if (event.type === type && event.channel?.id === id) return event;
  }
}

/** Originates `Local/<exten>@default` into the app; resolves once the ;1 half is in Stasis. */
async function pair(exten: string, id: string): Promise<{ one: Channel; two: Channel }> {
  await post(`/channels/${id}?endpoint=Local/${exten}@default&app=${APP}&otherChannelId=${id}-2`);
  await next(events, 'StasisStart', id);
  return { one: server.channel(id)!, two: server.channel(`${id}-2`)! };
}

async function hangup(id: string): Promise<void> {
  const response = await server.ari(`/channels/${id}`, { method: 'DELETE' });
  assert.equal(response.status, 204);
}

describe('DTMF into one half of a Local pair', () => {
  test('12# sent into ;1 is received on ;2 in order, with its duration, on its timers', async () => {
    const { one, two } = await pair('answer', 'dtmf-a');
    const sent = Date.now();
    await post(`/channels/${one.id}/dtmf?dtmf=${encodeURIComponent('12#')}&duration=80&between=40`);
    const received: Json[] = [];
    for (let i = 0; i < 3; i++) received.push(await next(events, 'ChannelDtmfReceived', two.id));
    assert.deepEqual(received.map((event) => event.digit), ['1', '2', '#']);
    for (const event of received) {
      assert.equal(event.duration_ms, 80);
      assert.equal(event.application, APP);
      assert.equal(event.channel.name, two.name);
    }
    // Each digit ends `duration` after it starts and the next starts `between` later.
    const times = received.map((event) => Date.parse(event.timestamp.replace(/(\d\d)(\d\d)$/, '$1:$2')));
    assert.ok(times[0] - sent >= 70, `first digit after its duration (${times[0] - sent} ms)`);
    assert.ok(times[1] - times[0] >= 110, `spacing ${times[1] - times[0]} ms`);
    assert.ok(times[2] - times[1] >= 110, `spacing ${times[2] - times[1]} ms`);
    await hangup(one.id);
  });

  test('before, pauses, lower-case letters; invalid characters are skipped; requests queue one after another', async () => {
    const { one, two } = await pair('answer', 'dtmf-b');
    await post(`/channels/${one.id}/dtmf?dtmf=${encodeURIComponent('a,x9')}&before=50&duration=20&between=20&after=30`);
    await post(`/channels/${one.id}/dtmf?dtmf=*D&duration=20&between=20`);
    const digits: string[] = [];
    for (let i = 0; i < 4; i++) digits.push((await next(events, 'ChannelDtmfReceived', two.id)).digit as string);
    assert.deepEqual(digits, ['A', '9', '*', 'D']);
    await hangup(one.id);
  });

  test('the other way: a channel in Stasis through the dialplan sends digits to the ;1 half', async () => {
    // Local/1000@default: the ;2 half runs Answer, Stasis(test-app,dialplan).
    await post(`/channels/back-1?endpoint=Local/1000@default&app=${APP}&otherChannelId=back-2`);
    const start = await next(testApp, 'StasisStart', 'back-2');
    assert.deepEqual(start.args, ['dialplan']);
    await post('/channels/back-2/dtmf?dtmf=5&duration=30');
    const digit = await next(events, 'ChannelDtmfReceived', 'back-1');
    assert.equal(digit.digit, '5');
    assert.equal(digit.duration_ms, 30);
    await hangup('back-2');
  });

  test('hanging up abandons the digits still to send', async () => {
    const { one, two } = await pair('answer', 'dtmf-c');
    await post(`/channels/${one.id}/dtmf?dtmf=123456789&duration=60&between=10`);
    assert.equal((await next(events, 'ChannelDtmfReceived', two.id)).digit, '1');
    await hangup(one.id);
    const rest = await events.quiet(300);
    assert.deepEqual(rest.filter((event) => event.type === 'ChannelDtmfReceived'), []);
  });
});

describe('audio across a Local pair', () => {
  function frameOf(seed: number): Frame {
    const frame = createFrame(8000);
    for (let i = 0; i < frame.samples.length; i++) frame.samples[i] = ((i * 97 + seed * 31) % 2000) - 1000;
    return frame;
  }

  test('frames written into one half arrive with identical samples at the other; muting silences them', async () => {
    const { one, two } = await pair('answer', 'audio-a');
    const heardOnTwo: Int16Array[] = [];
    const heardOnOne: Int16Array[] = [];
    two.addFrameListener((frame) => heardOnTwo.push(Int16Array.from(frame.samples)));
    one.addFrameListener((frame) => heardOnOne.push(Int16Array.from(frame.samples)));

    const written = [frameOf(1), frameOf(2), frameOf(3)];
    for (const frame of written) server.channel(one.id)!.write(frame);
    assert.deepEqual(heardOnTwo, written.map((frame) => frame.samples));
    two.write(frameOf(4));
    assert.deepEqual(heardOnOne, [frameOf(4).samples]);

    // Muting ;1 outbound: what it sends becomes silence; inbound: what it hears does.
    await post(`/channels/${one.id}/mute?direction=out`);
    one.write(frameOf(5));
    assert.deepEqual(heardOnTwo.at(-1), new Int16Array(160));
    two.write(frameOf(6));
    assert.deepEqual(heardOnOne.at(-1), frameOf(6).samples);
    await post(`/channels/${one.id}/mute?direction=in`);
    two.write(frameOf(7));
    assert.deepEqual(heardOnOne.at(-1), new Int16Array(160));
    const unmuted = await server.ari(`/channels/${one.id}/mute`, { method: 'DELETE' });
    assert.equal(unmuted.status, 204);
    assert.equal(one.mutedIn || one.mutedOut, false);
    one.write(frameOf(8));
    two.write(frameOf(9));
    assert.deepEqual(heardOnTwo.at(-1), frameOf(8).samples);
    assert.deepEqual(heardOnOne.at(-1), frameOf(9).samples);
    await hangup(one.id);
  });

  test('hold and unhold on a controlled half raise ChannelHold / ChannelUnhold; ring and progress are accepted', async () => {
    const { one } = await pair('answer', 'held');
    await post(`/channels/${one.id}/hold`);
    assert.equal(one.onHold, true);
    await next(events, 'ChannelHold', one.id);
    const unhold = await server.ari(`/channels/${one.id}/hold`, { method: 'DELETE' });
    assert.equal(unhold.status, 204);
    await next(events, 'ChannelUnhold', one.id);
    assert.equal(one.onHold, false);
    await post(`/channels/${one.id}/ring`);
    assert.equal((await server.ari(`/channels/${one.id}/ring`, { method: 'DELETE' })).status, 204);
    await post(`/channels/${one.id}/progress`);
    await post(`/channels/${one.id}/answer`);
    await hangup(one.id);
  });
});

describe('leaks', () => {
  test('no channel is left and no application keeps a subscription to a dead channel', async () => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(server.allChannels().length, 0);
    for (const app of server.core.applications.list()) assert.deepEqual(app.snapshot().channel_ids, [], app.name);
    assert.equal(server.logLines.filter((line) => line.includes('does not match')).length, 0);
    const invalid = [...events.messages, ...testApp.messages].filter((message) => message.error !== undefined);
    assert.deepEqual(invalid, []);
  });
});
