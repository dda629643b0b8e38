// The server's own SQLite database (`<dirs.data>/patchbay.sqlite`), shared by subsystems that persist state.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

export const DATABASE_FILE_NAME = 'patchbay.sqlite';

export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE_NAME);
}

export function openDatabase(file: string): SqliteDatabase {
  mkdirSync(dirname(file), { recursive: true });
  const database = new Database(file);
  // WAL lets readers proceed while a write is in progress and survives crashes without a rollback journal.
  database.pragma('journal_mode = WAL');
  // Another process (an operator's sqlite3 shell) may briefly hold the lock; wait instead of failing.
  database.pragma('busy_timeout = 2000');
  return database;
}
