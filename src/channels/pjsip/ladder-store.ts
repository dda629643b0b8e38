// The SIP ladders of ended calls, kept in the server's SQLite database (docs/console.md, "SIP
// ladder") so that History can show a finished call's messages after the in-memory ring has let
// it go, or after a restart. A dialog is written once its channels have ended (a moment later, so
// the BYE's answer is in it), as one row of JSON; the table is bounded by rows and by bytes of
// message text, the oldest going first. Reads come from the console's admin routes only.
import type { SqliteDatabase } from '../../core/database.ts';
import type { LadderDialog, LadderMessage } from './sip-ladder.ts';

export interface LadderStoreLimits {
  /** Dialogs kept; 0 keeps none. */
  readonly calls: number;
  /** Bytes of message text kept in all. */
  readonly bytes: number;
}

/** A dialog as stored: what the ladder held when the call ended. */
export interface StoredDialog extends Omit<LadderDialog, 'lastAt' | 'dropped' | 'chars' | 'messages' | 'channels'> {
  readonly lastAt: number;
  readonly dropped: number;
  readonly channels: ReadonlyArray<{ id: string; name: string }>;
  readonly messages: readonly LadderMessage[];
}

interface Row {
  dialog_id: string;
  call_id: string;
  kind: string;
  from_party: string;
  to_party: string;
  first_at: number;
  last_at: number;
  dropped: number;
  channels: string;
  messages: string;
}

/** Channels of a dialog indexed for lookup by id or name (a dialog has at most a few). */
const MAX_INDEXED_CHANNELS = 8;

export class LadderStore {
  #database: SqliteDatabase | undefined;
  #limits: LadderStoreLimits;
  /** Bytes and rows held, kept in step with the table so that trimming needs no SUM or COUNT per write. */
  #bytes = 0;
  #count = 0;

  constructor(
    limits: LadderStoreLimits,
    private readonly onError: (error: unknown) => void,
  ) {
    this.#limits = limits;
  }

  attach(database: SqliteDatabase): void {
    // One row per dialog (a self-call's two legs share a Call-ID): the ladder's id is the key.
    database.exec(`CREATE TABLE IF NOT EXISTS sip_ladder_dialog (dialog_id TEXT PRIMARY KEY, call_id TEXT, kind TEXT, from_party TEXT,
      to_party TEXT, first_at INTEGER, last_at INTEGER, dropped INTEGER, channels TEXT, messages TEXT, bytes INTEGER)`);
    database.exec('CREATE INDEX IF NOT EXISTS sip_ladder_dialog_last ON sip_ladder_dialog (last_at)');
    database.exec('CREATE INDEX IF NOT EXISTS sip_ladder_dialog_call ON sip_ladder_dialog (call_id)');
    database.exec('CREATE TABLE IF NOT EXISTS sip_ladder_dialog_channel (channel TEXT, dialog_id TEXT)');
    database.exec('CREATE INDEX IF NOT EXISTS sip_ladder_dialog_channel_name ON sip_ladder_dialog_channel (channel)');
    database.exec('CREATE INDEX IF NOT EXISTS sip_ladder_dialog_channel_dialog ON sip_ladder_dialog_channel (dialog_id)');
    migrateCallIdTables(database);
    this.#database = database;
    const held = database.prepare('SELECT COALESCE(SUM(bytes), 0) AS total, COUNT(*) AS n FROM sip_ladder_dialog').get() as { total: number; n: number };
    this.#bytes = Number(held.total);
    this.#count = Number(held.n);
    this.#trim();
  }

  detach(): void {
    this.#database = undefined;
  }

  configure(limits: LadderStoreLimits): void {
    this.#limits = limits;
    this.#trim();
  }

  get limits(): LadderStoreLimits {
    return this.#limits;
  }

  /** Writes (or rewrites) one dialog; a no-op while detached or when nothing is to be kept. */
  save(dialog: LadderDialog): void {
    this.saveAll([dialog]);
  }

