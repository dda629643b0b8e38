// Objects created at run time (through ARI), kept in the server's SQLite database so they survive restarts.
import { ForbiddenError } from '../errors.ts';
import type { SqliteDatabase } from '../database.ts';
import type { ConfigBackend, StoredFields } from './types.ts';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS dynamic_config_objects (
    config_class TEXT NOT NULL,
    object_type  TEXT NOT NULL,
    object_id    TEXT NOT NULL,
    fields       TEXT NOT NULL, -- JSON object of the explicitly set fields
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (config_class, object_type, object_id)
  ) WITHOUT ROWID`;

export class SqliteBackend implements ConfigBackend {
  readonly name = 'sqlite' as const;
  readonly readOnly = false;
  /** Cleared while the module providing this backend is unloaded: reads go on, writes are refused. */
  #writesEnabled = true;
  readonly #select;
  readonly #selectIds;
  readonly #upsert;
  readonly #delete;

  constructor(database: SqliteDatabase) {
    database.exec(SCHEMA);
    this.#select = database.prepare<[string, string, string], { fields: string }>(
      'SELECT fields FROM dynamic_config_objects WHERE config_class = ? AND object_type = ? AND object_id = ?',
    );
    this.#selectIds = database.prepare<[string, string], { object_id: string }>(
      'SELECT object_id FROM dynamic_config_objects WHERE config_class = ? AND object_type = ? ORDER BY object_id',
    );
    this.#upsert = database.prepare<[string, string, string, string, string]>(
      `INSERT INTO dynamic_config_objects (config_class, object_type, object_id, fields, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (config_class, object_type, object_id) DO UPDATE SET fields = excluded.fields, updated_at = excluded.updated_at`,
    );
    this.#delete = database.prepare<[string, string, string]>(
      'DELETE FROM dynamic_config_objects WHERE config_class = ? AND object_type = ? AND object_id = ?',
    );
  }

  get writable(): boolean {
    return this.#writesEnabled;
  }

  setWritesEnabled(enabled: boolean): void {
    this.#writesEnabled = enabled;
  }

  retrieve(configClass: string, objectType: string, id: string): StoredFields | undefined {
    const row = this.#select.get(configClass, objectType, id);
    return row ? (JSON.parse(row.fields) as StoredFields) : undefined;
  }

  ids(configClass: string, objectType: string): string[] {
    return this.#selectIds.all(configClass, objectType).map((row) => row.object_id);
  }

  save(configClass: string, objectType: string, id: string, fields: StoredFields): void {
    this.#assertWritable();
    this.#upsert.run(configClass, objectType, id, JSON.stringify(fields), new Date().toISOString());
  }

  remove(configClass: string, objectType: string, id: string): void {
    this.#assertWritable();
    this.#delete.run(configClass, objectType, id);
  }

  #assertWritable(): void {
    if (!this.#writesEnabled) throw new ForbiddenError('The SQLite configuration backend is not loaded');
  }
}
