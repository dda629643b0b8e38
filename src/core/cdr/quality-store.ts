// The call quality a channel ended with, kept beside the call records: a side table `cdr_quality`
// keyed by uniqueid in the same SQLite database (docs/cdr.md), so that a CDR (its uniqueid, and
// its dstchannel by name) can be shown with the figures of its media. The figures come from the
// core's CallQuality (technology-neutral: any driver that reports RTP statistics); this store
// only keeps them, within the CDRs' retention.
import type { QualityFigures } from '../call-quality.ts';
import type { SqliteDatabase } from '../database.ts';
import type { Retention } from './record-store.ts';

export type StoredQuality = Omit<QualityFigures, 'sampled_at'> & { readonly ended_at: number };

const COLUMNS = ['uniqueid', 'linkedid', 'channel', 'codec', 'packets_received', 'packets_sent', 'lost_received', 'lost_sent', 'loss_percent', 'jitter_ms', 'rtt_ms', 'r', 'mos', 'rating', 'ended_at'] as const;
/** Rows waiting for the database (before it is attached); the oldest go beyond. */
const MAX_PENDING = 10_000;

interface Statements {
  readonly insert: { run(...values: unknown[]): unknown };
  readonly byId: { get(...values: unknown[]): unknown };
  readonly byChannel: { get(...values: unknown[]): unknown };
  readonly expire: { run(...values: unknown[]): unknown };
  readonly trim: { run(...values: unknown[]): unknown };
}

export class QualityStore {
  #statements: Statements | undefined;
  readonly #pending: StoredQuality[] = [];

  constructor(private readonly onError: (error: unknown) => void) {}

  attach(database: SqliteDatabase): void {
    database.exec(`CREATE TABLE IF NOT EXISTS cdr_quality (uniqueid TEXT PRIMARY KEY, linkedid TEXT, channel TEXT, codec TEXT,
      packets_received INTEGER, packets_sent INTEGER, lost_received INTEGER, lost_sent INTEGER, loss_percent REAL, jitter_ms REAL,
      rtt_ms REAL, r REAL, mos REAL, rating TEXT, ended_at INTEGER)`);
    database.exec('CREATE INDEX IF NOT EXISTS cdr_quality_channel ON cdr_quality (channel)');
    database.exec('CREATE INDEX IF NOT EXISTS cdr_quality_ended ON cdr_quality (ended_at)');
    this.#statements = {
      insert: database.prepare(`INSERT OR REPLACE INTO cdr_quality (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`),
      byId: database.prepare('SELECT * FROM cdr_quality WHERE uniqueid = ?'),
      byChannel: database.prepare('SELECT * FROM cdr_quality WHERE channel = ? ORDER BY ended_at DESC LIMIT 1'),
      expire: database.prepare('DELETE FROM cdr_quality WHERE ended_at < ?'),
      trim: database.prepare('DELETE FROM cdr_quality WHERE rowid <= (SELECT rowid FROM cdr_quality ORDER BY ended_at DESC LIMIT 1 OFFSET ?)'),
    };
    for (const figures of this.#pending.splice(0)) this.add(figures);
  }

  close(): void {
    this.#statements = undefined;
  }

  /** One channel's last figures; a single prepared INSERT per channel with RTP that ends. */
  add(figures: StoredQuality): void {
    const statements = this.#statements;
    if (!statements) {
      this.#pending.push(figures);
      if (this.#pending.length > MAX_PENDING) this.#pending.shift();
      return;
    }
    try {
      statements.insert.run(...COLUMNS.map((column) => figures[column]));
    } catch (error) {
      this.onError(error);
    }
  }

  /** The figures of a channel by its uniqueid, else (a dstchannel) by its name. */
  find(uniqueid: string, channel?: string): StoredQuality | undefined {
    const statements = this.#statements;
    if (!statements) return undefined;
    try {
      const row = (uniqueid ? statements.byId.get(uniqueid) : undefined) ?? (channel ? statements.byChannel.get(channel) : undefined);
      return row === undefined ? undefined : (row as StoredQuality);
    } catch (error) {
      this.onError(error);
      return undefined;
    }
  }

  /** The CDRs' retention applies: by age and by rows. */
  expire(retention: Retention, now: number): void {
    const statements = this.#statements;
    if (!statements) return;
    try {
      statements.expire.run(now - retention.days * 86_400_000);
      statements.trim.run(retention.maxRows);
    } catch (error) {
      this.onError(error);
    }
  }
}
