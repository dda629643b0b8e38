// The `cdr` and `cel` tables of the server's database: records are queued as calls end and written
// in one transaction per flush (a timer, never the event that finished the call), old rows are
// deleted by age and count, and the read API pages through them. With a writer thread
// (`cdr.sqlite_thread`) the flush hands the rows over instead and the thread inserts them; reads
// and every guarantee (a read after a flush finds the rows, bounded queues, errors reported, rows
// written at shutdown) stay the same.
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../database.ts';
import type { CallDetailRecord, CelEvent, Disposition } from './record.ts';
import { cdrRow, celRow, createRecordTables, insertStatements, MAX_ROWS_PER_TRANSACTION, writeRows, type InsertStatements } from './record-rows.ts';
import { RecordWriterThread } from './record-writer-thread.ts';

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

interface Statements extends InsertStatements {
  readonly expireCdr: Statement;
  readonly expireCel: Statement;
  readonly trimCdr: Statement;
  readonly trimCel: Statement;
}

/** A batch's records, kept until the writer thread has taken it. */
interface HandedRecords {
  readonly cdrs: CallDetailRecord[];
  readonly cels: CelEvent[];
}

export class RecordStore {
  #database: SqliteDatabase | undefined;
  #statements: Statements | undefined;
  #pendingCdr: CallDetailRecord[] = [];
  #pendingCel: CelEvent[] = [];
  /** The writer thread, while rows go through one. */
  #thread: RecordWriterThread<HandedRecords> | undefined;
  /** The thread's ending, for close's caller to wait for. */
  #threadClosed: Promise<void> = Promise.resolve();
  /** Rows queued at most: beyond, the oldest pending are dropped (a stuck disk must not grow the heap). */
  static readonly MAX_PENDING = 100_000;
  #dropped = 0;
  #written = 0;
  /** Threads rows were handed to that have not ended yet (the current one, one closing after a reload). */
  readonly #threads = new Set<RecordWriterThread<HandedRecords>>();

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

