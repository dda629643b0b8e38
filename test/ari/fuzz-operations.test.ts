// A seeded fuzz test generated from the operation declarations: every declared operation is
// called with hostile values in its parameters (in the query, the JSON body or a form body, on a
// live channel and bridge as well as on unknown ids), with malformed bodies, on odd paths, and as
// upgrade requests with odd targets. Whatever is sent: no 5xx but the declared 501s, an ARI error
// body with every 4xx, the server lives, and nothing is read or written outside its directories.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SERVED_RESOURCES } from '../../src/ari/resources.ts';
import type { OperationDecl, ParamDecl } from '../../src/spec/types.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { AUTH, startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { unlessCluster } from '../helpers/cluster-server.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const CASES_PER_OPERATION = Number(process.env.FUZZ_CASES ?? 24);

const generator = seededRandom;
const random = generator(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

let server: TestServer;
let events: EventSocket;
let canary: string;

before(async () => {
  canary = mkdtempSync(join(tmpdir(), 'patchbay-canary-'));
  writeFileSync(join(canary, 'secret.raw'), Buffer.alloc(16000, 0x55));
  writeFileSync(join(canary, 'secret.wav'), Buffer.alloc(16000, 0x55));
  server = await startTestServer();
  events = await server.events('app=fuzz');
});
after(async () => {
  await events.close();
  await server.stop();
  rmSync(canary, { recursive: true, force: true });
});

function hostileValues(): string[] {
  return [
    '', ' ', '-1', '0', '2147483648', '99999999999999999999', '1e999', 'NaN', 'true',
    'x'.repeat(300), 'y'.repeat(5000), '../../etc/passwd', `${canary}/owned`, `../../../../../../../..${canary}/owned`,
    `sound:${canary}/secret`, `sound:../../../../../../..${canary}/secret`, `recording:../../../../../..${canary}/secret`,
    `digits:${'1'.repeat(5000)}`, `characters:${'a'.repeat(5000)}`, `number:${'9'.repeat(400)}`, 'tone:1000/99999999',
    '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', '\u0000', 'a\u0000b', '\ud800', 'x\udfff',
    '日本語', 'a\r\nX-Injected: 1', 'Local/x@default', 'Local/answer@default', 'PJSIP/nobody', 'a,b,,c', '"quoted,"list',
    '{}', '[]', 'null', 'Stasis:', 'channel:__proto__', 'endpoint:PJSIP/__proto__', 'bridge:', 'deviceState:Stasis:',
  ];
}

/** A value the operation would accept, so that other parameters' checks are reached. */
function plausible(decl: ParamDecl): unknown {
  if (decl.allowedValues && decl.allowedValues.length > 0) return pick(decl.allowedValues);
  switch (decl.dataType) {
    case 'int':
    case 'long':
      return decl.range?.min ?? 1;
    case 'boolean':
      return pick([true, false]);
    case 'containers':
      return decl.name === 'fields' ? [{ attribute: 'context', value: 'default' }] : { CALLERID_NAME: 'fuzz' };
    case 'object':
      return { allowed: [{ type: 'StasisStart' }] };
  }
  const byName: Record<string, string> = {
    endpoint: 'Local/answer@default',
    app: 'fuzz',
    application: 'fuzz',
    media: 'sound:beep',
    format: 'wav',
    channelId: 'fz-chan',
    bridgeId: 'fz-bridge',
    source: 'channel:fz-chan',
    to: 'pjsip:nobody',
    from: 'fuzz',
  };
  return Object.hasOwn(byName, decl.name) ? byName[decl.name] : `fz${Math.floor(random() * 1e6)}`;
}

function hostile(decl: ParamDecl, values: string[]): unknown {
  const value = pick(values);
  if (decl.dataType === 'containers') {
    return pick<unknown>([{ [value || "k"]: value }, JSON.parse(`{"__proto__": ${JSON.stringify(value)}, "constructor": 1}`), [value], value, { nested: { deep: [value] } }]);
  }
  if (decl.dataType === 'object') return pick([{ allowed: value }, { disallowed: [{ type: value }] }, value, [value]]);
  return pick([value, value, Number(value), [value, value], { value }, null]);
}

interface Case {
  method: string;
  path: string;
  contentType?: string;
  body?: string;
  label: string;
}

function generateCases(operation: OperationDecl, values: string[]): Case[] {
  const cases: Case[] = [];
  for (let n = 0; n < CASES_PER_OPERATION; n++) {
    const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
      const decl = operation.params.find((param) => param.name === name);
      const value = random() < 0.5 && decl ? String(plausible(decl)) : pick(values) || 'x';
      return encodeURIComponent(value.isWellFormed() ? value : value.toWellFormed());
    });
    const query = new URLSearchParams();
    const body: Record<string, unknown> = {};
    for (const decl of operation.params) {
      if (decl.in === 'path' || random() < 0.2) continue;
      const value = random() < 0.6 ? hostile(decl, values) : plausible(decl);
      // Query strings carry strings only; JSON bodies carry anything.
      if (decl.in === 'query' && random() < 0.5 && typeof value !== 'object') query.set(decl.name, String(value));
      else body[decl.name] = value;
    }
    const form = random() < 0.15;
    cases.push({
      method: operation.method,
      path: `${path}${query.size > 0 ? `?${query}` : ''}`,
      contentType: form ? 'application/x-www-form-urlencoded' : 'application/json',
      body: form ? new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)])).toString() : JSON.stringify(body),
      label: `${operation.nickname} #${n}`,
    });
  }
  // Malformed bodies.
  for (const [contentType, text] of [
    ['application/json', '{"unterminated": '],
    ['application/json', '[1,2,3]'],
    ['application/json', `${'['.repeat(5000)}${']'.repeat(5000)}`],
    ['application/json', '{"__proto__": {"polluted": true}, "variables": {"__proto__": "x"}}'],
    ['application/json', '"\\ud800"'],
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', '%%%&&&=%E0%A4%A&__proto__=1'],
  ] as const) {
    cases.push({ method: operation.method, path: operation.path.replace(/\{[^}]+\}/g, 'x'), contentType, body: text, label: `${operation.nickname} body ${text.slice(0, 20)}` });
  }
  return cases;
}

