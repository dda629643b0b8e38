import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { ConflictError, NotFoundError } from '../../src/core/errors.ts';
import { ModuleRegistry, type ModuleChange, type ModuleDefinition } from '../../src/core/modules.ts';

function fakeModule(name: string, overrides: Partial<ModuleDefinition> = {}) {
  const calls: string[] = [];
  const definition: ModuleDefinition = {
    name,
    description: `Test module ${name}`,
    supportLevel: 'extended',
    load: () => void calls.push('load'),
    unload: () => void calls.push('unload'),
    reload: () => void calls.push('reload'),
    ...overrides,
  };
  return { definition, calls };
}

describe('ModuleRegistry', () => {
  it('lists registered modules as Not Running until loaded, then Running', async () => {
    const registry = new ModuleRegistry();
    const { definition, calls } = fakeModule('res_test.so');
    registry.register(definition);
    assert.deepEqual(registry.list(), [
      { name: 'res_test.so', description: 'Test module res_test.so', use_count: 0, status: 'Not Running', support_level: 'extended' },
    ]);
    assert.equal(registry.isRunning('res_test.so'), false);

    await registry.load('res_test.so');
    assert.deepEqual(calls, ['load']);
    assert.equal(registry.isRunning('res_test.so'), true);
    assert.equal(registry.get('res_test.so').status, 'Running');
    assert.equal(registry.list()[0].status, 'Running');
  });

  it('accepts names without the .so suffix', async () => {
    const registry = new ModuleRegistry();
    registry.register(fakeModule('res_test.so').definition);
    await registry.load('res_test');
    assert.equal(registry.isRunning('res_test'), true);
    assert.equal(registry.get('res_test').name, 'res_test.so');
  });

  it('get: unknown or not loaded → NotFoundError', async () => {
    const registry = new ModuleRegistry();
    registry.register(fakeModule('res_test.so').definition);
    assert.throws(() => registry.get('res_nope.so'), NotFoundError);
    assert.throws(() => registry.get('res_test.so'), NotFoundError);
  });

  it('load: unknown → ConflictError "Module could not be loaded"; loaded → "Module is already loaded"', async () => {
    const registry = new ModuleRegistry();
    registry.register(fakeModule('res_test.so').definition);
    await assert.rejects(registry.load('res_nope.so'), (e) => e instanceof ConflictError && e.message === 'Module could not be loaded');
    await registry.load('res_test.so');
    await assert.rejects(registry.load('res_test.so'), (e) => e instanceof ConflictError && e.message === 'Module is already loaded');
  });

  it('load: a failing load leaves the module Not Running and reports a conflict', async () => {
    const registry = new ModuleRegistry();
    registry.register(fakeModule('res_broken.so', { load: () => Promise.reject(new Error('boom')) }).definition);
    await assert.rejects(registry.load('res_broken.so'), ConflictError);
    assert.equal(registry.isRunning('res_broken.so'), false);
  });

  it('unload: stops a running module; not loaded → NotFoundError', async () => {
    const registry = new ModuleRegistry();
    const { definition, calls } = fakeModule('res_test.so');
    registry.register(definition);
    await assert.rejects(registry.unload('res_test.so'), NotFoundError);
    await assert.rejects(registry.unload('res_nope.so'), NotFoundError);
    await registry.load('res_test.so');
    await registry.unload('res_test.so');
    assert.deepEqual(calls, ['load', 'unload']);
    assert.equal(registry.isRunning('res_test.so'), false);
    assert.equal(registry.list()[0].status, 'Not Running');
    await assert.rejects(registry.unload('res_test.so'), NotFoundError);
  });

  it('unload: refused (ConflictError) when the module cannot be unloaded or is in use', async () => {
    const registry = new ModuleRegistry();
    let users = 2;
    registry.register(fakeModule('res_core.so', { canUnload: () => false }).definition);
    registry.register(fakeModule('res_busy.so', { useCount: () => users }).definition);
    await registry.loadAll();
    await assert.rejects(registry.unload('res_core.so'), ConflictError);
    await assert.rejects(registry.unload('res_busy.so'), ConflictError);
    assert.equal(registry.get('res_busy.so').use_count, 2);
    users = 0;
    await registry.unload('res_busy.so');
    assert.equal(registry.isRunning('res_core.so'), true);
    assert.equal(registry.isRunning('res_busy.so'), false);
  });

  it('reload: runs the module reload; not loaded → NotFoundError; no reload support → ConflictError', async () => {
    const registry = new ModuleRegistry();
    const { definition, calls } = fakeModule('res_test.so');
    registry.register(definition);
    registry.register(fakeModule('res_static.so', { reload: undefined }).definition);
    await assert.rejects(registry.reload('res_test.so'), NotFoundError);
    await assert.rejects(registry.reload('res_nope.so'), NotFoundError);
    await registry.loadAll();
    const reloaded: string[] = [];
    registry.on('reloaded', ({ name }) => reloaded.push(name));
    await registry.reload('res_test.so');
    assert.deepEqual(calls, ['load', 'reload']);
    assert.deepEqual(reloaded, ['res_test.so']);
    await assert.rejects(registry.reload('res_static.so'), ConflictError);
  });

  it('reload: a second reload while one is in progress → ConflictError', async () => {
    const registry = new ModuleRegistry();
    let finish = () => {};
    registry.register(fakeModule('res_slow.so', { reload: () => new Promise<void>((resolve) => (finish = resolve)) }).definition);
    await registry.loadAll();
    const first = registry.reload('res_slow.so');
    await assert.rejects(registry.reload('res_slow.so'), ConflictError);
    finish();
    await first;
  });

  it('emits change events on every status transition', async () => {
    const registry = new ModuleRegistry();
    registry.register(fakeModule('res_test.so').definition);
    const changes: ModuleChange[] = [];
    registry.on('change', (change) => changes.push(change));
    await registry.load('res_test.so');
    await registry.reload('res_test.so');
    await registry.unload('res_test.so');
    await registry.load('res_test.so');
    await registry.unloadAll();
    assert.deepEqual(changes, [
      { name: 'res_test.so', status: 'Running' },
      { name: 'res_test.so', status: 'Not Running' },
      { name: 'res_test.so', status: 'Running' },
      { name: 'res_test.so', status: 'Not Running' },
    ]);
  });

  it('unloadAll stops every module, core ones too, and reports failures', async () => {
    const registry = new ModuleRegistry();
    registry.register(fakeModule('res_core.so', { canUnload: () => false }).definition);
    registry.register(fakeModule('res_bad.so', { unload: () => Promise.reject(new Error('stuck')) }).definition);
    await registry.loadAll();
    const failures = await registry.unloadAll();
    assert.equal(failures.length, 1);
    assert.equal(registry.isRunning('res_core.so'), false);
    assert.equal(registry.isRunning('res_bad.so'), false);
  });

  it('refuses registering the same name twice', () => {
    const registry = new ModuleRegistry();
    registry.register(fakeModule('res_test.so').definition);
    assert.throws(() => registry.register(fakeModule('res_test').definition), ConflictError);
  });
});
