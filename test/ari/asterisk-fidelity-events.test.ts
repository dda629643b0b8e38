// Events an ARI application sees, as Asterisk 22 raises them (issue 20): Dial's progress statuses
// while the far end rings, the `;2` half of an originate named after its `channelId`, `channelvars`
// entries that are dialplan functions, a moved channel's events leaving its old application, and
// bridge variables set without report_events kept out of the events' `bridgevars`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const DIALPLAN = `
[fidelity]
; Rings, then answers a little later.
exten => ring,1,Ringing()
 same => n,Wait(0.4)
 same => n,Answer()
 same => n,Wait(3600)
exten => park,1,Answer()
 same => n,Wait(3600)
; The ;2 half enters an application from the dialplan.
exten => stasis,1,Answer()
 same => n,Stasis(fid-a)
`;

type Json = Record<string, any>;

let server: TestServer;
let dir: string;
let appA: EventSocket;
let appB: EventSocket;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-fidelity-'));
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  server = await startTestServer({
    dialplan: { file: join(dir, 'extensions.conf') },
    ari: { channelvars: ['CHANNEL(language)', 'PLAIN', 'NOSUCHFUNCTION(x)'] },
  });
  appA = await server.events('app=fid-a');
  appB = await server.events('app=fid-b');
});

after(async () => {
  await appA?.close();
  await appB?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json | undefined }> {
  const response = await server.ari(path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : undefined };
}

async function ok(method: string, path: string, body?: unknown): Promise<Json | undefined> {
  const result = await call(method, path, body);
  assert.ok(result.status === 200 || result.status === 204, `${method} ${path}: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body;
}

/** The events about channel `id` the socket receives within `ms`, in order (others are dropped). */
async function eventsAbout(events: EventSocket, id: string, until: string, timeoutMs = 4000): Promise<Json[]> {
  const seen: Json[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (event.channel?.id !== id && event.peer?.id !== id) continue;
    seen.push(event);
    if (event.type === until) return seen;
  }
}

describe('Dial progress (item 3)', () => {
  test('a far end that rings raises Dial RINGING before ANSWER; answering while it rings is 412', async () => {
    await ok('POST', '/channels/create?endpoint=Local/ring@fidelity&app=fid-a&channelId=ringer');
    await eventsAbout(appA, 'ringer', 'StasisStart');
    await ok('POST', '/channels/ringer/dial?timeout=10');
    const statuses: string[] = [];
    const deadline = Date.now() + 4000;
    while (!statuses.includes('ANSWER')) {
      const event = (await appA.next(Math.max(1, deadline - Date.now()))) as Json;
      if (event.type !== 'Dial' || event.peer?.id !== 'ringer') continue;
      statuses.push(event.dialstatus);
      if (event.dialstatus === 'RINGING') {
        assert.equal(event.peer.state, 'Ringing');
        const refused = await call('POST', '/channels/ringer/answer');
        assert.equal(refused.status, 412, JSON.stringify(refused.body));
      }
    }
    assert.deepEqual(statuses, ['', 'RINGING', 'ANSWER']);
    await ok('DELETE', '/channels/ringer');
    await eventsAbout(appA, 'ringer', 'ChannelDestroyed');
  });
});

describe('Dial progress on originate (item 3)', () => {
  test('originating to a far end that rings raises Dial RINGING before ANSWER', async () => {
    await ok('POST', '/channels/orig3?endpoint=Local/ring@fidelity&app=fid-a&otherChannelId=orig3-2');
    const statuses: string[] = [];
    const deadline = Date.now() + 4000;
    while (!statuses.includes('ANSWER')) {
      const event = (await appA.next(Math.max(1, deadline - Date.now()))) as Json;
      if (event.type === 'Dial' && event.peer?.id === 'orig3') statuses.push(event.dialstatus);
    }
    assert.deepEqual(statuses, ['', 'RINGING', 'ANSWER']);
    await eventsAbout(appA, 'orig3', 'StasisStart');
    await ok('DELETE', '/channels/orig3');
    await eventsAbout(appA, 'orig3', 'ChannelDestroyed');
  });
});

describe('originate with channelId and no otherChannelId (item 6)', () => {
  test("the Local ;2 half is '<channelId>;2'", async () => {
    const one = (await ok('POST', '/channels/orig6?endpoint=Local/park@fidelity&app=fid-a'))!;
    assert.equal(one.id, 'orig6');
    const two = (await ok('GET', `/channels/${encodeURIComponent('orig6;2')}`))!;
    assert.equal(two.id, 'orig6;2');
    assert.match(two.name, /^Local\/park@fidelity-[0-9a-f]+;2$/);
    await eventsAbout(appA, 'orig6', 'StasisStart');
    // An id in use for ;2 refuses the originate, as any channel id in use does.
    const clash = await call('POST', '/channels/orig6;2x?endpoint=Local/park@fidelity&app=fid-a&otherChannelId=orig6;2');
    assert.equal(clash.status, 409);
    await ok('DELETE', '/channels/orig6');
    await eventsAbout(appA, 'orig6', 'ChannelDestroyed');
  });
});

