// The server-management subsystems as the core wires them: modules switching the SQLite
// configuration backend, file objects from the configuration, start/stop.
import { strict as assert } from 'node:assert';
import { pjsipConfigTypes } from '../../src/channels/pjsip/config/store-types.ts';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { toAriError } from '../../src/ari/core-errors.ts';
import { ARI_RESOURCE_NAMES, ariResourceModuleName, MODULE_NAMES } from '../../src/core/builtin-modules.ts';
import { Core } from '../../src/control/core.ts';
import { ConflictError, ForbiddenError, InvalidError, NotFoundError, StateError, UnprocessableError } from '../../src/core/errors.ts';

describe('Core server management', () => {
  let dataDir: string;
  let core: Core;

  function makeCore(): Core {
    const config = loadConfig({
      path: null,
      env: {},
      overrides: {
        dirs: { data: dataDir },
        logging: { console: false },
        config_objects: { res_pjsip: { endpoint: { alice: { context: 'from-file' } } } },
      },
    });
    // The res_pjsip types, as the server hands them over (the core itself knows no technology).
    return new Core({ config, log: pino({ level: 'silent' }), configTypes: pjsipConfigTypes() });
  }

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-core-'));
    core = makeCore();
    await core.start();
  });

  afterEach(async () => {
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs every built-in module after start', () => {
    for (const resource of ARI_RESOURCE_NAMES) assert.equal(core.modules.isRunning(ariResourceModuleName(resource)), true);
    for (const name of Object.values(MODULE_NAMES)) assert.equal(core.modules.isRunning(name), true, name);
    assert.equal(ariResourceModuleName('deviceStates'), 'res_ari_device_states.so');
    assert.equal(core.modules.get('res_ari_channels.so').description, 'ARI resource: channels');
  });

  it('res_ari.so cannot be unloaded', async () => {
    await assert.rejects(core.modules.unload(MODULE_NAMES.ari), ConflictError);
  });

  it('unloading the SQLite configuration module makes writes forbidden until it is loaded again', async () => {
    core.dynamicConfig.update('res_pjsip', 'endpoint', 'bob');
    await core.modules.unload(MODULE_NAMES.sqliteConfig);
    assert.throws(() => core.dynamicConfig.update('res_pjsip', 'endpoint', 'carol'), ForbiddenError);
    assert.throws(() => core.dynamicConfig.delete('res_pjsip', 'endpoint', 'bob'), ForbiddenError);
    await core.modules.load(MODULE_NAMES.sqliteConfig);
    core.dynamicConfig.delete('res_pjsip', 'endpoint', 'bob');
  });

  it('keeps dynamic objects in <data>/patchbay.sqlite across restarts, and serves file objects read-only', async () => {
    assert.ok(existsSync(join(dataDir, 'patchbay.sqlite')));
    core.dynamicConfig.update('res_pjsip', 'aor', 'bob', [{ attribute: 'max_contacts', value: '2' }]);
    await core.stop();
    core = makeCore();
    await core.start();
    assert.deepEqual(core.dynamicConfig.get('res_pjsip', 'aor', 'bob')[0], { attribute: 'max_contacts', value: '2' });
    assert.deepEqual(core.dynamicConfig.get('res_pjsip', 'endpoint', 'alice')[0], { attribute: 'context', value: 'from-file' });
    assert.throws(() => core.dynamicConfig.delete('res_pjsip', 'endpoint', 'alice'), ForbiddenError);
  });

  it('opens messages.log in the logs directory', () => {
    assert.deepEqual(core.logChannels.list().map((c) => c.channel), ['messages.log']);
    assert.ok(existsSync(join(core.config.dirs.logs, 'messages.log')));
  });

  it('a module reload counts as a system reload', async () => {
    const before = core.lastReloadAt;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await core.modules.reload(MODULE_NAMES.ari);
    assert.ok(core.lastReloadAt > before);
  });
});

describe('toAriError', () => {
  it('maps each core error kind to its ARI status and keeps the message', () => {
    const cases = [
      [new NotFoundError('a'), 404],
      [new ConflictError('b'), 409],
      [new ForbiddenError('c'), 403],
      [new InvalidError('d'), 400],
      [new UnprocessableError('e'), 422],
      [new StateError('f'), 412],
    ] as const;
    for (const [error, status] of cases) {
      const ariError = toAriError(error);
      assert.equal(ariError?.status, status);
      assert.equal(ariError?.message, error.message);
    }
    assert.equal(toAriError(new Error('plain')), undefined);
    assert.equal(toAriError('text'), undefined);
  });
});