  /** Writes dialogs in one transaction (one commit, one sync of the file for them all). */
  saveAll(dialogs: readonly LadderDialog[]): void {
    const database = this.#database;
    if (!database || this.#limits.calls === 0) return;
    try {
      database.transaction(() => {
        for (const dialog of dialogs) this.#insert(database, dialog);
        this.#trim();
      })();
    } catch (error) {
      this.onError(error);
    }
  }

  #insert(database: SqliteDatabase, dialog: LadderDialog): void {
    if (dialog.messages.length === 0) return;
    const messages = JSON.stringify(dialog.messages);
    const bytes = Buffer.byteLength(messages, 'utf8');
    if (bytes > this.#limits.bytes) return;
    this.#delete(dialog.id);
    database
      .prepare('INSERT INTO sip_ladder_dialog (dialog_id, call_id, kind, from_party, to_party, first_at, last_at, dropped, channels, messages, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(dialog.id, dialog.callId, dialog.kind, dialog.from, dialog.to, dialog.firstAt, dialog.lastAt, dialog.dropped, JSON.stringify(dialog.channels), messages, bytes);
    const index = database.prepare('INSERT INTO sip_ladder_dialog_channel (channel, dialog_id) VALUES (?, ?)');
    for (const channel of dialog.channels.slice(0, MAX_INDEXED_CHANNELS)) {
      index.run(channel.id, dialog.id);
      index.run(channel.name, dialog.id);
    }
    this.#bytes += bytes;
    this.#count += 1;
  }

  /** A dialog by its ladder id, or else the newest with this Call-ID. */
  get(idOrCallId: string): StoredDialog | undefined {
    return this.#read(
      () =>
        (this.#database?.prepare('SELECT * FROM sip_ladder_dialog WHERE dialog_id = ?').get(idOrCallId) ??
          this.#database?.prepare('SELECT * FROM sip_ladder_dialog WHERE call_id = ? ORDER BY last_at DESC LIMIT 1').get(idOrCallId)) as Row | undefined,
    );
  }

  /** The newest stored dialog that carried a channel (by its id or name). */
  ofChannel(idOrName: string): StoredDialog | undefined {
    return this.#read(
      () =>
        this.#database
          ?.prepare('SELECT l.* FROM sip_ladder_dialog_channel c JOIN sip_ladder_dialog l ON l.dialog_id = c.dialog_id WHERE c.channel = ? ORDER BY l.last_at DESC LIMIT 1')
          .get(idOrName) as Row | undefined,
    );
  }

  get size(): number {
    return this.#database ? this.#count : 0;
  }

  get bytes(): number {
    return this.#bytes;
  }

  #read(query: () => Row | undefined): StoredDialog | undefined {
    try {
      const row = query();
      return row === undefined ? undefined : toDialog(row);
    } catch (error) {
      this.onError(error);
      return undefined;
    }
  }

  #delete(dialogId: string): void {
    const database = this.#database!;
    const old = database.prepare('SELECT bytes FROM sip_ladder_dialog WHERE dialog_id = ?').get(dialogId) as { bytes: number } | undefined;
    if (!old) return;
    database.prepare('DELETE FROM sip_ladder_dialog WHERE dialog_id = ?').run(dialogId);
    database.prepare('DELETE FROM sip_ladder_dialog_channel WHERE dialog_id = ?').run(dialogId);
    this.#bytes -= old.bytes;
    this.#count -= 1;
  }

  /** The oldest dialogs go until both bounds hold. */
  #trim(): void {
    const database = this.#database;
    if (!database) return;
    try {
      while (this.#count > 0 && (this.#count > this.#limits.calls || this.#bytes > this.#limits.bytes)) {
        const oldest = database.prepare('SELECT dialog_id FROM sip_ladder_dialog ORDER BY last_at ASC, rowid ASC LIMIT 1').get() as { dialog_id: string } | undefined;
        if (!oldest) break;
        this.#delete(oldest.dialog_id);
      }
    } catch (error) {
      this.onError(error);
    }
  }
}

/**
 * Ladders stored before they were told apart by dialog were keyed by Call-ID (tables sip_ladder and
 * sip_ladder_channel): they move to the dialog tables with their Call-ID as their id, once.
 */
function migrateCallIdTables(database: SqliteDatabase): void {
  if (database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sip_ladder'").get() === undefined) return;
  database.transaction(() => {
    database.exec(`INSERT OR IGNORE INTO sip_ladder_dialog SELECT call_id, call_id, kind, from_party, to_party, first_at, last_at, dropped,
      channels, messages, bytes FROM sip_ladder`);
    database.exec('INSERT INTO sip_ladder_dialog_channel (channel, dialog_id) SELECT channel, call_id FROM sip_ladder_channel');
    database.exec('DROP TABLE sip_ladder');
    database.exec('DROP TABLE IF EXISTS sip_ladder_channel');
  })();
}

function toDialog(row: Row): StoredDialog {
  return {
    id: row.dialog_id,
    callId: row.call_id,
    kind: row.kind,
    from: row.from_party,
    to: row.to_party,
    firstAt: row.first_at,
    lastAt: row.last_at,
    dropped: row.dropped,
    channels: parseArray(row.channels) as StoredDialog['channels'],
    messages: parseArray(row.messages) as StoredDialog['messages'],
  };
}

/** A column this store wrote; anything else (a damaged file) reads as empty rather than throwing. */
function parseArray(text: string): unknown[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}
