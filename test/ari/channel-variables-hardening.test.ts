// Variable names and values that users choose are data, never object keys: names that are members
// of Object.prototype (`toString`, `__proto__`, `constructor`, `hasOwnProperty`) work like any other
// name on channels, bridges and globals, in originate/create bodies and in the dialplan; and names,
// values and bodies are bounded (400 beyond).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inheritFromCaller } from '../../src/core/channels/inherit.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const APP = 'vars-app';
// The documented bounds (src/core/variable-limits.ts), written out so the test states them.
const MAX_VARIABLE_NAME_LENGTH = 255;
const MAX_VARIABLE_VALUE_LENGTH = 65536;
const MAX_VARIABLES_PER_REQUEST = 512;
const MAX_CHANNEL_VARIABLES = 4096;
const MAX_GLOBAL_VARIABLES = 16384;
const PROTO_NAMES = ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

const DIALPLAN = `
[vars]
exten => wait,1,Wait(30)
exten => s,1,Set(toString=\${constructor}|\${hasOwnProperty}|\${__proto__}|\${CHANNEL(toString)}|\${toString})
 same => n,Set(RESULT=\${toString})
 same => n,Hangup(constructor)
exten => fill,1,Set(RESULT=start)
 same => n,Set(N=0)
 same => n(top),Set(V\${N}=x)
 same => n,Set(N=$[\${N} + 1])
 same => n,GotoIf($[\${N} < 4200]?top)
 same => n,Set(V0=updated)
 same => n,Set(RESULT=\${V0}|\${V4100}|\${N})
 same => n,Hangup()
exten => globals,1,Set(RESULT=start)
 same => n,Set(GLOBAL(G_FROM_DIALPLAN)=x)
 same => n,Set(GLOBAL(G0)=updated)
 same => n,Set(RESULT=\${GLOBAL(G_FROM_DIALPLAN)}|\${GLOBAL(G0)})
 same => n,Hangup()
`;

type Json = Record<string, any>;

let server: TestServer;
let events: EventSocket;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-vars-'));
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') }, ari: { channelvars: ['toString', '__proto__'] } });
  events = await server.events(`app=${APP}`);
});