async function send(entry: Case): Promise<{ status: number; text: string }> {
  const response = await server.ari(entry.path, {
    method: entry.method,
    headers: entry.contentType ? { 'content-type': entry.contentType } : {},
    body: entry.method === 'GET' ? undefined : entry.body,
  });
  return { status: response.status, text: await response.text() };
}

/** A live channel in the app and a bridge, so path parameters reach real objects. */
async function resetObjects(): Promise<void> {
  for (const channel of server.allChannels()) channel.hangup(16);
  for (const bridge of server.core.bridges.list()) bridge.destroy();
  await server.ari('/channels/fz-chan?endpoint=Local/answer@default&app=fuzz&otherChannelId=fz-chan-2', { method: 'POST' });
  await server.ari('/bridges/fz-bridge?type=mixing', { method: 'POST' });
  events.messages.splice(0);
}

test('fuzz: every declared operation, hostile parameters and bodies: no 5xx but declared 501s, no crash, nothing outside', { timeout: 180_000, ...unlessCluster('thousands of requests, each forwarded over NATS: beyond its 180 s budget on a shared 2-core machine') }, async () => {
  const values = hostileValues();
  const problems: string[] = [];
  let count = 0;
  for (const resource of SERVED_RESOURCES) {
    for (const operation of resource.operations) {
      if (operation.upgrade) continue;
      await resetObjects();
      for (const entry of generateCases(operation, values)) {
        const { status, text } = await send(entry);
        count++;
        const where = `${resource.name}.${entry.label}: ${entry.method} ${entry.path.slice(0, 200)} ${String(entry.body).slice(0, 200)}`;
        if (status >= 500 && status !== 501) problems.push(`${where} → ${status} ${text.slice(0, 200)}`);
        if (status >= 400 && !/^\{"message":/.test(text)) problems.push(`${where} → ${status} without an ARI error body: ${text.slice(0, 80)}`);
        if (problems.length > 20) break;
      }
    }
  }
  await resetObjects();
  assert.deepEqual(problems, []);
  assert.ok(count >= 2000, `only ${count} cases ran`);
  process.stdout.write(`# fuzz: ${count} requests, seed ${SEED}\n`);
  assert.equal((await server.ari('/asterisk/ping')).status, 200);
  assert.deepEqual(readdirSync(canary).sort(), ['secret.raw', 'secret.wav'], 'nothing was written beside the canary files');
});

const ODD_PATHS = [
  '//asterisk/ping', '/asterisk//ping', '/channels/%2F..%2F..%2Fetc', '/channels/..', '/channels/%00', '/channels/%ED%A0%80',
  '/api-docs/../../etc/passwd', '/api-docs/__proto__.json', '/api-docs/constructor.json', '/api-docs/toString.json',
  '/events/user/%ED%A0%80?application=fuzz', '/recordings/stored/..%2F..%2Fx/file', '/sounds/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
  `/recordings/stored/${encodeURIComponent('../../../../..')}/copy?destinationRecordingName=x`, '/asterisk/logging/..%2Fx',
  '/asterisk/config/dynamic/__proto__/constructor/x', '/deviceStates/Stasis:__proto__', '/mailboxes/__proto__', '/applications/__proto__',
  '/endpoints/__proto__/__proto__', '/asterisk/variable?variable=__proto__', '/asterisk/modules/__proto__',
];

test('fuzz: odd paths with every method answer below 500 with an ARI error body', async () => {
  const problems: string[] = [];
  for (const path of ODD_PATHS) {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const response = await server.ari(path, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' || method === 'OPTIONS' ? undefined : '{}' });
      const text = await response.text();
      if (response.status >= 500 && response.status !== 501) problems.push(`${method} ${path} → ${response.status} ${text}`);
      if (response.status >= 400 && !/^\{"message":/.test(text)) problems.push(`${method} ${path} → ${response.status} ${text.slice(0, 80)}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.deepEqual(readdirSync(canary).sort(), ['secret.raw', 'secret.wav']);
});

test('fuzz: upgrade requests with odd targets and headers are refused and the server lives', async () => {
  const targets = ['//:', '//', '//x:99999', '//[', '//%', 'http://[', '/ari/events?app=%', '/ari/events?app=' + 'a'.repeat(5000), '/ari/events?app=,,,', '/ari/events?app=__proto__&subscribeAll=%', '*',
    // Resuming: hostile resumeAfter and ack values.
    ...['-1', 'NaN', '1e999', '99999999999999999999', '0x10', ' 1', 'fz-r:1,fz-r:2', 'fz-r:', ':1', '__proto__:1', 'fz-r:1,other:1', `fz-r:${'9'.repeat(400)}`, ','.repeat(1000)].map(
      (value) => `/ari/events?app=fz-r&ack=true&resumeAfter=${encodeURIComponent(value)}`,
    ),
    '/ari/events?app=fz-r,__proto__&resumeAfter=__proto__:1&ack=%', `/ari/events?app=${Array.from({ length: 300 }, (_, i) => `fz${i}`).join(',')}&ack=true`,
    // Media WebSockets: ids that were never issued.
    '/media/', '/media/x', '/media/__proto__', '/media/constructor', '/media/%00', '/media/..%2F..%2Fari%2Fevents', `/media/${'a'.repeat(5000)}`, '/media/x?y=%'];
  for (const target of targets) {
    for (const upgrade of ['x', 'websocket']) {
      for (const authorization of [undefined, AUTH, 'Basic %%%', 'Basic ' + Buffer.from('__proto__:x').toString('base64')]) {
        const lines = [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: Upgrade', `Upgrade: ${upgrade}`, 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='];
        if (authorization) lines.push(`Authorization: ${authorization}`);
        const status = await rawRequest(server.url, lines);
        assert.match(status, /^HTTP\/1\.1 (101|4\d\d) /, `${target} (${upgrade}, ${authorization ?? 'no auth'}) → "${status}"`);
      }
    }
  }
  assert.equal((await server.ari('/asterisk/ping')).status, 200);
});

test('fuzz: hostile Ack messages on an acknowledged connection are each answered 400 and change nothing', async () => {
  const acked = await server.events('app=fz-ack&ack=true');
  try {
    await server.ari('/events/user/fz?application=fz-ack', { method: 'POST' });
    const event = await acked.nextOfType('ChannelUserevent');
    assert.equal(event.sequence, 1);
    const hostileAcks: unknown[] = [
      { type: 'Ack' },
      { type: 'Ack', sequence: '1' },
      { type: 'Ack', sequence: -1 },
      { type: 'Ack', sequence: 1.5 },
      { type: 'Ack', sequence: 1e308 },
      { type: 'Ack', sequence: 2 ** 53 },
      { type: 'Ack', sequence: 2 },
      { type: 'Ack', sequence: [1] },
      { type: 'Ack', sequence: { valueOf: 1 } },
      { type: 'Ack', sequence: null },
      { type: 'Ack', application: '__proto__', sequence: 1 },
      { type: 'Ack', application: 'constructor', sequence: 1 },
      { type: 'Ack', application: 7, sequence: 1 },
      { type: 'Ack', application: ['fz-ack'], sequence: 1 },
      { type: 'Ack', application: 'x'.repeat(10_000), sequence: 1 },
    ];
    for (const message of hostileAcks) {
      acked.send(message);
      const reply = await acked.nextOfType('RESTResponse');
      assert.equal(reply.status_code, 400, JSON.stringify(message).slice(0, 80));
    }
    // Deeply nested and prototype-named fields parse as data, not as a crash.
    acked.socket.send(`{"type":"Ack","sequence":${'['.repeat(3000)}${']'.repeat(3000)}}`);
    assert.equal((await acked.nextOfType('RESTResponse')).status_code, 400);
    acked.socket.send('{"type":"Ack","__proto__":{"sequence":1},"application":"fz-ack"}');
    assert.equal((await acked.nextOfType('RESTResponse')).status_code, 400);
    assert.equal(server.core.eventLog.acked('fz-ack'), 0, 'no hostile Ack moved the acknowledged point');
    acked.send({ type: 'Ack', sequence: 1 });
    assert.deepEqual(await acked.quiet(100), [], 'a good Ack is not answered');
    assert.equal(server.core.eventLog.acked('fz-ack'), 1);
  } finally {
    await acked.close();
  }
  assert.equal((await server.ari('/asterisk/ping')).status, 200);
});
