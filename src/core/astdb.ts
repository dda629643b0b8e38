// Asterisk's internal database (astdb): family/key → value pairs the dialplan reads and writes
// with DB(), DB_EXISTS(), DB_DELETE(), DB_KEYS() and DBdeltree(), kept in the server's SQLite so
// they survive restarts. Entries are stored under their full path `/family/key` as Asterisk does,
// which makes a family (or a key's prefix up to a `/`) a range of the primary key.
import type { SqliteDatabase } from './database.ts';
import { InvalidError } from './errors.ts';
import type { SharedStore, SharedWrite, SharedWriteListener } from './shared-writes.ts';
import { MAX_VARIABLE_VALUE_LENGTH } from './variable-limits.ts';

/** Longest `family/key`, in characters. */
export const MAX_ASTDB_PATH_LENGTH = 512;
/** Most entries the database holds; a write beyond answers an error instead of growing the file. */
export const MAX_ASTDB_ENTRIES = 100_000;
/**
 * Characters of keys and values the database holds together: with the count alone, 100,000 values
 * of 64 KiB each (written by a dialplan loop or over ARI's setGlobalVar `DB(...)`) could fill 6 GB of disk.
 */
export const MAX_ASTDB_CHARACTERS = 32 * 1024 * 1024;
/** Most keys one DB_KEYS() lists. */
export const MAX_ASTDB_KEYS_LISTED = 1000;

/** `/` sorts just before `0`: every path beginning with `prefix/` lies in [prefix/, prefix0). */
const upperBound = (prefix: string): string => `${prefix.slice(0, -1)}0`;

export class AstDb implements SharedStore {
  /** Told of every put and removal made here, by full path (a cluster member shares them). */
  onWrite: SharedWriteListener | undefined;
  #count: number;
  /** Characters of every key and value held. */
  #characters: number;

  constructor(private readonly database: SqliteDatabase) {
    database.exec('CREATE TABLE IF NOT EXISTS astdb (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    const totals = database.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(length(key) + length(value)), 0) AS characters FROM astdb').get() as { n: number; characters: number };
    this.#count = totals.n;
    this.#characters = totals.characters;
  }

  /** Characters of keys and values held (tests). */
  get characters(): number {
    return this.#characters;
  }

  /** Number of entries. */
  get size(): number {
    return this.#count;
  }

  get(family: string, key: string): string | undefined {
    const row = this.database.prepare('SELECT value FROM astdb WHERE key = ?').get(path(family, key)) as { value: string } | undefined;
    return row?.value;
  }

  put(family: string, key: string, value: string): void {
    const full = path(family, key);
    this.#put(full, value);
    this.onWrite?.({ name: full, value });
  }

  /** Another server's write, by full path (`/family/key`): checked as a local one, not told again. */
  applyShared(write: SharedWrite): void {
    if (!/^\/[^/]+\/./s.test(write.name) || write.name.length > MAX_ASTDB_PATH_LENGTH + 2) throw new InvalidError('Not an astdb path');
    if (write.value === undefined) this.#delete(write.name);
    else this.#put(write.name, write.value);
  }

