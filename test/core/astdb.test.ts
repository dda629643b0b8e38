// The astdb's bounds: entries and, since values may each be 64 KiB, the characters of keys and
// values together, kept right through overwrites, deletes and tree deletes, and across a reopen.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AstDb, MAX_ASTDB_CHARACTERS } from '../../src/core/astdb.ts';
import { openDatabase } from '../../src/core/database.ts';
import { InvalidError } from '../../src/core/errors.ts';
import { MAX_VARIABLE_VALUE_LENGTH } from '../../src/core/variable-limits.ts';

const dir = mkdtempSync(join(tmpdir(), 'patchbay-astdb-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('large values stop at the character budget with InvalidError; overwrites and deletes give room back', () => {
  const file = join(dir, 'budget.sqlite');
  const database = openDatabase(file);
  const db = new AstDb(database);
  const big = 'v'.repeat(MAX_VARIABLE_VALUE_LENGTH);
  const fits = Math.floor(MAX_ASTDB_CHARACTERS / (MAX_VARIABLE_VALUE_LENGTH + 20));
  for (let i = 0; i < fits; i++) db.put('fill', `k${i}`, big);
  assert.throws(
    () => {
      for (let i = fits; i < fits + 10; i++) db.put('fill', `k${i}`, big);
    },
    (error: unknown) => error instanceof InvalidError && /astdb is full/.test(error.message),
  );
  assert.ok(db.characters <= MAX_ASTDB_CHARACTERS, `${db.characters} characters held`);
  const held = db.characters;
  // Overwriting with a shorter value, deleting one key and a tree all give room back.
  db.put('fill', 'k0', 'short');
  assert.equal(db.characters, held - MAX_VARIABLE_VALUE_LENGTH + 5);
  assert.ok(db.delete('fill', 'k1'));
  db.put('other', 'a', 'x');
  db.put('other', 'a/b', 'y');
  const beforeTree = db.characters;
  assert.equal(db.deleteTree('other'), 2);
  assert.equal(db.characters, beforeTree - '/other/a'.length - 1 - '/other/a/b'.length - 1);
  db.put('fill', 'again', big);
  database.close();
  // A reopened database counts what it holds.
  const reopened = openDatabase(file);
  const again = new AstDb(reopened);
  assert.equal(again.characters, db.characters);
  assert.equal(again.size, db.size);
  reopened.close();
});
