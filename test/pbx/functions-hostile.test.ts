// Every dialplan function, read and written with hostile arguments and values (as a dialplan
// author, or an ARI client through getChannelVar/setChannelVar, may give them): a function refuses
// with InvalidError (a 400 over ARI, nothing substituted in a dialplan) or answers, never throws
// anything else (a 500 over ARI, a failed dialplan step) and never takes long.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { Core } from '../../src/control/core.ts';
import { InvalidError, NotFoundError } from '../../src/core/errors.ts';
import { FUNCTIONS_WITH_OUTSIDE_EFFECTS, readChannelFunction, writeChannelFunction } from '../../src/pbx/function-registry.ts';
import { cpuMs } from '../helpers/cpu-time.ts';

const HOSTILE_ATOMS = [
  '',
  '-1',
  '-5',
  '0',
  '-2147483649',
  '99999999999999999999999',
  '1e308',
  'NaN',
  'Infinity',
  '__proto__',
  'constructor',
  'toString',
  '%.*f',
  '%.*g',
  '%.*e',
  '%*d',
  '%.4096f',
  '(((((',
  ')))',
  '[[[',
  '[z-a]',
  '\\',
  '|',
  '"',
  "'",
  '?:',
  '~',
  '/',
  '../../etc/passwd',
  '*',
  '^',
  'a'.repeat(5000),
  '\u0000',
  '\uD800',
];

/** Argument strings: each atom alone, then in the positions of a comma-separated argument list. */
function hostileArguments(): string[] {
  const list = new Set<string>();
  for (const atom of HOSTILE_ATOMS) {
    list.add(atom);
    list.add(`${atom},${atom}`);
    list.add(`${atom},-5,1`);
    list.add(`x,${atom}`);
    list.add(`x,${atom},${atom}`);
    list.add(`${atom},${atom},${atom},${atom}`);
  }
  return [...list];
}

let dir: string;
let core: Core;
let serial = 0;

function newChannel(): Channel {
  serial++;
  return core.channels.create({
    name: `Test/hostile-${String(serial).padStart(8, '0')}`,
    technology: 'Test',
    direction: 'inbound',
    state: 'Up',
    caller: { name: 'Alice', number: '2001' },
    location: { context: 'default', exten: '100', priority: 1 },
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-functions-hostile-'));
  const file = join(dir, 'extensions.conf');
  writeFileSync(file, '[default]\nexten => 100,1,NoOp()\n');
  const config = loadConfig({ path: null, env: {}, overrides: { dirs: { data: dir }, logging: { console: false }, dialplan: { file } } });
  core = new Core({ config, log: pino({ level: 'silent' }), manualClock: true });
  await core.start();
});

after(async () => {
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `action`; returns a description of what went wrong (an unexpected throw, a slow call), else undefined. */
function misbehaviour(what: string, action: () => unknown): string | undefined {
  let thrown: unknown;
  const ms = cpuMs(() => {
    try {
      action();
    } catch (error) {
      thrown = error;
    }
  });
  if (thrown !== undefined && !(thrown instanceof InvalidError) && !(thrown instanceof NotFoundError)) return `${what} threw ${(thrown as Error)?.name}: ${(thrown as Error)?.message}`;
  return ms > 250 ? `${what} took ${ms.toFixed(0)} ms of CPU` : undefined;
}

test('every dialplan function refuses or answers hostile arguments; none throws anything but InvalidError', () => {
  const problems: string[] = [];
  const names = core.functions.names().filter((name) => !FUNCTIONS_WITH_OUTSIDE_EFFECTS.has(name));
  assert.ok(names.length > 50, `the registry lists ${names.length} functions`);
  const args = hostileArguments();
  for (const name of names) {
    const channel = newChannel();
    for (const arg of args) {
      const read = misbehaviour(`${name}(${JSON.stringify(arg).slice(0, 40)}) read`, () => readChannelFunction(channel, name, arg));
      if (read) problems.push(read);
    }
    for (const arg of args) {
      for (const value of ['', '-1', 'a'.repeat(5000), '__proto__', '99999999999999999999999']) {
        if (channel.hangingUp) break;
        const written = misbehaviour(`${name}(${JSON.stringify(arg).slice(0, 40)})=${JSON.stringify(value).slice(0, 20)} write`, () => writeChannelFunction(channel, name, arg, value));
        if (written) problems.push(written);
        // ARI's setGlobalVar writes a function without a channel.
        const global = misbehaviour(`${name}(${JSON.stringify(arg).slice(0, 40)})=${JSON.stringify(value).slice(0, 20)} global write`, () => core.functions.writeWithoutChannel(name, arg, value));
        if (global) problems.push(global);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('SPRINTF takes a negative * precision as none, RAND keeps bounds beyond its range ordered, URIENCODE encodes a lone surrogate', () => {
  const channel = newChannel();
  assert.equal(readChannelFunction(channel, 'SPRINTF', '%.*f,-5,1.5'), '1.500000');
  assert.equal(readChannelFunction(channel, 'SPRINTF', '%.*g,-5,1.5'), '1.5');
  assert.equal(readChannelFunction(channel, 'SPRINTF', '%.*f,2,1.5'), '1.50');
  assert.equal(readChannelFunction(channel, 'RAND', '-2147483649,-2147483650'), '-2147483647');
  assert.equal(readChannelFunction(channel, 'RAND', '99999999999,99999999999'), '2147483647');
  assert.equal(readChannelFunction(channel, 'URIENCODE', 'a\uD800b'), 'a%EF%BF%BDb');
});

test('DEVICE_STATE() refuses a Custom: name longer than 255 characters (a dialplan may build it from a caller\'s data)', () => {
  const channel = newChannel();
  assert.throws(() => writeChannelFunction(channel, 'DEVICE_STATE', `Custom:${'n'.repeat(5000)}`, 'INUSE'), InvalidError);
  assert.equal(readChannelFunction(channel, 'DEVICE_STATE', `Custom:${'n'.repeat(5000)}`), 'UNKNOWN');
  writeChannelFunction(channel, 'DEVICE_STATE', `Custom:${'n'.repeat(248)}`, 'INUSE');
  assert.equal(readChannelFunction(channel, 'DEVICE_STATE', `Custom:${'n'.repeat(248)}`), 'INUSE');
});