  /**
   * Creates the tables and writes through `database`; with `thread`, rows are inserted by a writer
   * thread on its own connection to the same file (a database in memory has no file to share: the
   * store then writes itself).
   */
  attach(database: SqliteDatabase, options: { thread?: boolean } = {}): void {
    createRecordTables(database);
    this.#database = database;
    // Prepared once and dropped at close: no statement is made per write or left to the collector.
    this.#statements = {
      ...insertStatements(database),
      expireCdr: database.prepare('DELETE FROM cdr WHERE start < ?'),
      expireCel: database.prepare('DELETE FROM cel WHERE eventtime < ?'),
      trimCdr: database.prepare('DELETE FROM cdr WHERE id <= (SELECT id FROM cdr ORDER BY id DESC LIMIT 1 OFFSET ?)'),
      trimCel: database.prepare('DELETE FROM cel WHERE id <= (SELECT id FROM cel ORDER BY id DESC LIMIT 1 OFFSET ?)'),
    };
    if (options.thread) this.#startThread(database);
  }

  /** Writes what is pending, then forgets the database (the caller closes it after `closed`). */
  close(): void {
    this.flush();
    this.#stopThread();
    this.#statements = undefined;
    this.#database = undefined;
  }

  /** Resolves when a writer thread the store had has ended (at once without one). */
  get closed(): Promise<void> {
    return this.#threadClosed;
  }

  /**
   * Rows through a writer thread from now (a reload's `cdr.sqlite_thread`), or written here again:
   * what is queued is written first, either way.
   */
  useThread(thread: boolean): void {
    if (thread === (this.#thread !== undefined) || !this.#database) return;
    this.flush();
    if (thread) this.#startThread(this.#database);
    else this.#stopThread();
  }

  get threaded(): boolean {
    return this.#thread !== undefined;
  }

  #startThread(database: SqliteDatabase): void {
    const file = database.file;
    if (file === undefined) return;
    const thread = new RecordWriterThread<HandedRecords>(file, RecordStore.MAX_PENDING, {
      onError: this.onError,
      onGone: (unhandled, lostRows) => {
        this.#retire(thread);
        // Its totals are kept here from now, so they never go back.
        this.#threads.delete(thread);
        this.#written += thread.written;
        this.#dropped += thread.dropped + lostRows;
        // What the thread never took is written here, before what was queued since.
        this.#pendingCdr = [...unhandled.flatMap((batch) => batch.cdrs), ...this.#pendingCdr];
        this.#pendingCel = [...unhandled.flatMap((batch) => batch.cels), ...this.#pendingCel];
        while (this.#pendingCdr.length > RecordStore.MAX_PENDING) this.#dropped += dropOldest(this.#pendingCdr);
        while (this.#pendingCel.length > RecordStore.MAX_PENDING) this.#dropped += dropOldest(this.#pendingCel);
      },
    });
    this.#thread = thread;
    this.#threads.add(thread);
  }

  #stopThread(): void {
    const thread = this.#thread;
    if (!thread) return;
    this.#threadClosed = thread.close();
    this.#retire(thread);
  }

  /** Rows are written here from now on. */
  #retire(thread: RecordWriterThread<HandedRecords>): void {
    if (this.#thread === thread) this.#thread = undefined;
  }

  get written(): number {
    let written = this.#written;
    for (const thread of this.#threads) written += thread.written;
    return written;
  }

  get dropped(): number {
    let dropped = this.#dropped;
    for (const thread of this.#threads) dropped += thread.dropped;
    return dropped;
  }

  addCdr(record: CallDetailRecord): void {
    this.#pendingCdr.push(record);
    if (this.#pendingCdr.length > RecordStore.MAX_PENDING) this.#dropped += dropOldest(this.#pendingCdr);
  }

  addCel(event: CelEvent): void {
    this.#pendingCel.push(event);
    if (this.#pendingCel.length > RecordStore.MAX_PENDING) this.#dropped += dropOldest(this.#pendingCel);
  }

  /** Rows not yet written: queued here, and handed to a writer thread and not written yet. */
  get pending(): number {
    return this.waiting + (this.#thread?.pending ?? 0);
  }

  /** Rows waiting here for the next flush (with a writer thread: not yet handed to it). */
  get waiting(): number {
    return this.#pendingCdr.length + this.#pendingCel.length;
  }

  /** Writes every queued row, a bounded batch per transaction; with a writer thread, waits until it has. */
  flush(): void {
    while (this.waiting > 0 && this.open) {
      if (!this.flushBatch()) break;
    }
    const thread = this.#thread;
    if (thread && !thread.waitHandled() && !thread.usable) {
      // The thread went while this waited: what it never took comes back here and is written now.
      thread.abandon();
      this.flush();
    }
  }

  /**
   * Writes up to `maxRows` queued rows in one transaction (so one flush never holds the event loop
   * for long); on failure the rows stay queued for the next flush. False when nothing could go
   * (a failed write, a writer thread that is a whole queue behind): the caller waits before trying again.
   */
  flushBatch(maxRows = MAX_ROWS_PER_TRANSACTION): boolean {
    const statements = this.#statements;
    const database = this.#database;
    if (!statements || !database || this.waiting === 0) return false;
    const thread = this.#thread;
    if (thread && !thread.usable) thread.abandon();
    else if (thread) {
      // A thread that has fallen behind by a whole queue gets no more until it catches up: the rows
      // wait here, where the bound drops the oldest (a stuck disk must not grow either queue).
      if (thread.pending >= RecordStore.MAX_PENDING) return false;
      const cdrs = this.#pendingCdr.splice(0, maxRows);
      const cels = this.#pendingCel.splice(0, Math.max(0, maxRows - cdrs.length));
      // One JSON text per table: one string through the structured clone, not an object per row.
      const cdrText = cdrs.length > 0 ? JSON.stringify(cdrs.map(cdrRow)) : '';
      const celText = cels.length > 0 ? JSON.stringify(cels.map(celRow)) : '';
      thread.hand(cdrText, celText, cdrs.length + cels.length, { cdrs, cels });
      return true;
    }
    const cdrs = this.#pendingCdr.slice(0, maxRows);
    const cels = this.#pendingCel.slice(0, Math.max(0, maxRows - cdrs.length));
    try {
      writeRows(database, statements, cdrs.map(cdrRow), cels.map(celRow));
      this.#pendingCdr.splice(0, cdrs.length);
      this.#pendingCel.splice(0, cels.length);
      this.#written += cdrs.length + cels.length;
      return true;
    } catch (error) {
      this.onError(error);
      return false;
    }
  }

  /** Deletes rows older than the retention and beyond the row limits. */
  expire(): void {
    const statements = this.#statements;
    if (!statements) return;
    const thread = this.#thread;
    if (thread?.usable) {
      // In order after the rows handed before it, and off this thread (a large table's delete is slow).
      const now = this.now();
      thread.expire(now - this.cdrRetention.days * 86_400_000, now - this.celRetention.days * 86_400_000, this.cdrRetention.maxRows, this.celRetention.maxRows);
      return;
    }
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
