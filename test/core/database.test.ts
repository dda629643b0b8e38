// The server's SQLite database: statements prepared once and kept, and better-sqlite3 reached only
// through src/core/database.ts — the rule that keeps Node >= 24.19 from aborting when the garbage
// collector frees a better-sqlite3 object (see the comment in that file and the README).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { openDatabase } from '../../src/core/database.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'patchbay-database-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the same SQL text gives the same prepared statement; another text another one', () => {
  const database = openDatabase(path.join(dir, 'same.sqlite'));
  database.exec('CREATE TABLE t (a INTEGER)');
  const insert = database.prepare('INSERT INTO t (a) VALUES (?)');
  assert.equal(database.prepare('INSERT INTO t (a) VALUES (?)'), insert);
  assert.notEqual(database.prepare('SELECT a FROM t'), insert);
  insert.run(1);
  database.transaction(() => insert.run(2))();
  assert.deepEqual(database.prepare('SELECT a FROM t ORDER BY a').all(), [{ a: 1 }, { a: 2 }]);
  database.close();
  assert.equal(database.open, false);
});

test('opening sets WAL and a busy timeout; a file that is not a database is refused', () => {
  const database = openDatabase(path.join(dir, 'pragmas.sqlite'));
  assert.equal(database.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(database.pragma('busy_timeout', { simple: true }), 2000);
  database.close();
  const garbage = path.join(dir, 'garbage.sqlite');
  writeFileSync(garbage, 'this is not an SQLite file, but long enough to have a header of its own');
  assert.throws(() => openDatabase(garbage), /not a database/);
});

test('only src/core/database.ts loads better-sqlite3 (others may import its types)', () => {
  const offenders: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts') && child !== 'src/core/database.ts') {
        // A value import (or require/dynamic import) would let a caller prepare statements that the GC may free.
        const text = readFileSync(path.join(ROOT, child), 'utf8');
        if (/^\s*import\s+(?!type\b)[^;]*?['"]better-sqlite3['"]|import\(\s*['"]better-sqlite3['"]|require\(\s*['"]better-sqlite3['"]/m.test(text)) offenders.push(child);
      }
    }
  };
  walk('src');
  assert.deepEqual(offenders, []);
});
