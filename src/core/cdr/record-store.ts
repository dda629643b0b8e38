// The `cdr` and `cel` tables of the server's database: records are queued as calls end and written
// in one transaction per flush (a timer, never the event that finished the call), old rows are
// deleted by age and count, and the read API pages through them.
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../database.ts';
import type { CallDetailRecord, CelEvent, Disposition } from './record.ts';

export interface Retention {
  readonly days: number;
  readonly maxRows: number;
}

export interface CdrQuery {
  /** ms since the epoch, inclusive: records that started at or after. */
  readonly since?: number;
  /** ms since the epoch, exclusive. */
  readonly until?: number;
  /** Matches src or dst exactly. */
  readonly number?: string;
  readonly disposition?: Disposition;
  readonly limit: number;
  readonly offset: number;
}

export interface CelQuery {
  readonly since?: number;
  readonly until?: number;
  readonly linkedid?: string;
  readonly limit: number;
  readonly offset: number;
}

/** A stored record: the record with its row id. */
export type StoredCdr = CallDetailRecord & { readonly id: number };
export type StoredCel = CelEvent & { readonly id: number };

const CDR_COLUMNS = [
  'accountcode', 'src', 'dst', 'dcontext', 'clid', 'channel', 'dstchannel', 'lastapp', 'lastdata', 'start', 'answer', 'end',
  'duration', 'billsec', 'disposition', 'amaflags', 'uniqueid', 'linkedid', 'userfield', 'peeraccount', 'sequence', 'variables',
] as const;
const CEL_COLUMNS = [
  'eventtype', 'eventtime', 'userdeftype', 'cid_name', 'cid_num', 'cid_ani', 'cid_rdnis', 'cid_dnid', 'exten', 'context', 'channame',
  'appname', 'appdata', 'amaflags', 'accountcode', 'peeraccount', 'uniqueid', 'linkedid', 'userfield', 'peer', 'extra',
] as const;

/** Rows one transaction writes at most: about 20 ms of the event loop. */
const MAX_ROWS_PER_TRANSACTION = 2000;

const quoted = (names: readonly string[]): string => names.map((name) => `"${name}"`).join(', ');

interface Statements {
  readonly insertCdr: Statement;
  readonly insertCel: Statement;
  readonly expireCdr: Statement;
  readonly expireCel: Statement;
  readonly trimCdr: Statement;
  readonly trimCel: Statement;
}

export class RecordStore {
  #database: SqliteDatabase | undefined;
  #statements: Statements | undefined;
  #pendingCdr: CallDetailRecord[] = [];
  #pendingCel: CelEvent[] = [];
  /** Rows queued at most: beyond, the oldest pending are dropped (a stuck disk must not grow the heap). */
  static readonly MAX_PENDING = 100_000;
  dropped = 0;
  written = 0;

