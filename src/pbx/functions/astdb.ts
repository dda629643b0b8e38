// The astdb functions (func_db): DB, DB_EXISTS, DB_DELETE, DB_KEYS, on the server's SQLite.
import { splitAstDbPath } from '../../core/astdb.ts';
import { InvalidError } from '../../core/errors.ts';
import type { DialplanFunction, FunctionCall } from '../function-services.ts';

function astdbOf(call: FunctionCall) {
  return call.services?.astdb();
}

/**
 * Looks `family/key` up for DB() and DB_EXISTS(): undefined when the path is malformed or the astdb
 * is closed, null when the key is absent; a value found is also left in ${DB_RESULT}.
 */
function lookup(call: FunctionCall): string | null | undefined {
  const path = splitAstDbPath(call.args.trim());
  const db = astdbOf(call);
  if (!path || !db) return undefined;
  const value = db.get(path.family, path.key);
  if (value === undefined) return null;
  call.channel?.setSystemVariable('DB_RESULT', value);
  return value;
}

export const astdbFunctions: readonly DialplanFunction[] = [
  {
    name: 'DB',
    syntax: 'DB(family/key)',
    summary: 'A value of the astdb (kept in the server\'s SQLite across restarts), also left in ${DB_RESULT}; writable.',
    category: 'astdb',
    read(call) {
      const value = lookup(call);
      return value === null ? '' : value;
    },
    write(call, value) {
      const path = splitAstDbPath(call.args.trim());
      if (!path) throw new InvalidError('DB() requires family/key');
      const db = astdbOf(call);
      if (!db) throw new InvalidError('The astdb is not open');
      db.put(path.family, path.key, value);
    },
  },
  {
    name: 'DB_EXISTS',
    syntax: 'DB_EXISTS(family/key)',
    summary: '1 when the astdb has the key, else 0; the value is left in ${DB_RESULT}.',
    category: 'astdb',
    read(call) {
      const value = lookup(call);
      return value === undefined ? undefined : value === null ? '0' : '1';
    },
  },
  {
    name: 'DB_DELETE',
    syntax: 'DB_DELETE(family/key)',
    summary: 'The value of an astdb key, which is deleted; the value is also left in ${DB_RESULT}. Set(DB_DELETE(family/key)=) deletes too.',
    category: 'astdb',
    read(call) {
      const path = splitAstDbPath(call.args.trim());
      const db = astdbOf(call);
      if (!path || !db) return undefined;
      const value = db.get(path.family, path.key);
      if (value === undefined) return '';
      db.delete(path.family, path.key);
      call.channel?.setSystemVariable('DB_RESULT', value);
      return value;
    },
    write(call) {
      const path = splitAstDbPath(call.args.trim());
      if (!path) throw new InvalidError('DB_DELETE() requires family/key');
      const db = astdbOf(call);
      if (!db) throw new InvalidError('The astdb is not open');
      db.delete(path.family, path.key);
    },
  },
  {
    name: 'DB_KEYS',
    syntax: 'DB_KEYS([prefix])',
    summary: 'The key names one level below prefix (the families when empty), comma-separated; at most 1000.',
    category: 'astdb',
    read(call) {
      const db = astdbOf(call);
      if (!db) return undefined;
      return db.keys(call.args.trim()).join(',');
    },
  },
];