after(async () => {
  await events?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json | undefined }> {
  const response = await server.ari(path, {
    method,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : undefined };
}

/** A channel in the application (made by /channels/create, so no dialplan runs). */
async function created(body?: unknown): Promise<Json> {
  const result = await call('POST', `/channels/create?endpoint=Local/nowhere@vars&app=${APP}`, body);
  assert.equal(result.status, 200, JSON.stringify(result.body));
  return result.body!;
}

describe('variable names that are Object.prototype members', () => {
  test('set and read on a channel, one at a time and several at once', async () => {
    const channel = await created();
    for (const name of PROTO_NAMES) {
      const unset = await call('GET', `/channels/${channel.id}/variable?variable=${encodeURIComponent(name)}`);
      assert.equal(unset.status, 404, `${name} unset: ${JSON.stringify(unset.body)}`);
      const set = await call('POST', `/channels/${channel.id}/variable?variable=${encodeURIComponent(name)}&value=v-${name}`);
      assert.equal(set.status, 204, `${name}: ${JSON.stringify(set.body)}`);
      const read = await call('GET', `/channels/${channel.id}/variable?variable=${encodeURIComponent(name)}`);
      assert.deepEqual(read, { status: 200, body: { value: `v-${name}` } }, name);
    }
    const query = `variables=${PROTO_NAMES.map(encodeURIComponent).join(',')}`;
    const several = await call('GET', `/channels/${channel.id}/variables?${query}`);
    assert.equal(several.status, 200, JSON.stringify(several.body));
    assert.deepEqual(Object.entries(several.body!.variables), PROTO_NAMES.map((name) => [name, `v-${name}`]));
    // Snapshots carry the configured channelvars, __proto__ included.
    const snapshot = await call('GET', `/channels/${channel.id}`);
    assert.equal(snapshot.status, 200, JSON.stringify(snapshot.body));
    assert.deepEqual(Object.entries(snapshot.body!.channelvars), [['toString', 'v-toString'], ['__proto__', 'v-__proto__']]);
    assert.equal((await call('DELETE', `/channels/${channel.id}`)).status, 204);
  });

  test('a CHANNEL() field named like a prototype member is an unknown field (400), not a crash', async () => {
    const channel = await created();
    for (const name of ['CHANNEL(toString)', 'CHANNEL(constructor)', 'CALLERID(__proto__)', 'toString(x)']) {
      const read = await call('GET', `/channels/${channel.id}/variable?variable=${encodeURIComponent(name)}`);
      assert.equal(read.status, 400, `${name}: ${JSON.stringify(read.body)}`);
    }
    assert.equal((await call('DELETE', `/channels/${channel.id}`)).status, 204);
  });

  test('originate and create bodies with such names set them', async () => {
    const body = '{"variables": {"__proto__": "x", "toString": "y", "constructor": {"value": "z", "report_events": true}}}';
    const channel = await created(body);
    for (const [name, value] of [['__proto__', 'x'], ['toString', 'y'], ['constructor', 'z']]) {
      const read = await call('GET', `/channels/${channel.id}/variable?variable=${name}`);
      assert.deepEqual(read, { status: 200, body: { value } }, name);
    }
    assert.equal((await call('DELETE', `/channels/${channel.id}`)).status, 204);

    const originated = await call('POST', `/channels?endpoint=Local/wait@vars&app=${APP}&timeout=5`, body);
    assert.equal(originated.status, 200, JSON.stringify(originated.body));
    const read = await call('GET', `/channels/${originated.body!.id}/variable?variable=__proto__`);
    assert.deepEqual(read, { status: 200, body: { value: 'x' } });
    assert.equal((await call('DELETE', `/channels/${originated.body!.id}`)).status, 204);
  });

  test('the dialplan reads and writes them like any other name', async () => {
    const channel = server.core.channels.request('Local/s@vars');
    const two = channel.peer!;
    channel.setVariable('__proto__', 'inherited');
    const done = new Promise<void>((resolve) => two.once('hangup', () => resolve()));
    channel.driver.call();
    await done;
    // Unset names expand to nothing; CHANNEL(toString) is unknown; the Hangup cause name is unknown (normal clearing).
    assert.equal(two.getVariable('RESULT'), '||inherited||');
    assert.equal(two.hangupCause, 16);
  });

  test('bridge and global variables', async () => {
    const bridge = await call('POST', '/bridges');
    assert.equal(bridge.status, 200);
    for (const name of PROTO_NAMES) {
      assert.equal((await call('GET', `/bridges/${bridge.body!.id}/variable?variable=${name}`)).status, 404, name);
      assert.equal((await call('POST', `/bridges/${bridge.body!.id}/variable?variable=${name}&value=b-${name}`)).status, 204, name);
      assert.deepEqual(await call('GET', `/bridges/${bridge.body!.id}/variable?variable=${name}`), { status: 200, body: { value: `b-${name}` } });
      assert.equal((await call('POST', `/asterisk/variable?variable=${name}&value=g-${name}`)).status, 204, name);
      assert.deepEqual(await call('GET', `/asterisk/variable?variable=${name}`), { status: 200, body: { value: `g-${name}` } });
    }
    const query = `variables=${PROTO_NAMES.map(encodeURIComponent).join(',')}`;
    const several = await call('GET', `/bridges/${bridge.body!.id}/variables?${query}`);
    assert.equal(several.status, 200, JSON.stringify(several.body));
    assert.deepEqual(Object.entries(several.body!.variables), PROTO_NAMES.map((name) => [name, `b-${name}`]));
    assert.equal((await call('DELETE', `/bridges/${bridge.body!.id}`)).status, 204);
  });
});

describe('variable bounds', () => {
  const longName = 'N'.repeat(MAX_VARIABLE_NAME_LENGTH + 1);
  const longValue = 'v'.repeat(MAX_VARIABLE_VALUE_LENGTH + 1);

  test('setChannelVar: name and value length', async () => {
    const channel = await created();
    const atName = await call('POST', `/channels/${channel.id}/variable?variable=${'N'.repeat(MAX_VARIABLE_NAME_LENGTH)}&value=1`);
    assert.equal(atName.status, 204);
    const name = await call('POST', `/channels/${channel.id}/variable?variable=${longName}&value=1`);
    assert.equal(name.status, 400);
    assert.match(name.body!.message, /name.*255/);
    const value = await call('POST', `/channels/${channel.id}/variable`, undefined);
    assert.equal(value.status, 400); // variable is required
    const big = await server.ari(`/channels/${channel.id}/variable`, {
      method: 'POST',
      body: new URLSearchParams({ variable: 'BIG', value: longValue }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(big.status, 400);
    assert.match(((await big.json()) as Json).message, /value.*65536/);
    const getLong = await call('GET', `/channels/${channel.id}/variable?variable=${longName}`);
    assert.equal(getLong.status, 400);
    assert.equal((await call('DELETE', `/channels/${channel.id}`)).status, 204);
  });

  test('bodies: too many variables, a name or a value too long', async () => {
    const before = server.allChannels().length;
    const many = Object.fromEntries(Array.from({ length: MAX_VARIABLES_PER_REQUEST + 1 }, (_, i) => [`V${i}`, 'x']));
    for (const body of [{ variables: many }, { variables: { [longName]: 'x' } }, { variables: { OK: { value: longValue } } }]) {
      for (const path of [`/channels/create?endpoint=Local/nowhere@vars&app=${APP}`, `/channels?endpoint=Local/nowhere@vars&app=${APP}`]) {
        const result = await call('POST', path, body);
        assert.equal(result.status, 400, `${path}: ${JSON.stringify(result.body).slice(0, 200)}`);
        assert.match(result.body!.message, /variables|name|value/);
      }
    }
    assert.equal(server.allChannels().length, before, 'nothing was created');
    const exactly = Object.fromEntries(Array.from({ length: MAX_VARIABLES_PER_REQUEST }, (_, i) => [`V${i}`, 'x']));
    const channel = await created({ variables: exactly });
    const setMany = await call('POST', `/channels/${channel.id}/variables`, { variables: many });
    assert.equal(setMany.status, 400);
    assert.equal((await call('DELETE', `/channels/${channel.id}`)).status, 204);
  });

  test('global variables', async () => {
    assert.equal((await call('POST', `/asterisk/variable?variable=${longName}&value=1`)).status, 400);
    assert.equal((await call('GET', `/asterisk/variable?variable=${longName}`)).status, 400);
  });
});

describe('how many variables a channel and the server hold', () => {
  test('ARI: a channel takes variables up to 4096; a new one beyond is 400, an existing one is still updated and unset, a body is all or nothing', async () => {
    const channel = await created();
    const held = server.channel(channel.id)!;
    const batch = (from: number, count: number, value = 'x') => Object.fromEntries(Array.from({ length: count }, (_, i) => [`F${from + i}`, value]));
    // Fill with bodies of 512, then one at a time up to the bound (the channel may hold a few of its own).
    let made = 0;
    while (held.variableCount + MAX_VARIABLES_PER_REQUEST <= MAX_CHANNEL_VARIABLES) {
      assert.equal((await call('POST', `/channels/${channel.id}/variables`, { variables: batch(made, MAX_VARIABLES_PER_REQUEST) })).status, 204);
      made += MAX_VARIABLES_PER_REQUEST;
    }
    while (held.variableCount < MAX_CHANNEL_VARIABLES) {
      assert.equal((await call('POST', `/channels/${channel.id}/variable?variable=F${made}&value=x`)).status, 204);
      made += 1;
    }
    const refused = await call('POST', `/channels/${channel.id}/variable?variable=ONE_MORE&value=x`);
    assert.equal(refused.status, 400);
    assert.match(refused.body!.message, /Too many variables.*4096/);
    assert.equal((await call('GET', `/channels/${channel.id}/variable?variable=ONE_MORE`)).status, 404);
    // Updating one that exists still works.
    assert.equal((await call('POST', `/channels/${channel.id}/variable?variable=F0&value=changed`)).status, 204);
    assert.equal((await call('GET', `/channels/${channel.id}/variable?variable=F0`)).body!.value, 'changed');
    // A body with updates and one new name: refused whole, the updates not applied.
    const mixed = await call('POST', `/channels/${channel.id}/variables`, { variables: { F1: 'changed', F2: 'changed', ANOTHER: 'x' } });
    assert.equal(mixed.status, 400);
    assert.equal((await call('GET', `/channels/${channel.id}/variable?variable=F1`)).body!.value, 'x');
    assert.equal((await call('POST', `/channels/${channel.id}/variables`, { variables: { F1: 'changed', F2: 'changed' } })).status, 204);
    // Unsetting one makes room for a new one.
    assert.equal((await call('POST', `/channels/${channel.id}/variable?variable=F3`)).status, 204);
    assert.equal((await call('POST', `/channels/${channel.id}/variable?variable=ONE_MORE&value=x`)).status, 204);
    assert.equal(held.variableCount, MAX_CHANNEL_VARIABLES);
    assert.equal((await call('DELETE', `/channels/${channel.id}`)).status, 204);
  });

  test('dialplan: Set() of a new variable on a full channel is refused with a warning and the dialplan goes on; updates work', async () => {
    const channel = server.core.channels.request('Local/fill@vars');
    const two = channel.peer!;
    const done = new Promise<void>((resolve) => two.once('hangup', () => resolve()));
    channel.driver.call();
    await done;
    // V0..V4200 were set in a loop: the ones beyond the bound were refused, the loop and the rest ran.
    assert.equal(two.getVariable('RESULT'), 'updated||4200');
    assert.equal(two.variableCount, MAX_CHANNEL_VARIABLES);
  });

  test('inheritance: a new channel takes the caller\'s _/__ variables only up to the bound', () => {
    const caller = server.core.channels.request('Local/nowhere@vars');
    const callee = server.core.channels.request('Local/nowhere@vars');
    try {
      for (let i = 0; caller.variableCount < MAX_CHANNEL_VARIABLES; i++) caller.setVariable(`__I${i}`, 'x');
      for (let i = 0; i < 10; i++) callee.setVariable(`OWN${i}`, 'x');
      inheritFromCaller(callee, caller);
      assert.equal(callee.variableCount, MAX_CHANNEL_VARIABLES);
      assert.equal(callee.getVariable('OWN9'), 'x');
      assert.equal(callee.getVariable('__I0'), 'x');
    } finally {
      caller.hangup();
      callee.hangup();
    }
  });

  test('globals: up to 16384; a new one beyond is 400 over ARI and refused by GLOBAL() in the dialplan; existing ones still change', async () => {
    const filled: string[] = [];
    try {
      const existing = Object.keys(server.core.globalVars.list()).length;
      for (let i = 0; existing + i < MAX_GLOBAL_VARIABLES; i++) {
        server.core.globalVars.set(`G${i}`, 'x');
        filled.push(`G${i}`);
      }
      const refused = await call('POST', '/asterisk/variable?variable=ONE_MORE_GLOBAL&value=x');
      assert.equal(refused.status, 400);
      assert.match(refused.body!.message, /Too many global variables.*16384/);
      assert.equal((await call('POST', '/asterisk/variable?variable=G1&value=changed')).status, 204);
      assert.equal((await call('GET', '/asterisk/variable?variable=G1')).body!.value, 'changed');

      const channel = server.core.channels.request('Local/globals@vars');
      const two = channel.peer!;
      const done = new Promise<void>((resolve) => two.once('hangup', () => resolve()));
      channel.driver.call();
      await done;
      assert.equal(two.getVariable('RESULT'), '|updated');
      assert.equal(Object.keys(server.core.globalVars.list()).length, MAX_GLOBAL_VARIABLES);
    } finally {
      for (const name of filled) server.core.globalVars.set(name, undefined);
    }
  });
});