  constructor(
    private cdrRetention: Retention,
    private celRetention: Retention,
    private readonly onError: (error: unknown) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** A reload's retention: the next sweep deletes by it (queued rows are kept). */
  setRetention(cdr: Retention, cel: Retention): void {
    this.cdrRetention = cdr;
    this.celRetention = cel;
  }

  get open(): boolean {
    return this.#database !== undefined;
  }

  attach(database: SqliteDatabase): void {
    database.exec(`CREATE TABLE IF NOT EXISTS cdr (id INTEGER PRIMARY KEY AUTOINCREMENT,
      accountcode TEXT, src TEXT, dst TEXT, dcontext TEXT, clid TEXT, channel TEXT, dstchannel TEXT, lastapp TEXT, lastdata TEXT,
      start INTEGER, answer INTEGER, "end" INTEGER, duration INTEGER, billsec INTEGER, disposition TEXT, amaflags TEXT,
      uniqueid TEXT, linkedid TEXT, userfield TEXT, peeraccount TEXT, sequence INTEGER, variables TEXT)`);
    database.exec('CREATE INDEX IF NOT EXISTS cdr_start ON cdr (start)');
    database.exec(`CREATE TABLE IF NOT EXISTS cel (id INTEGER PRIMARY KEY AUTOINCREMENT,
      eventtype TEXT, eventtime INTEGER, userdeftype TEXT, cid_name TEXT, cid_num TEXT, cid_ani TEXT, cid_rdnis TEXT, cid_dnid TEXT,
      exten TEXT, context TEXT, channame TEXT, appname TEXT, appdata TEXT, amaflags INTEGER, accountcode TEXT, peeraccount TEXT,
      uniqueid TEXT, linkedid TEXT, userfield TEXT, peer TEXT, extra TEXT)`);
    database.exec('CREATE INDEX IF NOT EXISTS cel_time ON cel (eventtime)');
    database.exec('CREATE INDEX IF NOT EXISTS cel_linkedid ON cel (linkedid)');
    this.#database = database;
    // Prepared once and dropped at close: no statement is made per write or left to the collector.
    this.#statements = {
      insertCdr: database.prepare(`INSERT INTO cdr (${quoted(CDR_COLUMNS)}) VALUES (${CDR_COLUMNS.map(() => '?').join(', ')})`),
      insertCel: database.prepare(`INSERT INTO cel (${quoted(CEL_COLUMNS)}) VALUES (${CEL_COLUMNS.map(() => '?').join(', ')})`),
      expireCdr: database.prepare('DELETE FROM cdr WHERE start < ?'),
      expireCel: database.prepare('DELETE FROM cel WHERE eventtime < ?'),
      trimCdr: database.prepare('DELETE FROM cdr WHERE id <= (SELECT id FROM cdr ORDER BY id DESC LIMIT 1 OFFSET ?)'),
      trimCel: database.prepare('DELETE FROM cel WHERE id <= (SELECT id FROM cel ORDER BY id DESC LIMIT 1 OFFSET ?)'),
    };
  }

  /** Writes what is pending, then forgets the database (the caller closes it). */
  close(): void {
    this.flush();
    this.#statements = undefined;
    this.#database = undefined;
  }

