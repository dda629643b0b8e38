// Developer mode: responses and events that drift from their declared models are caught.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { Dispatcher } from '../../src/ari/dispatcher.ts';
import { defineHandlers } from '../../src/ari/handler.ts';
import { SERVED_RESOURCES } from '../../src/ari/resources.ts';
import { loadConfig } from '../../src/config/config.ts';
import { ariResourceModuleName } from '../../src/core/builtin-modules.ts';
import { Core } from '../../src/core/core.ts';
import { formatAriDate } from '../../src/core/time.ts';
import { startTestServer } from '../helpers/server.ts';

test('a REST response that does not match its model becomes a 500 naming the field', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-devmode-'));
  const config = loadConfig({ path: null, env: {}, overrides: { dirs: { data: dataDir }, logging: { console: false } } });
  const log = pino({ level: 'silent' });
  const core = new Core({ config, log });
  await core.start();
  try {
    // A deliberately drifted handler: the ping result lacks `timestamp`, and info has a bad type.
    const drifted = defineHandlers('asterisk', {
      ping: () => ({ ping: 'pong', asterisk_id: 'x' }) as never,
      getGlobalVar: () => ({ value: 42 }) as never,
    });
    const build = (developerMode: boolean): Dispatcher =>
      new Dispatcher({
        core,
        log,
        resources: SERVED_RESOURCES,
        handlers: new Map([['asterisk', drifted]]),
        developerMode,
        moduleOf: ariResourceModuleName,
      });
    const request = { method: 'GET', query: new URLSearchParams(), user: config.ari.users[0], transport: 'http' as const };
    const checked = build(true);
    const ping = await checked.dispatch({ ...request, path: '/asterisk/ping' });
    assert.equal(ping.status, 500);
    assert.match((ping.json as { message: string }).message, /timestamp: required field missing/);
    const variable = await checked.dispatch({ ...request, path: '/asterisk/variable', query: new URLSearchParams('variable=A') });
    assert.equal(variable.status, 500);
    assert.match((variable.json as { message: string }).message, /value: expected a string/);
    // Without developer mode the same answer goes out unchecked.
    const unchecked = await build(false).dispatch({ ...request, path: '/asterisk/ping' });
    assert.equal(unchecked.status, 200);
  } finally {
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('an event that does not match its model is replaced by an error message on the WebSocket', async () => {
  const server = await startTestServer();
  try {
    const socket = await server.events('app=drift');
    // @ts-expect-error -- off its model on purpose: the compiler rejects it, the runtime check is the second line.
    server.core.applications.sendTo('drift', { type: 'DeviceStateChanged', timestamp: formatAriDate(), device_state: { name: 'x' } });
    const message = await socket.next();
    assert.equal(message.error, 'InvalidMessage');
    assert.match(String(message.details), /device_state\.state: required field missing/);
    assert.equal((message.message as { type: string }).type, 'DeviceStateChanged');
    await socket.close();
  } finally {
    await server.stop();
  }
});
