// Every dialplan application run with hostile arguments (as `${VAR}` substitution can hand it any
// bytes a caller or an ARI client put in a variable): no application fails with an exception (the
// executor would log "dialplan execution failed" and hang up with cause 38), none leaves an
// unhandled rejection, and nothing is written outside the server's directories.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { Core } from '../../src/control/core.ts';

let dir: string;
let canary: string;
let core: Core;
let serial = 0;
const failures: string[] = [];
const rejections: unknown[] = [];
const onRejection = (reason: unknown): void => void rejections.push(reason);

function hostileArguments(): string[] {
  const atoms = [
    '', '-1', '0', '99999999999999999999', '1e308', 'NaN', '__proto__', 'constructor', '(', ')', '((((', '[', '"', '\\', '|',
    '?', ':', '$[1/0]', 'a'.repeat(5000), '\uD800', `../../../../../../../..${canary}/escaped`, `${canary}/absolute.wav`,
    `../../../../../../../..${canary}/escaped.wav`, 'x.wav/../../..', 'r(../../x.wav)t(/etc/x.wav)a', 'i(__proto__)', 'tone:1000/99999999',
  ];
  const list = new Set<string>();
  for (const atom of atoms) {
    list.add(atom);
    list.add(`${atom},${atom}`);
    list.add(`x,${atom},${atom},${atom},${atom},${atom}`);
  }
  return [...list];
}

let names: string[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-apps-hostile-'));
  canary = mkdtempSync(join(tmpdir(), 'patchbay-apps-canary-'));
  process.on('unhandledRejection', onRejection);
  const file = join(dir, 'extensions.conf');
  const configOf = () => loadConfig({ path: null, env: {}, overrides: { dirs: { data: join(dir, 'data') }, logging: { console: false }, dialplan: { file } } });
  // A first core names the applications; the dialplan then gives each a context where `${FZ}` hands it the hostile text.
  writeFileSync(file, '[default]\nexten => 100,1,NoOp()\n');
  const probe = new Core({ config: configOf(), log: pino({ level: 'silent' }) });
  names = probe.pbx.applicationNames().filter((name) => !/^(Stasis|StasisBroadcast)$/.test(name));
  const dialplan = names.map((name, i) => `[fz${i}]\nexten => s,1,${name}(\${FZ})\n same => n,Hangup()\n`).join('\n');
  writeFileSync(file, `[default]\nexten => 100,1,NoOp()\n${dialplan}`);
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.includes('dialplan execution failed')) failures.push(line.slice(0, 600));
      done();
    },
  });
  core = new Core({ config: configOf(), log: pino({ level: 'error' }, lines) });
  await core.start();
  // The application a channel last ran, from its ChannelDialplan events: once it returns the
  // snapshot shows the application before it again (pbx_exec's restore).
  core.applications.register('apps-hostile-watch', {
    deliver: (_app, event) => {
      if (event.type === 'ChannelDialplan' && event.channel) lastRun.set(event.channel.id, { appName: event.dialplan_app, appData: event.dialplan_app_data });
    },
  }, true);
});

after(async () => {
  process.off('unhandledRejection', onRejection);
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(canary, { recursive: true, force: true });
});

function newChannel(): Channel {
  serial++;
  return core.channels.create({
    name: `Test/apps-hostile-${String(serial).padStart(8, '0')}`,
    technology: 'Test',
    direction: 'inbound',
    state: 'Up',
    caller: { name: 'Mallory', number: '666' },
    location: { context: 'default', exten: '100', priority: 1 },
  });
}

const lastRun = new Map<string, { appName: string; appData: string }>();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('every dialplan application with hostile arguments: no exception, no unhandled rejection, nothing written outside', { timeout: 110_000 }, async () => {
  assert.ok(names.length > 40, `${names.length} applications`);
  const args = hostileArguments();
  for (const [i, name] of names.entries()) {
    const channels: Channel[] = [];
    for (const arg of args) {
      const channel = newChannel();
      channel.setVariable('FZ', arg);
      channel.setLocation({ context: `fz${i}`, exten: 's', priority: 1 });
      core.pbx.start(channel);
      channels.push(channel);
    }
    await sleep(60);
    for (const channel of channels) if (!channel.hangingUp) channel.hangup(16);
    await sleep(20);
    // Each channel reached the application (its data is the hostile text).
    for (const [k, channel] of channels.entries()) {
      const ran = lastRun.get(channel.id) ?? { appName: '', appData: '' };
      assert.equal(ran.appName.toLowerCase() === name.toLowerCase() || ran.appName === 'Hangup', true, `${name}: ${ran.appName}`);
      if (ran.appName.toLowerCase() === name.toLowerCase()) assert.equal(ran.appData, args[k]);
    }
    if (failures.length > 0) break;
  }
  await sleep(200);
  assert.deepEqual(failures, []);
  assert.deepEqual(rejections.map(String), []);
  assert.deepEqual(readdirSync(canary), [], 'nothing was written outside the server directories');
});

test('MixMonitor with an unknown format makes no directories in the recordings directory', async () => {
  const index = names.indexOf('MixMonitor');
  assert.ok(index >= 0);
  const channel = newChannel();
  channel.setVariable('FZ', 'made/by/caller/x.nope');
  channel.setLocation({ context: `fz${index}`, exten: 's', priority: 1 });
  core.pbx.start(channel);
  await sleep(100);
  if (!channel.hangingUp) channel.hangup(16);
  await sleep(50);
  assert.equal(existsSync(join(dir, 'data', 'recordings', 'made')), false);
});