  addCdr(record: CallDetailRecord): void {
    this.#pendingCdr.push(record);
    if (this.#pendingCdr.length > RecordStore.MAX_PENDING) this.dropped += dropOldest(this.#pendingCdr);
  }

  addCel(event: CelEvent): void {
    this.#pendingCel.push(event);
    if (this.#pendingCel.length > RecordStore.MAX_PENDING) this.dropped += dropOldest(this.#pendingCel);
  }

  get pending(): number {
    return this.#pendingCdr.length + this.#pendingCel.length;
  }

  /** Writes every queued row, a bounded batch per transaction. */
  flush(): void {
    while (this.pending > 0 && this.open) {
      const before = this.pending;
      this.flushBatch();
      if (this.pending >= before) return;
    }
  }

  /**
   * Writes up to `maxRows` queued rows in one transaction (so one flush never holds the event loop
   * for long); on failure the rows stay queued for the next flush.
   */
  flushBatch(maxRows = MAX_ROWS_PER_TRANSACTION): void {
    const statements = this.#statements;
    const database = this.#database;
    if (!statements || !database || this.pending === 0) return;
    const cdrs = this.#pendingCdr.slice(0, maxRows);
    const cels = this.#pendingCel.slice(0, Math.max(0, maxRows - cdrs.length));
    try {
      database.transaction(() => {
        for (const r of cdrs) {
          statements.insertCdr.run(
            r.accountcode, r.src, r.dst, r.dcontext, r.clid, r.channel, r.dstchannel, r.lastapp, r.lastdata, r.start, r.answer, r.end,
            r.duration, r.billsec, r.disposition, r.amaflags, r.uniqueid, r.linkedid, r.userfield, r.peeraccount, r.sequence, JSON.stringify(r.variables),
          );
        }
        for (const e of cels) statements.insertCel.run(...CEL_COLUMNS.map((column) => e[column]));
      })();
      this.#pendingCdr.splice(0, cdrs.length);
      this.#pendingCel.splice(0, cels.length);
      this.written += cdrs.length + cels.length;
    } catch (error) {
      this.onError(error);
    }
  }

  /** Deletes rows older than the retention and beyond the row limits. */
  expire(): void {
    const statements = this.#statements;
    if (!statements) return;
    try {
      const now = this.now();
      statements.expireCdr.run(now - this.cdrRetention.days * 86_400_000);
      statements.expireCel.run(now - this.celRetention.days * 86_400_000);
      statements.trimCdr.run(this.cdrRetention.maxRows);
      statements.trimCel.run(this.celRetention.maxRows);
    } catch (error) {
      this.onError(error);
    }
  }

  /** Records, newest first, with the number matching the filters (for paging). */
  queryCdr(query: CdrQuery): { total: number; records: StoredCdr[] } {
    const database = this.#database;
    if (!database) return { total: 0, records: [] };
    this.flush();
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.since !== undefined) where.push('start >= ?') && params.push(query.since);
    if (query.until !== undefined) where.push('start < ?') && params.push(query.until);
    if (query.number !== undefined) where.push('(src = ? OR dst = ?)') && params.push(query.number, query.number);
    if (query.disposition !== undefined) where.push('disposition = ?') && params.push(query.disposition);
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    // Filters vary, so these statements are made per query: the read API is not a hot path.
    const total = (database.prepare(`SELECT COUNT(*) AS n FROM cdr ${clause}`).get(...params) as { n: number }).n;
    const rows = database.prepare(`SELECT * FROM cdr ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...params, query.limit, query.offset) as Record<string, unknown>[];
    return { total, records: rows.map(cdrOfRow) };
  }

  queryCel(query: CelQuery): { total: number; events: StoredCel[] } {
    const database = this.#database;
    if (!database) return { total: 0, events: [] };
    this.flush();
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.since !== undefined) where.push('eventtime >= ?') && params.push(query.since);
    if (query.until !== undefined) where.push('eventtime < ?') && params.push(query.until);
    if (query.linkedid !== undefined) where.push('linkedid = ?') && params.push(query.linkedid);
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const total = (database.prepare(`SELECT COUNT(*) AS n FROM cel ${clause}`).get(...params) as { n: number }).n;
    const rows = database.prepare(`SELECT * FROM cel ${clause} ORDER BY id ASC LIMIT ? OFFSET ?`).all(...params, query.limit, query.offset) as StoredCel[];
    return { total, events: rows };
  }
}

/** Drops the oldest tenth of a full queue in one splice (one shift per row would cost the whole queue each time). */
export function dropOldest(queue: unknown[]): number {
  const count = Math.max(1, Math.floor(queue.length / 10));
  queue.splice(0, count);
  return count;
}

const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
const int = (value: unknown): number => (typeof value === 'number' ? value : Number(value) || 0);

function cdrOfRow(row: Record<string, unknown>): StoredCdr {
  let variables: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(text(row.variables) || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) variables = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, text(v)]));
  } catch {
    variables = {};
  }
  return {
    id: int(row.id),
    accountcode: text(row.accountcode),
    src: text(row.src),
    dst: text(row.dst),
    dcontext: text(row.dcontext),
    clid: text(row.clid),
    channel: text(row.channel),
    dstchannel: text(row.dstchannel),
    lastapp: text(row.lastapp),
    lastdata: text(row.lastdata),
    start: int(row.start),
    answer: int(row.answer),
    end: int(row.end),
    duration: int(row.duration),
    billsec: int(row.billsec),
    disposition: text(row.disposition) as Disposition,
    amaflags: text(row.amaflags) as CallDetailRecord['amaflags'],
    uniqueid: text(row.uniqueid),
    linkedid: text(row.linkedid),
    userfield: text(row.userfield),
    peeraccount: text(row.peeraccount),
    sequence: int(row.sequence),
    variables,
  };
}
