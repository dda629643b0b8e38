// The server's own SQLite database (`<dirs.data>/patchbay.sqlite`), shared by subsystems that persist state.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

export const DATABASE_FILE_NAME = 'patchbay.sqlite';

export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE_NAME);
}

/**
 * Why no better-sqlite3 object is ever left to the garbage collector: better-sqlite3 12 wraps its
 * Database, Statement and iterator objects in Node's `node::ObjectWrap`, and from Node 24.19 the
 * headers it is compiled against make that wrapper's destructor look up the current Node
 * environment — which a garbage collection (a minor one in the middle of a call, or one during
 * teardown) does not have, so the process aborts (`Assertion failed: (env) != nullptr` in
 * `Statement::~Statement`/`Database::~Database`; nodejs/node#65446). Closing a database does not
 * help: the closed object is still collected. Objects that stay reachable until the process ends
 * are deleted by Node's own clean-up hooks instead, where the environment exists. So every
 * database opened here is kept for the life of the process (closed, it holds no file and little
 * memory), and each distinct SQL text is prepared once per database and kept with it. Node 20
 * and 22 are not affected; better-sqlite3 13 (Node-API, no `node::ObjectWrap`) is not either,
 * but it drops Node 20.
 */
const keptForTheProcess = new Set<SqliteDatabase>();

type Prepared<BindParameters extends unknown[] | {}, Result> = BindParameters extends unknown[]
  ? Database.Statement<BindParameters, Result>
  : Database.Statement<[BindParameters], Result>;

/** One SQLite database: better-sqlite3's calls the server uses, with statements prepared once and kept. */
export class SqliteDatabase {
  readonly #database: Database.Database;
  readonly #statements = new Map<string, Database.Statement<unknown[], unknown>>();

  constructor(database: Database.Database) {
    this.#database = database;
    keptForTheProcess.add(this);
  }

  /**
   * The prepared statement for `sql`, the same object each time for the same text. Callers must
   * therefore not switch its modes (`pluck`, `raw`, `expand`, `safeIntegers`) and must finish one
   * use before the next (no `iterate` across calls that may reuse it). SQL built at run time must
   * come from a fixed set of shapes, since every text is kept.
   */
  prepare<BindParameters extends unknown[] | {} = unknown[], Result = unknown>(sql: string): Prepared<BindParameters, Result> {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#database.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement as Prepared<BindParameters, Result>;
  }

  exec(sql: string): this {
    this.#database.exec(sql);
    return this;
  }

  transaction<F extends (...params: never[]) => unknown>(fn: F): Database.Transaction<F> {
    return this.#database.transaction(fn);
  }

  /** A PRAGMA's rows, or with `simple` the first column of the first row (better-sqlite3's `pragma`), through a kept statement. */
  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const statement = this.prepare<[], Record<string, unknown>>(`PRAGMA ${source}`);
    if (!options.simple) return statement.all();
    const row = statement.get();
    return row === undefined ? undefined : Object.values(row)[0];
  }

  get open(): boolean {
    return this.#database.open;
  }

  /** The file, for another connection to it (a worker thread's); undefined for a database in memory or a temporary one. */
  get file(): string | undefined {
    const name = this.#database.name;
    return this.#database.memory || name === '' ? undefined : name;
  }

  get inTransaction(): boolean {
    return this.#database.inTransaction;
  }

  /** Closes the file; the object (and its statements) stays reachable until the process ends, as explained above. */
  close(): void {
    this.#database.close();
  }
}

export function openDatabase(file: string): SqliteDatabase {
  mkdirSync(dirname(file), { recursive: true });
  const database = new SqliteDatabase(new Database(file));
  try {
    // WAL lets readers proceed while a write is in progress and survives crashes without a rollback journal.
    database.pragma('journal_mode = WAL');
    // Another process (an operator's sqlite3 shell) may briefly hold the lock; wait instead of failing.
    database.pragma('busy_timeout = 2000');
  } catch (error) {
    // A file that is not a database: the caller reports it, and the file is not left open.
    database.close();
    throw error;
  }
  return database;
}
