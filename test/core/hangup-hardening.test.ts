// The channel lifecycle under load and misuse: hanging up a chain of any length without recursion
// (one DELETE, and shutdown), a dialplan that dials itself through Local stopping at
// local_max_depth, max_channels refusing originate/create/Dial() beyond it (a Local pair counts
// two), and a 'hangup' listener that throws not leaving the channel behind.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { DeepPartialYaml } from '../../src/config/config.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { cpuMsDuring } from '../helpers/cpu-time.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const DIALPLAN = `
[chain]
; Each ;2 dials the next extension through Local until the last, which waits.
exten => _XXXX,1,GotoIf($[\${EXTEN} >= \${CHAIN_END}]?last)
 same => n,Dial(Local/$[\${EXTEN} + 1]@chain)
 same => n(last),Wait(600)

[loop]
exten => s,1,Dial(Local/s@loop)
 same => n,Set(LOOP_STATUS=\${DIALSTATUS})

[limits]
exten => wait,1,Wait(600)
exten => dialer,1,Dial(Local/wait@limits)
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Wait(600)
`;

type Json = Record<string, any>;

const started: { server: TestServer; dir: string }[] = [];

async function start(overrides: DeepPartialYaml = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-hangup-'));
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  const server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') }, ...overrides });
  started.push({ server, dir });
  return server;
}

async function stop(server: TestServer): Promise<void> {
  const index = started.findIndex((entry) => entry.server === server);
  const [{ dir }] = started.splice(index, 1);
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

after(async () => {
  for (const { server, dir } of started.splice(0)) {
    await server.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});

async function call(server: TestServer, method: string, path: string): Promise<{ status: number; body: Json | undefined }> {
  const response = await server.ari(path, { method });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : undefined };
}

/** Polls until `done` holds, failing after `timeoutMs`. */
async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const CHAIN_START = 1000;
const CHAIN_PAIRS = 1100;

/** Originates Local/1000@chain, which dials on through 1,100 Local pairs; resolves with the root once all exist. */
async function buildChain(server: TestServer): Promise<string> {
  server.core.globalVars.set('CHAIN_END', String(CHAIN_START + CHAIN_PAIRS - 1));
  const origination = await call(server, 'POST', `/channels?endpoint=Local/${CHAIN_START}@chain&extension=wait&context=limits&timeout=-1`);
  assert.equal(origination.status, 200, JSON.stringify(origination.body));
  await until(`${CHAIN_PAIRS} Local pairs`, () => server.core.channels.size >= 2 * CHAIN_PAIRS, 30_000);
  assert.equal(server.core.channels.size, 2 * CHAIN_PAIRS);
  return String(origination.body!.id);
}

describe('hanging up without recursion', () => {
  test('a chain of 1,100 unanswered Local dials is hung up by one DELETE', async (t) => {
    const server = await start({ local_max_depth: 0, local_max_descendants: 0 });
    const root = await buildChain(server);
    const destroyed = new Set<string>();
    server.core.channels.onDestroyed((channel) => destroyed.add(channel.id));
    const began = performance.now();
    // Bounded in work done (CPU), which other processes loading the machine do not inflate.
    const { cpuMs, result } = await cpuMsDuring(() => call(server, 'DELETE', `/channels/${root}`));
    const tookMs = performance.now() - began;
    assert.equal(result.status, 204, JSON.stringify(result.body));
    assert.equal(server.core.channels.size, 0, 'every channel of the chain is gone when DELETE answers');
    assert.equal(destroyed.size, 2 * CHAIN_PAIRS);
    assert.ok(cpuMs < 10_000, `DELETE took ${cpuMs.toFixed(0)} ms of CPU`);
    t.diagnostic(`DELETE of the root of ${2 * CHAIN_PAIRS} channels took ${tookMs.toFixed(0)} ms (${cpuMs.toFixed(0)} ms of CPU)`);
    await stop(server);
  });

  test('shutting down a server holding such a chain succeeds', async () => {
    const server = await start({ local_max_depth: 0, local_max_descendants: 0 });
    await buildChain(server);
    const channels = server.core.channels;
    await stop(server);
    assert.equal(channels.size, 0);
  });
});

describe('local_max_depth', () => {
  test('a dialplan that dials itself through Local stops at the depth limit and hangs up cleanly', async (t) => {
    const server = await start();
    assert.equal(server.config.localMaxDepth, 20, 'the default');
    let peak = 0;
    let created = 0;
    const statuses = new Map<number, string | undefined>();
    server.core.channels.onCreated(() => {
      created++;
      peak = Math.max(peak, server.core.channels.size);
    });
    server.core.channels.onDestroyed((channel: Channel) => {
      if (channel.name.endsWith(';2')) statuses.set(channel.localDepth, channel.getVariable('LOOP_STATUS'));
    });
    const began = performance.now();
    // The loop's work is bounded in CPU (a loaded machine does not inflate it); the wait is generous.
    const { cpuMs } = await cpuMsDuring(async () => {
      const origination = await call(server, 'POST', '/channels?endpoint=Local/s@loop&extension=wait&context=limits');
      assert.equal(origination.status, 200);
      await until('the loop to end', () => created > 0 && server.core.channels.size === 0, 30_000);
    });
    const tookMs = performance.now() - began;
    assert.equal(created, 2 * 20, 'one Local pair per level, 20 levels');
    assert.equal(peak, 2 * 20);
    // The deepest ;2 could not dial on: CHANUNAVAIL; every level above it saw its leg hang up.
    assert.equal(statuses.get(20), 'CHANUNAVAIL');
    assert.equal(statuses.size, 20);
    assert.ok(cpuMs < 5000, `the loop took ${cpuMs.toFixed(0)} ms of CPU`);
    t.diagnostic(`the self-dialling loop made ${created} channels (peak ${peak}) and was gone after ${tookMs.toFixed(0)} ms (${cpuMs.toFixed(0)} ms of CPU)`);
    await stop(server);
  });

  test('the limit is configurable, and ARI requests beyond it are refused with 503', async () => {
    const server = await start({ local_max_depth: 3 });
    let created = 0;
    server.core.channels.onCreated(() => created++);
    const origination = await call(server, 'POST', '/channels?endpoint=Local/s@loop&extension=wait&context=limits');
    assert.equal(origination.status, 200);
    await until('the loop to end', () => created > 0 && server.core.channels.size === 0, 5000);
    assert.equal(created, 2 * 3);

    // An originator at the limit's depth cannot originate a deeper Local channel.
    const deep = server.core.channels.request('Local/wait@limits');
    deep.localDepth = 3;
    const refused = await call(server, 'POST', `/channels?endpoint=Local/wait@limits&app=x&originator=${deep.id}`);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.match(refused.body!.message, /local_max_depth/);
    deep.hangup();
    await stop(server);
  });
});

describe('max_channels', () => {
  test('originate, originate with id and create are refused with 503 beyond the limit; a Local pair counts two', async () => {
    const server = await start({ max_channels: 50 });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      statuses.push((await call(server, 'POST', '/channels?endpoint=Local/wait@limits&app=limited')).status);
    }
    assert.deepEqual(statuses, [...Array(25).fill(200), ...Array(5).fill(503)]);
    assert.equal(server.core.channels.size, 50);
    const refused = await call(server, 'POST', '/channels/chosen-id?endpoint=Local/wait@limits&app=limited');
    assert.deepEqual(refused, { status: 503, body: { message: 'Maximum number of channels (50) reached' } });
    assert.equal((await call(server, 'POST', '/channels/create?endpoint=Local/wait@limits&app=limited')).status, 503);
    assert.equal(server.core.channels.size, 50, 'nothing half-made');
    // Room again once channels go.
    const one = server.core.channels.list()[0];
    assert.equal((await call(server, 'DELETE', `/channels/${one.id}`)).status, 204);
    assert.equal(server.core.channels.size, 48);
    assert.equal((await call(server, 'POST', '/channels/create?endpoint=Local/wait@limits&app=limited')).status, 200);
    await stop(server);
  });

  test('Dial() beyond the limit fails with DIALSTATUS=CHANUNAVAIL; /dial of a created channel is not refused', async () => {
    const server = await start({ max_channels: 3 });
    const events = await server.events('app=limited');
    const origination = await call(server, 'POST', '/channels?endpoint=Local/dialer@limits&app=limited&otherChannelId=dialer-2');
    assert.equal(origination.status, 200);
    await until('Dial() to give up', () => server.core.channels.get('dialer-2')?.getVariable('RESULT') !== undefined, 3000);
    assert.deepEqual(await call(server, 'GET', '/channels/dialer-2/variable?variable=RESULT'), { status: 200, body: { value: 'CHANUNAVAIL' } });
    assert.equal(server.core.channels.size, 2);
    assert.equal((await call(server, 'DELETE', `/channels/${origination.body!.id}`)).status, 204);

    // A created pair was counted when it was made; dialing it makes no channel.
    const createdPair = await call(server, 'POST', '/channels/create?endpoint=Local/wait@limits&app=limited');
    assert.equal(createdPair.status, 200);
    assert.equal((await call(server, 'POST', `/channels/${createdPair.body!.id}/dial`)).status, 204);
    // One place is left: a snoop fits, a second does not.
    assert.equal((await call(server, 'POST', `/channels/${createdPair.body!.id}/snoop?app=limited&spy=in`)).status, 200);
    assert.equal((await call(server, 'POST', `/channels/${createdPair.body!.id}/snoop?app=limited&spy=in`)).status, 503);
    await events.close();
    await stop(server);
  });
});

describe('listeners that throw', () => {
  test("a throwing 'hangup' listener does not leave the channel behind, and the others still run", async () => {
    const server = await start();
    const channel = server.core.channels.request('Local/wait@limits');
    const partner = channel.peer!;
    let laterListenerRan = false;
    channel.on('hangup', () => {
      throw new Error('listener bug');
    });
    channel.on('hangup', () => {
      laterListenerRan = true;
    });
    partner.on('hangup', () => {
      throw new Error('partner listener bug');
    });
    const result = await call(server, 'DELETE', `/channels/${channel.id}`);
    assert.equal(result.status, 204, JSON.stringify(result.body));
    assert.ok(laterListenerRan);
    assert.ok(channel.destroyed && partner.destroyed);
    assert.equal(server.core.channels.get(channel.id), undefined);
    assert.equal(server.core.channels.size, 0);
    const logged = server.logLines.filter((line) => line.includes('listener bug'));
    assert.equal(logged.length, 2, 'each failure is logged');
    assert.match(logged[0], /'hangup' listener failed/);
    await stop(server);
  });

  test('a throwing channel-destroyed listener does not stop the others', async () => {
    const server = await start();
    const seen: string[] = [];
    server.core.channels.onDestroyed(() => {
      throw new Error('destroyed listener bug');
    });
    server.core.channels.onDestroyed((channel) => seen.push(channel.id));
    const channel = server.core.channels.request('Local/wait@limits');
    channel.hangup();
    assert.deepEqual(seen.sort(), [channel.id, channel.peer!.id].sort());
    assert.equal(server.core.channels.size, 0);
    await stop(server);
  });
});
