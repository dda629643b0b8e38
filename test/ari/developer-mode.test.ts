// Developer mode: responses and events that drift from their declared models are caught.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { Dispatcher } from '../../src/ari/dispatcher.ts';
import { AriError, defineHandlers } from '../../src/ari/handler.ts';
import { SERVED_RESOURCES } from '../../src/ari/resources.ts';
import { loadConfig } from '../../src/config/config.ts';
import { ariResourceModuleName } from '../../src/core/builtin-modules.ts';
import { Core } from '../../src/control/core.ts';
import { NotFoundError } from '../../src/core/errors.ts';
import { formatAriDate } from '../../src/util/ari-date.ts';
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

test('an operation answering a status it does not declare fails loudly in developer mode', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-devmode-'));
  const config = loadConfig({ path: null, env: {}, overrides: { dirs: { data: dataDir }, logging: { console: false } } });
  const core = new Core({ config, log: pino({ level: 'silent' }) });
  await core.start();
  try {
    const logged: Array<{ operation?: string; status?: number }> = [];
    const log = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line) as { operation?: string; status?: number }) });
    // ping declares no error; getGlobalVar declares 400. An undeclared 404 from the core, a teapot from the handler.
    const handlers = defineHandlers('asterisk', {
      ping: () => {
        throw new NotFoundError('Nothing here');
      },
      getGlobalVar: (params) => {
        if (params.variable === 'TEAPOT') throw new AriError(418, "I'm a teapot");
        if (params.variable === 'EMPTY') throw new AriError(400, 'No variable name given');
        throw new AriError(501, 'Not implemented: getGlobalVar');
      },
    });
    const build = (developerMode: boolean): Dispatcher =>
      new Dispatcher({ core, log, resources: SERVED_RESOURCES, handlers: new Map([['asterisk', handlers]]), developerMode, moduleOf: ariResourceModuleName });
    const request = { method: 'GET', query: new URLSearchParams(), user: config.ari.users[0], transport: 'http' as const };
    const variable = (name: string) => ({ ...request, path: '/asterisk/variable', query: new URLSearchParams({ variable: name }) });
    const checked = build(true);

    const ping = await checked.dispatch({ ...request, path: '/asterisk/ping' });
    assert.equal(ping.status, 500);
    assert.equal((ping.json as { message: string }).message, 'asterisk.ping answered 404: undeclared status');
    const teapot = await checked.dispatch(variable('TEAPOT'));
    assert.equal(teapot.status, 500);
    assert.match((teapot.json as { message: string }).message, /answered 418: undeclared status/);
    assert.deepEqual(logged.map((entry) => [entry.operation, entry.status]), [['ping', 404], ['getGlobalVar', 418]]);

    // Declared statuses and the implicit ones (501, the parameter parser's 400) pass.
    assert.equal((await checked.dispatch(variable('EMPTY'))).status, 400);
    assert.equal((await checked.dispatch(variable('OTHER'))).status, 501);
    assert.equal((await checked.dispatch({ ...request, path: '/asterisk/variable' })).status, 400, 'missing required parameter');
    // Without developer mode the undeclared status goes out as it is.
    assert.equal((await build(false).dispatch({ ...request, path: '/asterisk/ping' })).status, 404);
  } finally {
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
