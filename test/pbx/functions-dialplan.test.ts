// Dialplan functions as a user meets them: a Local channel originated over ARI runs a dialplan
// that sets variables through functions, the values are read back with getChannelVar, an astdb
// counter grows with each call and survives a restart of the server on the same data directory,
// and a Custom: device set by the dialplan reaches the apps subscribed to it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const DIALPLAN = `
[funcs]
exten => hinted,hint,Custom:fn-desk
exten => start,1,Set(CALLS=$[0\${DB(counters/calls)} + 1])
 same => n,Set(DB(counters/calls)=\${CALLS})
 same => n,Set(PARTS=a-b-c)
 same => n,Set(SECOND=\${CUT(PARTS,-,2)})
 same => n,Set(CALLERID(name)=\${TOUPPER(func test)})
 same => n,Set(HASH(h,k)=hv)
 same => n,Set(ARRAY(A1,A2)=one,two)
 same => n,Set(PADDED=\${SPRINTF(%05d,\${LEN(\${PARTS})})})
 same => n,Set(WHEN=\${STRFTIME(0,UTC,%Y-%m-%d)})
 same => n,Set(GLOBAL(FN_G)=\${MATH(6*7,i)})
 same => n,Set(CHECK=\${IF($[\${DB(counters/calls)} > 0]?counted:not)})
 same => n,Set(DEVICE_STATE(Custom:fn-desk)=INUSE)
 same => n,Set(ESTATE=\${EXTENSION_STATE(hinted@funcs)})
 same => n,Set(NOPE(x)=ignored)
 same => n,Set(AFTER_NOPE=still running)
 same => n,Set(DB(tmp/a)=1)
 same => n,Set(DB(tmp/b/c)=2)
 same => n,Set(DB(tmp2/x)=3)
 same => n,Set(DB(tmp2/y)=4)
 same => n,DBdel(tmp2/x)
 same => n,DBdeltree(tmp)
 same => n,Set(LEFT=\${DB_KEYS(tmp)}|\${DB_KEYS(tmp2)})
 same => n,Stasis(fn-done)