  #put(full: string, value: string): void {
    if (value.length > MAX_VARIABLE_VALUE_LENGTH) throw new InvalidError(`astdb value longer than ${MAX_VARIABLE_VALUE_LENGTH} characters`);
    const old = this.database.prepare('SELECT length(value) AS characters FROM astdb WHERE key = ?').get(full) as { characters: number } | undefined;
    const exists = old !== undefined;
    if (!exists && this.#count >= MAX_ASTDB_ENTRIES) throw new InvalidError(`astdb is full (${MAX_ASTDB_ENTRIES} entries)`);
    const growth = exists ? value.length - old.characters : full.length + value.length;
    if (growth > 0 && this.#characters + growth > MAX_ASTDB_CHARACTERS) throw new InvalidError(`astdb is full (${MAX_ASTDB_CHARACTERS} characters)`);
    this.database.prepare('INSERT INTO astdb (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(full, value);
    if (!exists) this.#count++;
    this.#characters += growth;
  }

  /** Removes one entry; false when it did not exist. */
  delete(family: string, key: string): boolean {
    const full = path(family, key);
    const removed = this.#delete(full);
    if (removed) this.onWrite?.({ name: full, value: undefined });
    return removed;
  }

  #delete(full: string): boolean {
    const old = this.database.prepare('SELECT length(value) AS characters FROM astdb WHERE key = ?').get(full) as { characters: number } | undefined;
    const removed = this.database.prepare('DELETE FROM astdb WHERE key = ?').run(full).changes > 0;
    if (removed) {
      this.#count--;
      this.#characters -= full.length + (old?.characters ?? 0);
    }
    return removed;
  }

  /** Removes a family, or every key of a family below `keyPrefix` (DBdeltree); answers how many. */
  deleteTree(family: string, keyPrefix = ''): number {
    const prefix = keyPrefix === '' ? `/${checkPart(family)}/` : `${path(family, keyPrefix)}/`;
    const sizeOf = (where: string, ...values: string[]): number =>
      (this.database.prepare(`SELECT COALESCE(SUM(length(key) + length(value)), 0) AS characters FROM astdb WHERE ${where}`).get(...values) as { characters: number }).characters;
    // Shared (a cluster): each removed key is told, so the listener sees what went (read first, only then).
    const removedPaths = this.onWrite
      ? (this.database.prepare('SELECT key FROM astdb WHERE (key >= ? AND key < ?) OR key = ?').all(prefix, upperBound(prefix), keyPrefix === '' ? '' : prefix.slice(0, -1)) as { key: string }[]).map((row) => row.key)
      : [];
    this.#characters -= sizeOf('key >= ? AND key < ?', prefix, upperBound(prefix));
    let removed = this.database.prepare('DELETE FROM astdb WHERE key >= ? AND key < ?').run(prefix, upperBound(prefix)).changes;
    if (keyPrefix !== '') {
      this.#characters -= sizeOf('key = ?', prefix.slice(0, -1));
      removed += this.database.prepare('DELETE FROM astdb WHERE key = ?').run(prefix.slice(0, -1)).changes;
    }
    this.#count -= removed;
    for (const name of removedPaths) this.onWrite?.({ name, value: undefined });
    return removed;
  }

  /**
   * The distinct names one level below `prefix` (`family` or `family/sub`), or the families when
   * `prefix` is empty, in order, at most MAX_ASTDB_KEYS_LISTED.
   */
  keys(prefix: string): string[] {
    const trimmed = prefix.replace(/^\/+|\/+$/g, '');
    if (trimmed.length > MAX_ASTDB_PATH_LENGTH) throw new InvalidError(`astdb path longer than ${MAX_ASTDB_PATH_LENGTH} characters`);
    const base = trimmed === '' ? '/' : `/${trimmed}/`;
    const bound = upperBound(base);
    const after = this.database.prepare('SELECT key FROM astdb WHERE key > ? AND key < ? ORDER BY key LIMIT 1');
    const from = this.database.prepare('SELECT key FROM astdb WHERE key >= ? AND key < ? ORDER BY key LIMIT 1');
    const names: string[] = [];
    const seen = new Set<string>();
    // Jump from one name to the next instead of reading every key beneath a large family: a key
    // with a `/` after the name stands for its whole subtree [base/name/, base/name0).
    let row = after.get(base, bound) as { key: string } | undefined;
    for (let steps = 0; row && names.length < MAX_ASTDB_KEYS_LISTED && steps < 2 * MAX_ASTDB_KEYS_LISTED + 2; steps++) {
      const rest = row.key.slice(base.length);
      const slash = rest.indexOf('/');
      const name = slash < 0 ? rest : rest.slice(0, slash);
      if (name !== '' && !seen.has(name)) {
        seen.add(name);
        names.push(name);
      }
      row = (slash < 0 ? after.get(row.key, bound) : from.get(upperBound(`${base}${name}/`), bound)) as { key: string } | undefined;
    }
    return names;
  }
}

function checkPart(part: string): string {
  if (part === '') throw new InvalidError('astdb family is required');
  if (part.length > MAX_ASTDB_PATH_LENGTH) throw new InvalidError(`astdb path longer than ${MAX_ASTDB_PATH_LENGTH} characters`);
  return part;
}

function path(family: string, key: string): string {
  if (key === '') throw new InvalidError('astdb key is required');
  const full = `/${checkPart(family)}/${key}`;
  if (full.length > MAX_ASTDB_PATH_LENGTH + 2) throw new InvalidError(`astdb path longer than ${MAX_ASTDB_PATH_LENGTH} characters`);
  return full;
}

/** Splits `family/key` at the first `/`; undefined when either part is missing. */
export function splitAstDbPath(text: string): { family: string; key: string } | undefined {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) return undefined;
  return { family: text.slice(0, slash), key: text.slice(slash + 1) };
}
