// Which call each recording came from: ARI's StoredRecording has only a name and a format, so the
// console could name the call only for recordings it saw start. When a recording starts, the core
// writes its target's name (the channel's, else the bridge's name or id) and the call's linkedid to
// the `recording_origin` table of the server's database; the admin list of stored recordings reads
// them back, also after a restart. Bounded by rows (the oldest go first).
import type { SqliteDatabase } from '../database.ts';

export interface RecordingOrigin {
  readonly name: string;
  /** `channel:<id>` or `bridge:<id>`, as the LiveRecording's target_uri. */
  readonly target_uri: string;
  /** The channel's name, or the bridge's name (its id when it has none). */
  readonly target_name: string;
  /** The linkedid of the call (of the bridge's first member): the CDRs and CEL events of that call. */
  readonly linkedid: string;
  /** When the recording started, ms since the epoch. */
  readonly started: number;
}

/** Origins kept; a recording older than this many others has lost its. */
const MAX_ROWS = 100_000;
const MAX_TEXT = 256;

export class RecordingOrigins {
  #database: SqliteDatabase | undefined;

  constructor(private readonly onError: (error: unknown) => void) {}

  attach(database: SqliteDatabase): void {
    database.exec('CREATE TABLE IF NOT EXISTS recording_origin (name TEXT PRIMARY KEY, target_uri TEXT, target_name TEXT, linkedid TEXT, started INTEGER)');
    database.exec('CREATE INDEX IF NOT EXISTS recording_origin_started ON recording_origin (started)');
    this.#database = database;
  }

  detach(): void {
    this.#database = undefined;
  }

  /** A recording started (again, for a recording overwritten under the same name: the new origin wins). */
  remember(origin: RecordingOrigin): void {
    const database = this.#database;
    if (!database) return;
    try {
      database
        .prepare('INSERT OR REPLACE INTO recording_origin (name, target_uri, target_name, linkedid, started) VALUES (?, ?, ?, ?, ?)')
        .run(origin.name.slice(0, MAX_TEXT * 4), origin.target_uri.slice(0, MAX_TEXT), origin.target_name.slice(0, MAX_TEXT), origin.linkedid.slice(0, MAX_TEXT), origin.started);
      database.prepare('DELETE FROM recording_origin WHERE rowid IN (SELECT rowid FROM recording_origin ORDER BY started DESC LIMIT -1 OFFSET ?)').run(MAX_ROWS);
    } catch (error) {
      this.onError(error);
    }
  }

  find(name: string): RecordingOrigin | undefined {
    try {
      return this.#database?.prepare('SELECT name, target_uri, target_name, linkedid, started FROM recording_origin WHERE name = ?').get(name) as RecordingOrigin | undefined;
    } catch (error) {
      this.onError(error);
      return undefined;
    }
  }
}