describe('channelvars with functions (item 5)', () => {
  test('a channelvars entry that is a function is read for every event', async () => {
    await ok('POST', '/channels/cv5?endpoint=Local/park@fidelity&app=fid-a', { variables: { PLAIN: 'plain value' } });
    const [start] = (await eventsAbout(appA, 'cv5', 'StasisStart')).slice(-1);
    assert.deepEqual(start.channel.channelvars, { 'CHANNEL(language)': 'en', PLAIN: 'plain value', 'NOSUCHFUNCTION(x)': '' });
    await ok('POST', `/channels/cv5/variable?variable=${encodeURIComponent('CHANNEL(language)')}&value=fr`);
    await ok('POST', '/channels/cv5/hold');
    const [hold] = (await eventsAbout(appA, 'cv5', 'ChannelHold')).slice(-1);
    assert.equal(hold.channel.channelvars['CHANNEL(language)'], 'fr');
    assert.equal(hold.channel.language, 'fr');
    await ok('DELETE', '/channels/cv5');
    await eventsAbout(appA, 'cv5', 'ChannelDestroyed');
  });
});

describe('after move (item 7)', () => {
  test("the channel's events go only to its new application", async () => {
    // ;1 is held by fid-b; ;2 enters fid-a from the dialplan, then moves to fid-b.
    const holder = await server.events('app=fid-holder');
    try {
      await ok('POST', '/channels/mv7?endpoint=Local/stasis@fidelity&app=fid-holder&otherChannelId=mv7-2');
      await eventsAbout(appA, 'mv7-2', 'StasisStart');
      await ok('POST', '/channels/mv7-2/move?app=fid-b&appArgs=moved');
      const endA = await eventsAbout(appA, 'mv7-2', 'StasisEnd');
      assert.deepEqual(
        endA.map((event) => event.type),
        ['StasisEnd'],
      );
      const startB = await eventsAbout(appB, 'mv7-2', 'StasisStart');
      assert.deepEqual(startB.at(-1)!.args, ['moved']);
      await ok('DELETE', '/channels/mv7-2');
      const hangupB = await eventsAbout(appB, 'mv7-2', 'ChannelDestroyed');
      assert.deepEqual(
        hangupB.map((event) => event.type),
        // STASISSTATUS set as Stasis() returns, then the dialplan run's own soft hang-up (APPUNLOAD).
        ['ChannelHangupRequest', 'StasisEnd', 'ChannelVarset', 'ChannelHangupRequest', 'ChannelDestroyed'],
      );
      const leftToA = (await appA.quiet(300)).filter((event) => event.channel && (event.channel as Json).id === 'mv7-2');
      assert.deepEqual(leftToA, [], 'the old application hears nothing more of the moved channel');
    } finally {
      await holder.close();
    }
  });

  test('an old application that subscribed to the channel itself keeps hearing it', async () => {
    const holder = await server.events('app=fid-holder');
    after(() => holder.close());
    await ok('POST', '/channels/mv7s?endpoint=Local/stasis@fidelity&app=fid-holder&otherChannelId=mv7s-2');
    await eventsAbout(appA, 'mv7s-2', 'StasisStart');
    await ok('POST', `/applications/fid-a/subscription?eventSource=${encodeURIComponent('channel:mv7s-2')}`);
    await ok('POST', '/channels/mv7s-2/move?app=fid-b');
    await eventsAbout(appA, 'mv7s-2', 'StasisEnd');
    await eventsAbout(appB, 'mv7s-2', 'StasisStart');
    await ok('DELETE', '/channels/mv7s-2');
    const stillA = await eventsAbout(appA, 'mv7s-2', 'ChannelDestroyed');
    assert.deepEqual(
      stillA.map((event) => event.type),
      ['ChannelHangupRequest', 'ChannelVarset', 'ChannelHangupRequest', 'ChannelDestroyed'],
    );
    await eventsAbout(appB, 'mv7s-2', 'ChannelDestroyed');
  });
});

describe('bridge variables and report_events (item 4)', () => {
  test('variables set with report_events false (any spelling) stay out of bridgevars in events', async () => {
    await ok('POST', '/bridges/bv4?type=mixing', { variables: { CREATED_QUIET: 'a', CREATED_LOUD: { value: 'b', report_events: true } } });
    for (const [name, spelling] of [
      ['Q_FALSE', 'false'],
      ['Q_CAPITAL', 'False'],
      ['Q_ZERO', '0'],
      ['Q_NO', 'no'],
    ]) {
      await ok('POST', `/bridges/bv4/variable?variable=${name}&value=x&report_events=${spelling}`);
    }
    await ok('POST', '/bridges/bv4/variable?variable=LOUD&value=y&report_events=true');
    // Reported once, then set again without report_events: no longer reported.
    await ok('POST', '/bridges/bv4/variable?variable=DEMOTED&value=1&report_events=true');
    await ok('POST', '/bridges/bv4/variable?variable=DEMOTED&value=2');
    await ok('POST', '/bridges/bv4/variables', { variables: { MANY_QUIET: 'c', MANY_LOUD: { value: 'd', report_events: true } } });

    await ok('POST', '/channels/bv4c?endpoint=Local/park@fidelity&app=fid-a');
    await eventsAbout(appA, 'bv4c', 'StasisStart');
    await ok('POST', '/bridges/bv4/addChannel?channel=bv4c');
    const [entered] = (await eventsAbout(appA, 'bv4c', 'ChannelEnteredBridge')).slice(-1);
    assert.deepEqual(entered.bridge.bridgevars, { CREATED_LOUD: 'b', LOUD: 'y', MANY_LOUD: 'd' });
    // The REST answer keeps showing every variable (docs/differences.md).
    const bridge = (await ok('GET', '/bridges/bv4'))!;
    assert.equal(bridge.bridgevars.Q_FALSE, 'x');
    await ok('DELETE', '/channels/bv4c');
    await eventsAbout(appA, 'bv4c', 'ChannelDestroyed');
    await ok('DELETE', '/bridges/bv4');
  });
});
