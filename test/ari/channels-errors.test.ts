// Every error status of the channel operations, with its body: 404 unknown channel / variable /
// label, 409 id in use / not in Stasis / not dialable, 412 unanswered outbound channel, 422
// redirect, 400 bad parameters. Plus the origination details the errors guard (timeout, create
// into an application that is not there, originate into the dialplan).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { cleanUpAfterFailureInCluster } from '../helpers/cluster-server.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const APP = 'errors-app';

const DIALPLAN = `
[default]
exten => answer,1,Answer()
 same => n,Wait(3600)
; Never answers.
exten => slow,1,Wait(3600)

[labels]
exten => target,1,NoOp(first)
 same => n(entry),NoOp(labelled)
 same => n,Wait(3600)
`;

type Json = Record<string, any>;

let server: TestServer;

// Through a cluster, a failed test's channels on A and C would fail the leak check at the end too.
afterEach((t) => cleanUpAfterFailureInCluster(server, t));
let events: EventSocket;

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-dialplan-'));
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') } });
  events = await server.events(`app=${APP}`);
});

after(async () => {
  await events?.close();
  await server?.stop();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json | undefined }> {
  const response = await server.ari(path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : undefined };
}

async function expectError(method: string, path: string, status: number, message: string | RegExp, body?: unknown): Promise<void> {
  const result = await call(method, path, body);
  assert.equal(result.status, status, `${method} ${path}: ${JSON.stringify(result.body)}`);
  if (typeof message === 'string') assert.deepEqual(result.body, { message }, `${method} ${path}`);
  else assert.match(String(result.body?.message), message, `${method} ${path}`);
}

async function ok(method: string, path: string, body?: unknown): Promise<Json | undefined> {
  const result = await call(method, path, body);
  assert.ok(result.status === 200 || result.status === 204, `${method} ${path}: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body;
}

/** Waits for the next event of `type` about channel `id` (skipping others). */
async function eventFor(type: string, id: string, timeoutMs = 3000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (event.type === type && (event.channel?.id === id || event.peer?.id === id)) return event;
  }
}

/** Originates Local/answer@default into the app and waits until it is in Stasis; returns both halves' ids. */
async function answeredPair(id: string): Promise<{ one: string; two: string }> {
  const channel = (await ok('POST', `/channels/${id}?endpoint=Local/answer@default&app=${APP}&otherChannelId=${id}-2`))!;
  await eventFor('StasisStart', channel.id);
  return { one: channel.id, two: `${id}-2` };
}

const NOT_FOUND = 'Channel not found';
const NOT_IN_STASIS = 'Channel not in Stasis application';
const BAD_STATE = 'Channel in invalid state';

describe('404', () => {
  test('unknown channel: get, hangup and every control operation', async () => {
    await expectError('GET', '/channels/nope', 404, NOT_FOUND);
    await expectError('DELETE', '/channels/nope', 404, NOT_FOUND);
    for (const [method, path] of [
      ['POST', '/answer'],
      ['POST', '/ring'],
      ['DELETE', '/ring'],
      ['POST', '/progress'],
      ['POST', '/hold'],
      ['DELETE', '/hold'],
      ['POST', '/mute'],
      ['DELETE', '/mute'],
      ['POST', '/dtmf?dtmf=1'],
      ['POST', '/continue'],
      ['POST', '/move?app=x'],
      ['POST', '/redirect?endpoint=Local/x@default'],
      ['POST', '/dial'],
      ['POST', '/variable?variable=X&value=1'],
    ] as const) {
      await expectError(method, `/channels/nope${path}`, 404, NOT_FOUND);
    }
    await expectError('GET', '/channels/nope/variable?variable=X', 404, 'Provided channel was not found');
    await expectError('GET', '/channels/nope/variables?variables=X', 404, 'Provided channel was not found');
    await expectError('POST', '/channels/nope/variables', 404, 'Provided channel was not found', { variables: { X: '1' } });
  });

  test('unset variable, unknown labels', async () => {
    const { one } = await answeredPair('notfound');
    await expectError('GET', `/channels/${one}/variable?variable=UNSET`, 404, 'Provided variable was not found');
    await expectError('GET', `/channels/${one}/variables?variables=CHANNEL,UNSET`, 404, 'Provided variable was not found');
    await expectError('POST', `/channels/${one}/continue?context=labels&extension=target&label=nowhere`, 404, 'Requested label can not be found');
    await expectError('POST', '/channels?endpoint=Local/answer@default&extension=target&context=labels&label=nowhere', 404, 'Requested label can not be found');
    // The channel is still in the application: the failed continue changed nothing.
    await ok('POST', `/channels/${one}/hold`);
    await ok('DELETE', `/channels/${one}`);
  });
});

describe('409', () => {
  test('an id in use: originateWithId, originate channelId/otherChannelId, create', async () => {
    const { one, two } = await answeredPair('taken');
    const inUse = 'Channel with given unique ID already exists';
    await expectError('POST', `/channels/${one}?endpoint=Local/answer@default&app=${APP}`, 409, inUse);
    await expectError('POST', `/channels?endpoint=Local/answer@default&app=${APP}&channelId=${two}`, 409, inUse);
    await expectError('POST', `/channels?endpoint=Local/answer@default&app=${APP}&otherChannelId=${one}`, 409, inUse);
    await expectError('POST', `/channels/create?endpoint=Local/answer@default&app=${APP}&channelId=${one}`, 409, inUse);
    const created = (await ok('POST', `/channels/create?endpoint=Local/answer@default&app=${APP}&channelId=made-once`))!;
    assert.equal(created.id, 'made-once');
    await expectError('POST', `/channels/create?endpoint=Local/answer@default&app=${APP}&channelId=made-once`, 409, inUse);
    await ok('DELETE', '/channels/made-once');
    await ok('DELETE', `/channels/${one}`);
  });

  test('not in Stasis: the ;2 half running the dialplan', async () => {
    const { one, two } = await answeredPair('dialplan-half');
    for (const [method, path] of [
      ['POST', '/answer'],
      ['POST', '/hold'],
      ['POST', '/dtmf?dtmf=1'],
      ['POST', '/continue'],
      ['POST', '/move?app=x'],
      ['POST', '/mute'],
      ['POST', '/ring'],
      ['POST', '/redirect?endpoint=Local/x@default'],
      ['POST', '/variable?variable=X&value=1'],
    ] as const) {
      await expectError(method, `/channels/${two}${path}`, 409, NOT_IN_STASIS);
    }
    await expectError('POST', `/channels/${two}/variables`, 409, NOT_IN_STASIS, { variables: { X: '1' } });
    await expectError('POST', `/channels/${two}/dial`, 409, NOT_IN_STASIS);
    // Reading needs no Stasis, and the half can be looked up by name too.
    const name = (await ok('GET', `/channels/${two}`))!.name as string;
    assert.deepEqual(await ok('GET', `/channels/${encodeURIComponent(name)}/variable?variable=CHANNEL(name)`), { value: name });
    // Dialing a channel that was not made by create.
    await expectError('POST', `/channels/${one}/dial`, 409, "Channel is not in the 'Down' state");
    await ok('DELETE', `/channels/${one}`);
  });
});

describe('412 on an outbound channel that has not answered', () => {
  test('a created channel is Down until dialed; then it answers and control works', async () => {
    const created = (await ok('POST', `/channels/create?endpoint=Local/answer@default&app=${APP}&appArgs=made&channelId=downer`))!;
    assert.equal(created.state, 'Down');
    const start = await eventFor('StasisStart', 'downer');
    assert.deepEqual(start.args, ['made']);
    assert.equal(start.channel.state, 'Down');
    for (const [method, path] of [
      ['POST', '/answer'],
      ['POST', '/hold'],
      ['DELETE', '/hold'],
      ['POST', '/dtmf?dtmf=1'],
      ['POST', '/ring'],
      ['DELETE', '/ring'],
      ['POST', '/progress'],
      ['POST', '/mute'],
      ['DELETE', '/mute'],
      ['POST', '/continue'],
      ['POST', '/redirect?endpoint=Local/x@default'],
    ] as const) {
      await expectError(method, `/channels/downer${path}`, 412, BAD_STATE);
    }
    // Operations that need no answered channel work while Down.
    await ok('POST', '/channels/downer/variable?variable=EARLY&value=1');
    await ok('POST', '/channels/downer/move?app=' + APP);
    await eventFor('StasisStart', 'downer');

    await ok('POST', '/channels/downer/dial?timeout=5');
    const dialing = await eventFor('Dial', 'downer');
    assert.equal(dialing.dialstatus, '');
    assert.equal(dialing.dialstring, 'answer@default');
    const answered = await eventFor('Dial', 'downer');
    assert.equal(answered.dialstatus, 'ANSWER');
    await expectError('POST', '/channels/downer/dial', 409, "Channel is not in the 'Down' state");
    await ok('POST', '/channels/downer/answer');
    await ok('POST', '/channels/downer/hold');
    await ok('DELETE', '/channels/downer');
  });

  test('dial: an originator that does not exist is ignored by create; caller identity is inherited', async () => {
    const { one } = await answeredPair('caller-leg');
    await ok('POST', `/channels/${one}/variable?variable=__INHERIT&value=yes`);
    await ok('POST', `/channels/${one}/variable?variable=CALLERID(all)&value=${encodeURIComponent('"Dee" <555>')}`);
    await ok('POST', `/channels/create?endpoint=Local/answer@default&app=${APP}&channelId=callee&originator=ghost`);
    await ok('POST', `/channels/callee/dial?caller=${one}`);
    await eventFor('Dial', 'callee');
    const callee = (await ok('GET', '/channels/callee'))!;
    assert.deepEqual(callee.connected, { name: 'Dee', number: '555' });
    assert.deepEqual(await ok('GET', '/channels/callee/variable?variable=INHERIT'), { value: 'yes' });
    await ok('DELETE', '/channels/callee');
    await ok('DELETE', `/channels/${one}`);
  });
});

describe('422 redirect', () => {
  test('another technology, a bad form, a technology that cannot redirect', async () => {
    const { one } = await answeredPair('redirected');
    await expectError('POST', `/channels/${one}/redirect?endpoint=PJSIP/alice`, 422, "Endpoint technology 'PJSIP' does not match channel technology 'Local'");
    await expectError('POST', `/channels/${one}/redirect?endpoint=nonsense`, 422, "Endpoint parameter 'nonsense' does not contain tech/resource");
    await expectError('POST', `/channels/${one}/redirect?endpoint=Local/`, 422, "No resource provided in endpoint parameter 'Local/'");
    await expectError('POST', `/channels/${one}/redirect?endpoint=local/elsewhere@default`, 422, "Channel technology 'Local' cannot redirect");
    await expectError('POST', `/channels/${one}/redirect?endpoint=`, 400, /endpoint/);
    await ok('DELETE', `/channels/${one}`);
  });
});

describe('400', () => {
  test('hangup: bad reason, reason with reason_code, bad reason_code; a numeric cause works', async () => {
    const { one } = await answeredPair('hangups');
    await expectError('DELETE', `/channels/${one}?reason=bogus`, 400, /reason/);
    await expectError('DELETE', `/channels/${one}?reason=busy&reason_code=17`, 400, "The reason and reason_code can't both be specified");
    await expectError('DELETE', `/channels/${one}?reason_code=abc`, 400, 'Invalid reason for hangup reason code provided');
    await ok('DELETE', `/channels/${one}?reason_code=21`);
    const destroyed = await eventFor('ChannelDestroyed', one);
    assert.equal(destroyed.cause, 21);
    assert.equal(destroyed.cause_txt, 'Call Rejected');
  });

  test('originate: missing or malformed endpoint, no app nor extension, formats with originator, bad values', async () => {
    const { one } = await answeredPair('originator');
    const cases: [string, string | RegExp, unknown?][] = [
      [`/channels?app=${APP}`, /endpoint/],
      [`/channels?endpoint=nonsense&app=${APP}`, 'Invalid endpoint specified'],
      [`/channels?endpoint=Local/&app=${APP}`, 'Invalid endpoint specified'],
      [`/channels?endpoint=Bogus/thing&app=${APP}`, /Unknown channel technology/],
      ['/channels?endpoint=Local/answer@default', 'Application or extension must be specified'],
      [`/channels?endpoint=Local/answer@default&app=${APP}&formats=ulaw&originator=${one}`, "Originator and formats can't both be specified"],
      [`/channels?endpoint=Local/answer@default&app=${APP}&formats=ulaw,bogus`, 'Provided format (bogus) was not found'],
      [`/channels?endpoint=Local/answer@default&app=${APP}&originator=ghost`, 'Provided originator channel was not found'],
      ['/channels?endpoint=Local/answer@default&extension=target&context=labels&priority=0', 'Requested priority is illegal'],
      ['/channels?endpoint=Local/answer@default&extension=target&context=labels&label=0', 'Requested priority is illegal'],
      [`/channels?endpoint=Local/answer@default&app=${APP}&channelId=${'x'.repeat(150)}`, 'Uniqueid length exceeds maximum of 149'],
      [`/channels?endpoint=Local/answer@default&app=${APP}&otherChannelId=${'x'.repeat(150)}`, 'Uniqueid length exceeds maximum of 149'],
      [`/channels?endpoint=Local/answer@default&app=${APP}&timeout=soon`, /timeout/],
      [`/channels?endpoint=Local/answer@default&app=${APP}`, "Each value in 'variables' must be a string or an object with 'value' and optional 'report_events'", { variables: { A: 1 } }],
      [`/channels?endpoint=Local/answer@default&app=${APP}`, "Each object value in 'variables' must include string field 'value'", { variables: { A: { value: 1 } } }],
      [`/channels?endpoint=Local/answer@default&app=${APP}`, "Field 'report_events' in 'variables' entries must be boolean", { variables: { A: { value: 'x', report_events: 'yes' } } }],
      [`/channels?endpoint=Local/answer@default&app=${APP}`, "The 'variables' field must be a JSON object", { variables: ['A'] }],
      [`/channels/create?endpoint=Local/answer@default&app=${APP}&formats=ulaw&originator=${one}`, "Originator and formats can't both be specified"],
      [`/channels/create?endpoint=Local/answer@default&app=${APP}&formats=mp3`, 'Provided format (mp3) was not found'],
      [`/channels/create?endpoint=Local&app=${APP}`, 'Invalid endpoint specified'],
      ['/channels/create?endpoint=Local/answer@default', /app/],
    ];
    const before = server.allChannels().length;
    for (const [path, message, body] of cases) await expectError('POST', path, 400, message, body);
    // A rejected request leaves nothing behind.
    assert.equal(server.allChannels().length, before);
    // Known formats are accepted, any case, spaces trimmed.
    const withFormats = (await ok('POST', `/channels?endpoint=Local/answer@default&app=${APP}&formats=${encodeURIComponent('ulaw, ALAW,slin16,g722,opus')}`))!;
    await eventFor('StasisStart', withFormats.id);
    await ok('DELETE', `/channels/${withFormats.id}`);
    await ok('DELETE', `/channels/${one}`);
  });

  test('a function that cannot be written in the body variables: 400 and the channel is gone', async () => {
    const before = server.allChannels().length;
    await expectError('POST', `/channels?endpoint=Local/answer@default&app=${APP}`, 400, /CHANNEL\(name\) cannot be written/, { variables: { 'CHANNEL(name)': 'x' } });
    assert.equal(server.allChannels().length, before);
  });

  test('dtmf, variables and mute: empty dtmf, unknown functions, bad bodies, bad direction', async () => {
    const { one } = await answeredPair('params');
    await expectError('POST', `/channels/${one}/dtmf`, 400, 'DTMF is required');
    await expectError('POST', `/channels/${one}/dtmf?dtmf=`, 400, 'DTMF is required');
    await expectError('GET', `/channels/${one}/variable?variable=`, 400, /variable/);
    await expectError('GET', `/channels/${one}/variable?variable=NOSUCH(thing)`, 400, 'Unable to read provided function');
    // Names are read in order: an empty one after a readable one is 400, an unset one first is 404.
    await expectError('GET', `/channels/${one}/variables?variables=CHANNEL,,B`, 400, 'Variable names are required');
    await expectError('POST', `/channels/${one}/variable?variable=`, 400, /variable/);
    await expectError('POST', `/channels/${one}/variable?variable=CHANNEL(name)&value=x`, 400, /^Failed to execute function/);
    await expectError('POST', `/channels/${one}/variable?variable=NOSUCH(thing)&value=x`, 400, /^Failed to execute function/);
    await expectError('POST', `/channels/${one}/variables`, 400, /variables/, {});
    await expectError('POST', `/channels/${one}/variables`, 400, "The 'variables' field must be a JSON object", { variables: ['X'] });
    await expectError('POST', `/channels/${one}/variables`, 400, "Each object value in 'variables' must include string field 'value'", { variables: { X: {} } });
    await expectError('POST', `/channels/${one}/mute?direction=sideways`, 400, /direction/);
    await expectError('POST', `/channels/${one}/move`, 400, /app/);
    await ok('DELETE', `/channels/${one}`);
  });
});

describe('origination details', () => {
  test('timeout: a call nobody answers is hung up with no-answer after the timeout (Dial NOANSWER)', async () => {
    const channel = (await ok('POST', `/channels?endpoint=Local/slow@default&app=${APP}&timeout=1`))!;
    const started = Date.now();
    assert.equal((await eventFor('Dial', channel.id)).dialstatus, '');
    const dial = await eventFor('Dial', channel.id, 3000);
    assert.equal(dial.dialstatus, 'NOANSWER');
    const destroyed = await eventFor('ChannelDestroyed', channel.id);
    assert.equal(destroyed.cause, 19);
    assert.ok(Date.now() - started >= 800, 'about a second');
    assert.equal(server.channel(channel.id), undefined);
  });

  test('create into an application that is not registered: 200, then the channel is hung up', async () => {
    const created = (await ok('POST', '/channels/create?endpoint=Local/answer@default&app=nobody&channelId=orphan'))!;
    assert.equal(created.id, 'orphan');
    assert.equal(server.channel('orphan'), undefined);
  });

  test('originate into an application that is not registered: the channel is hung up once answered', async () => {
    const channel = (await ok('POST', '/channels?endpoint=Local/answer@default&app=ghost-app'))!;
    const deadline = Date.now() + 15_000;
    while (server.channel(channel.id) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(server.channel(channel.id), undefined);
  });

  test('a user event can name a channel as its source', async () => {
    const { one } = await answeredPair('user-event');
    await ok('POST', `/events/user/doorbell?application=${APP}&source=channel:${one}`, { variables: { floor: '3' } });
    const event = (await events.nextOfType('ChannelUserevent')) as Json;
    assert.equal(event.eventname, 'doorbell');
    assert.deepEqual(event.userevent, { floor: '3', eventname: 'doorbell' });
    assert.equal(event.channel.id, one);
    await ok('DELETE', `/channels/${one}`);
  });

  test('originate into the dialplan by label, with a caller id, once answered', async () => {
    const all = await server.events('app=watcher');
    await ok('POST', '/applications/watcher/subscription?eventSource=channel:');
    const channel = (await ok('POST', '/channels?endpoint=Local/answer@default&extension=target&context=labels&label=entry&callerId=5551234'))!;
    assert.deepEqual(channel.caller, { name: '', number: '5551234' });
    let created = false;
    for (;;) {
      const event = (await all.next(3000)) as Json;
      if (event.type === 'ChannelCreated' && event.channel.id === channel.id) created = true;
      // AppDial2 (ast_dial's mark, which Asterisk reports too) comes first; the dialplan's own step follows.
      if (event.type === 'ChannelDialplan' && event.channel.id === channel.id && event.dialplan_app !== 'AppDial2') {
        assert.ok(created, 'ChannelCreated came first');
        assert.equal(event.dialplan_app, 'NoOp');
        assert.equal(event.dialplan_app_data, 'labelled');
        assert.deepEqual(event.channel.dialplan, { context: 'labels', exten: 'target', priority: 2, app_name: 'NoOp', app_data: 'labelled' });
        assert.equal(event.channel.state, 'Up');
        break;
      }
    }
    assert.deepEqual(await ok('GET', `/channels/${channel.id}/variable?variable=CALLERID(num)`), { value: '5551234' });
    await ok('DELETE', `/channels/${channel.id}`);
    await all.close();
  });
});

describe('leaks', () => {
  test('after everything is hung up the core is empty and no application holds a dead channel', async () => {
    // Let background hangups finish.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(server.allChannels().map((channel) => channel.name), []);
    for (const app of server.core.applications.list()) assert.deepEqual(app.snapshot().channel_ids, [], app.name);
    assert.deepEqual(await ok('GET', '/channels'), []);
    assert.equal(server.logLines.filter((line) => line.includes('does not match')).length, 0);
    assert.equal(events.messages.filter((message) => message.error !== undefined).length, 0);
  });
});