`;

let dir: string;
let dialplanFile: string;
let dataDir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-fn-dialplan-'));
  dialplanFile = join(dir, 'extensions.conf');
  dataDir = join(dir, 'data');
  writeFileSync(dialplanFile, DIALPLAN);
});

after(() => rmSync(dir, { recursive: true, force: true }));

const start = (): Promise<TestServer> => startTestServer({ dialplan: { file: dialplanFile } }, { dataDir });

async function getVar(server: TestServer, channelId: string, variable: string): Promise<string> {
  const response = await server.ari(`/channels/${channelId}/variable?variable=${encodeURIComponent(variable)}`);
  const body = (await response.json()) as { value?: string; message?: string };
  assert.equal(response.status, 200, `${variable}: ${body.message}`);
  return body.value!;
}

type Event = Record<string, unknown>;

/**
 * Originates Local/start@funcs; resolves once its `;2` half has run the dialplan into
 * Stasis(fn-done), with the events seen on the way.
 */
async function call(server: TestServer, events: EventSocket, id: string): Promise<{ id: string; seen: Event[] }> {
  const response = await server.ari(`/channels/${id}?endpoint=Local/start@funcs&app=fn-caller&otherChannelId=${id}-2`, { method: 'POST' });
  assert.equal(response.status, 200);
  const seen: Event[] = [];
  for (;;) {
    const event = await events.next(5000);
    seen.push(event);
    if (event.type === 'StasisStart' && (event.channel as { id: string }).id === `${id}-2`) return { id: `${id}-2`, seen };
  }
}

describe('functions in a dialplan run by a Local channel', () => {
  test('Set() with functions, read back over ARI; the astdb counter survives a restart', async () => {
    let server = await start();
    try {
      // Every function this dialplan uses is known to the load-time check, but the deliberate NOPE().
      const warnings = server.logLines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level >= 40);
      assert.deepEqual(
        warnings.map((entry) => entry.msg.replace(dialplanFile, 'extensions.conf')),
        [
          "extensions.conf:17: unknown function 'NOPE'",
          'extensions.conf: 1 unknown function (NOPE); a call reaching an unknown application hangs up, an unknown function reads as empty',
        ],
      );
      const events = await server.events('app=fn-caller,fn-done');
      const subscribed = await server.ari('/applications/fn-done/subscription?eventSource=deviceState:Custom:fn-desk', { method: 'POST' });
      assert.equal(subscribed.status, 200);

      const { id: first, seen } = await call(server, events, 'fn-a');
      assert.equal(await getVar(server, first, 'CALLS'), '1');
      assert.equal(await getVar(server, first, 'SECOND'), 'b');
      assert.equal(await getVar(server, first, 'CALLERID(name)'), 'FUNC TEST');
      assert.equal(await getVar(server, first, 'HASH(h,k)'), 'hv');
      assert.equal(await getVar(server, first, 'A2'), 'two');
      assert.equal(await getVar(server, first, 'PADDED'), '00005');
      assert.equal(await getVar(server, first, 'WHEN'), '1970-01-01');
      assert.equal(await getVar(server, first, 'GLOBAL(FN_G)'), '42');
      assert.equal(await getVar(server, first, 'CHECK'), 'counted');
      assert.equal(await getVar(server, first, 'ESTATE'), 'INUSE');
      assert.equal(await getVar(server, first, 'AFTER_NOPE'), 'still running', 'a refused function write does not end the call');
      assert.equal(await getVar(server, first, 'DB(counters/calls)'), '1');
      assert.equal(await getVar(server, first, 'LEFT'), '|y', 'DBdel and DBdeltree removed their entries');
      const global = await server.ari('/asterisk/variable?variable=FN_G');
      assert.deepEqual(await global.json(), { value: '42' });

      const changes = seen.filter((event) => event.type === 'DeviceStateChanged').map((event) => event.device_state);
      assert.deepEqual(changes, [{ name: 'Custom:fn-desk', state: 'INUSE' }], 'the subscribed app hears of the Custom: device');

      const { id: second } = await call(server, events, 'fn-b');
      assert.equal(await getVar(server, second, 'CALLS'), '2');

      // setChannelVar writes the astdb too.
      const put = await server.ari(`/channels/${second}/variable?variable=${encodeURIComponent('DB(people/alice)')}&value=100`, { method: 'POST' });
      assert.equal(put.status, 204);
      // So does setGlobalVar, as Asterisk's pbx_builtin_setvar_helper does for a function name.
      const global2 = await server.ari(`/asterisk/variable?variable=${encodeURIComponent('DB(people/bob)')}&value=7`, { method: 'POST' });
      assert.equal(global2.status, 204);
      const needsChannel = await server.ari(`/asterisk/variable?variable=${encodeURIComponent('CALLERID(num)')}&value=7`, { method: 'POST' });
      assert.equal(needsChannel.status, 400);
      assert.match(((await needsChannel.json()) as { message: string }).message, /needs a channel/);
      await events.close();
    } finally {
      await server.stop();
    }

    server = await start();
    try {
      const events = await server.events('app=fn-caller,fn-done');
      const { id: third } = await call(server, events, 'fn-c');
      assert.equal(await getVar(server, third, 'CALLS'), '3', 'the counter went on from the data of the first server');
      assert.equal(await getVar(server, third, 'DB(counters/calls)'), '3');
      assert.equal(await getVar(server, third, 'DB(people/alice)'), '100');
      assert.equal(await getVar(server, third, 'DB(people/bob)'), '7');
      assert.equal(await getVar(server, third, 'DEVICE_STATE(Custom:fn-desk)'), 'INUSE', 'Custom: device states persist too');
      const unknown = await server.ari(`/channels/${third}/variable?variable=${encodeURIComponent('SHELL(ls)')}`);
      assert.equal(unknown.status, 400);
      await events.close();
    } finally {
      await server.stop();
    }
  });
});
