import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { databasePath, openDatabase, type SqliteDatabase } from '../../src/core/database.ts';
import { registerFileOnlyTypes } from '../../src/core/dynamic-config/builtin-types.ts';
import { registerPjsipConfigTypes } from '../../src/channels/pjsip/config/store-types.ts';
import { FileBackend, type ConfigObjectTree } from '../../src/core/dynamic-config/file-backend.ts';
import { SqliteBackend } from '../../src/core/dynamic-config/sqlite-backend.ts';
import { DynamicConfig } from '../../src/core/dynamic-config/store.ts';
import type { ConfigChange, ConfigTuple } from '../../src/core/dynamic-config/types.ts';
import { ForbiddenError, InvalidError, NotFoundError } from '../../src/core/errors.ts';

const FILE_OBJECTS: ConfigObjectTree = {
  res_pjsip: {
    endpoint: { alice: { context: 'from-file', allow: 'ulaw' } },
  },
  res_custom: {
    widget: { w1: { colour: 'red' }, w2: { size: 'L' } },
  },
};

const asRecord = (tuples: ConfigTuple[]) => Object.fromEntries(tuples.map(({ attribute, value }) => [attribute, value]));

describe('DynamicConfig', () => {
  let dataDir: string;
  let database: SqliteDatabase;
  let sqlite: SqliteBackend;
  let store: DynamicConfig;

  function openStore(): void {
    database = openDatabase(databasePath(dataDir));
    sqlite = new SqliteBackend(database);
    store = new DynamicConfig();
    const file = new FileBackend(FILE_OBJECTS);
    store.attachBackend(file);
    store.attachBackend(sqlite);
    registerPjsipConfigTypes(store);
    registerFileOnlyTypes(store, file);
  }

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-config-'));
    openStore();
  });

  afterEach(() => {
    database.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('uses WAL journaling', () => {
    assert.equal(database.pragma('journal_mode', { simple: true }), 'wal');
  });

  it('creates an object with defaults filled in, in field order, without an id tuple', () => {
    const created = store.update('res_pjsip', 'aor', 'bob', [{ attribute: 'max_contacts', value: '3' }]);
    assert.deepEqual(created, [
      { attribute: 'max_contacts', value: '3' },
      { attribute: 'remove_existing', value: 'no' },
      { attribute: 'contact', value: '' },
      { attribute: 'qualify_frequency', value: '0' },
      { attribute: 'qualify_timeout', value: '3.000000' },
      { attribute: 'default_expiration', value: '3600' },
      { attribute: 'minimum_expiration', value: '60' },
      { attribute: 'maximum_expiration', value: '7200' },
      { attribute: 'outbound_proxy', value: '' },
      { attribute: 'mailboxes', value: '' },
      { attribute: 'voicemail_extension', value: '' },
      { attribute: 'remove_unavailable', value: 'no' },
      { attribute: 'qualify_2xx_only', value: 'no' },
      { attribute: 'authenticate_qualify', value: 'no' },
      { attribute: 'support_path', value: 'no' },
    ]);
    assert.deepEqual(store.get('res_pjsip', 'aor', 'bob'), created);
  });

  it('creates an object without fields', () => {
    const created = store.update('res_pjsip', 'auth', 'bob-auth');
    assert.deepEqual(asRecord(created), { auth_type: 'userpass', username: '', password: '', md5_cred: '', realm: '', nonce_lifetime: '32' });
  });

  it('updates only the given fields of an existing object', () => {
    store.update('res_pjsip', 'endpoint', 'bob', [{ attribute: 'context', value: 'internal' }]);
    const updated = store.update('res_pjsip', 'endpoint', 'bob', [{ attribute: 'allow', value: 'opus' }]);
    assert.equal(asRecord(updated).context, 'internal');
    assert.equal(asRecord(updated).allow, 'opus');
    assert.equal(asRecord(updated).dtmf_mode, 'rfc4733');
  });

  it('an existing object needs fields (InvalidError)', () => {
    store.update('res_pjsip', 'endpoint', 'bob');
    assert.throws(() => store.update('res_pjsip', 'endpoint', 'bob'), InvalidError);
  });

  it('rejects unknown attributes and failing validation (InvalidError), storing nothing', () => {
    assert.throws(() => store.update('res_pjsip', 'endpoint', 'bob', [{ attribute: 'colour', value: 'red' }]), InvalidError);
    assert.throws(() => store.update('res_pjsip', 'aor', 'bob', [{ attribute: 'qualify_frequency', value: '-5' }]), InvalidError);
    assert.throws(() => store.update('res_pjsip', 'aor', 'bob', [{ attribute: 'qualify_frequency', value: 'often' }]), InvalidError);
    assert.throws(() => store.update('res_pjsip', 'auth', 'bob', [{ attribute: 'auth_type', value: 'oauth' }]), InvalidError);
    assert.throws(() => store.get('res_pjsip', 'aor', 'bob'), NotFoundError);
    assert.equal(asRecord(store.update('res_pjsip', 'auth', 'bob', [{ attribute: 'auth_type', value: 'md5' }])).auth_type, 'md5');
  });

  it('deletes objects from SQLite', () => {
    store.update('res_pjsip', 'endpoint', 'bob');
    store.delete('res_pjsip', 'endpoint', 'bob');
    assert.throws(() => store.get('res_pjsip', 'endpoint', 'bob'), NotFoundError);
    assert.throws(() => store.delete('res_pjsip', 'endpoint', 'bob'), NotFoundError);
  });

  it('keeps objects across a reopen of the store', () => {
    store.update('res_pjsip', 'endpoint', 'bob', [{ attribute: 'callerid', value: '"Bob" <100>' }]);
    store.update('res_pjsip', 'endpoint', 'carol');
    store.delete('res_pjsip', 'endpoint', 'carol');
    database.close();
    openStore();
    assert.equal(asRecord(store.get('res_pjsip', 'endpoint', 'bob')).callerid, '"Bob" <100>');
    assert.throws(() => store.get('res_pjsip', 'endpoint', 'carol'), NotFoundError);
  });

  it('reads objects of the configuration file with defaults filled in', () => {
    const alice = asRecord(store.get('res_pjsip', 'endpoint', 'alice'));
    assert.equal(alice.context, 'from-file');
    assert.equal(alice.allow, 'ulaw');
    assert.equal(alice.direct_media, 'no');
  });

  it('refuses to change or delete objects of the configuration file (ForbiddenError)', () => {
    assert.throws(() => store.update('res_pjsip', 'endpoint', 'alice', [{ attribute: 'context', value: 'x' }]), ForbiddenError);
    assert.throws(() => store.delete('res_pjsip', 'endpoint', 'alice'), ForbiddenError);
    assert.equal(asRecord(store.get('res_pjsip', 'endpoint', 'alice')).context, 'from-file');
  });

  it('registers file-only types from the configuration file: readable, never writable', () => {
    assert.deepEqual(store.get('res_custom', 'widget', 'w1'), [
      { attribute: 'colour', value: 'red' },
      { attribute: 'size', value: '' },
    ]);
    assert.throws(() => store.update('res_custom', 'widget', 'w3', [{ attribute: 'colour', value: 'blue' }]), ForbiddenError);
    assert.throws(() => store.update('res_custom', 'widget', 'w1', [{ attribute: 'colour', value: 'blue' }]), ForbiddenError);
    assert.throws(() => store.delete('res_custom', 'widget', 'w1'), ForbiddenError);
  });

  it('refuses writes while the SQLite backend is switched off, and accepts them again afterwards', () => {
    store.update('res_pjsip', 'endpoint', 'bob');
    sqlite.setWritesEnabled(false);
    assert.throws(() => store.update('res_pjsip', 'endpoint', 'carol'), ForbiddenError);
    assert.throws(() => store.update('res_pjsip', 'endpoint', 'bob', [{ attribute: 'context', value: 'x' }]), ForbiddenError);
    assert.throws(() => store.delete('res_pjsip', 'endpoint', 'bob'), ForbiddenError);
    assert.equal(asRecord(store.get('res_pjsip', 'endpoint', 'bob')).context, 'default');
    sqlite.setWritesEnabled(true);
    store.update('res_pjsip', 'endpoint', 'carol');
  });

  it('answers NotFoundError for unknown classes, types and ids', () => {
    assert.throws(() => store.get('res_nope', 'endpoint', 'x'), (e) => e instanceof NotFoundError && /configClass 'res_nope'/.test(e.message));
    assert.throws(() => store.get('res_pjsip', 'nope', 'x'), (e) => e instanceof NotFoundError && /objectType 'nope'/.test(e.message));
    assert.throws(() => store.get('res_pjsip', 'endpoint', 'nobody'), NotFoundError);
    assert.throws(() => store.update('res_nope', 'endpoint', 'x'), NotFoundError);
    assert.throws(() => store.update('res_pjsip', 'nope', 'x'), NotFoundError);
    assert.throws(() => store.delete('res_pjsip', 'nope', 'x'), NotFoundError);
    assert.throws(() => store.delete('res_pjsip', 'endpoint', 'nobody'), NotFoundError);
  });

  it('lists objects across backends and reports changes', () => {
    const changes: ConfigChange[] = [];
    store.on('change', (change) => changes.push(change));
    store.update('res_pjsip', 'endpoint', 'bob');
    store.update('res_pjsip', 'endpoint', 'bob', [{ attribute: 'language', value: 'fr' }]);
    assert.deepEqual(
      store.list('res_pjsip', 'endpoint').map(({ id, backend, values }) => [id, backend, values.language]),
      [
        ['alice', 'file', ''],
        ['bob', 'sqlite', 'fr'],
      ],
    );
    store.delete('res_pjsip', 'endpoint', 'bob');
    assert.deepEqual(
      changes.map((c) => c.action),
      ['created', 'updated', 'deleted'],
    );
    assert.equal(store.find('res_pjsip', 'endpoint', 'bob'), undefined);
  });
});
