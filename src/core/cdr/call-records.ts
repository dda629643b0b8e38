// Call records as the core keeps them: the CDR engine and channel event logging read the core's
// events; finished records go to the database and to the CSV files on a timer, in batches; a sweep
// keeps the tables within their retention. What the dialplan (ResetCDR, NoCDR, CDR(), CDR_PROP(),
// CELGenUserEvent) and the read API use is here too.
import type { CoreEvent } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';
import type { SqliteDatabase } from '../database.ts';
import { CdrEngine } from './cdr-engine.ts';
import { CelEngine } from './cel-engine.ts';
import { CsvWriter, type CsvOptions } from './csv-writer.ts';
import { RecordStore, type CdrQuery, type CelQuery, type Retention } from './record-store.ts';
import type { CallDetailRecord } from './record.ts';
import { QualityStore } from './quality-store.ts';

export interface CallRecordsSettings {
  readonly cdr: {
    readonly enabled: boolean;
    readonly unanswered: boolean;
    readonly congestion: boolean;
    readonly initiatedSeconds: boolean;
    readonly channelDefaultEnabled: boolean;
    readonly sqlite: boolean;
    /** Rows inserted by a writer thread (record-writer-thread.ts) rather than the event loop. */
    readonly sqliteThread: boolean;
    readonly csv: CsvOptions & { readonly enabled: boolean };
    readonly retentionDays: number;
    readonly maxRows: number;
    readonly flushMs: number;
  };
  readonly cel: {
    readonly enabled: boolean;
    readonly events: readonly string[];
    readonly apps: readonly string[];
    readonly retentionDays: number;
    readonly maxRows: number;
  };
}

export interface CallRecordsOptions {
  readonly settings: CallRecordsSettings;
  /** Asterisk's astlogdir: Master.csv goes in its cdr-csv/. */
  readonly logsDir: string;
  /** The linkedid of a live channel (snapshots do not carry it). */
  readonly linkedIdOf: (channelId: string) => string | undefined;
  readonly onError: (error: unknown, during: string) => void;
  readonly now?: () => number;
}

/** How often old rows are deleted. */
const EXPIRY_INTERVAL_MS = 60_000;

export class CallRecords {
  readonly cdr: CdrEngine;
  #cel: CelEngine | undefined;
  readonly store: RecordStore;
  #csv: CsvWriter | undefined;
  /** The call quality channels ended with, beside the records (side table keyed by uniqueid). */
  readonly quality: QualityStore;
  #settings: CallRecordsSettings;
  #cdrRetention: Retention;
  readonly #logsDir: string;
  readonly #onError: (error: unknown, during: string) => void;
  readonly #now: () => number;
  #flushTimer: NodeJS.Timeout | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  /** Records posted since start (metrics, tests). */
  posted = 0;
  /** Listeners told of each record as it is posted (tests, the console). */
  readonly #listeners = new Set<(record: CallDetailRecord) => void>();

  constructor(options: CallRecordsOptions) {
    const { settings } = options;
    this.#settings = settings;
    const cdrRetention: Retention = { days: settings.cdr.retentionDays, maxRows: settings.cdr.maxRows };
    const celRetention: Retention = { days: settings.cel.retentionDays, maxRows: settings.cel.maxRows };
    this.store = new RecordStore(cdrRetention, celRetention, (error) => options.onError(error, 'writing call records to the database'), options.now);
    this.quality = new QualityStore((error) => options.onError(error, 'call quality beside the call records'));
    this.#cdrRetention = cdrRetention;
    this.#now = options.now ?? Date.now;
    this.#logsDir = options.logsDir;
    this.#onError = options.onError;
    this.#csv = this.#csvWriter(settings);
    this.cdr = new CdrEngine({
      ...engineRules(settings),
      now: options.now,
      post: (record) => this.#post(record),
    });
    this.cdr.linkedIdOf = options.linkedIdOf;
    this.#cel = settings.cel.enabled ? this.#celEngine(settings) : undefined;
  }

  /** Channel event logging, when cel.enabled. */
  get cel(): CelEngine | undefined {
    return this.#cel;
  }

  /** The CSV backend (cdr_csv), when cdr.enabled and cdr.csv.enabled. */
  get csv(): CsvWriter | undefined {
    return this.#csv;
  }

  #csvWriter(settings: CallRecordsSettings): CsvWriter | undefined {
    if (!settings.cdr.enabled || !settings.cdr.csv.enabled) return undefined;
    return new CsvWriter(this.#logsDir, settings.cdr.csv, (error) => this.#onError(error, 'writing Master.csv'));
  }

  #celEngine(settings: CallRecordsSettings): CelEngine {
    return new CelEngine({
      events: settings.cel.events,
      apps: settings.cel.apps,
      now: this.#now,
      view: (id) => this.cdr.channel(id),
      post: (event) => {
        this.store.addCel(event);
        this.#scheduleFlush();
      },
    });
  }

  /**
   * A reload (SIGHUP, `patchbay reload`) with cdr.conf/cel.conf read again. Nothing is lost: calls
   * in progress keep their records (the engine is the same, its rules change), what is queued is
   * written, and a CSV writer that is replaced writes its lines before it goes. CEL switched on
   * starts with what happens from now (the events of calls already up are not made up).
   */
  async reconfigure(settings: CallRecordsSettings): Promise<void> {
    const previous = this.#settings;
    this.#settings = settings;
    this.cdr.configure(engineRules(settings));
    const replacedCsv = this.#csv;
    const csvChanged = JSON.stringify([previous.cdr.enabled, previous.cdr.csv]) !== JSON.stringify([settings.cdr.enabled, settings.cdr.csv]);
    if (csvChanged) this.#csv = this.#csvWriter(settings);
    if (!settings.cel.enabled) this.#cel = undefined;
    else if (this.#cel) this.#cel.configure(settings.cel.events, settings.cel.apps);
    else this.#cel = this.#celEngine(settings);
    this.#cdrRetention = { days: settings.cdr.retentionDays, maxRows: settings.cdr.maxRows };
    this.store.setRetention(this.#cdrRetention, { days: settings.cel.retentionDays, maxRows: settings.cel.maxRows });
    // Queued rows are written before the new retention sweeps the tables.
    this.store.flush();
    this.store.useThread(settings.cdr.sqliteThread);
    if (this.store.open) this.#expire();
    if (csvChanged) await replacedCsv?.flush();
  }

  get enabled(): boolean {
    return this.#settings.cdr.enabled;
  }

  /** The core's event observer: every published event passes here. */
  observe(event: CoreEvent): void {
    // The CDR engine tracks channels even with CDRs off: CEL reads its view of them.
    this.cdr.handle(event);
    this.#cel?.handle(event);
  }

  onRecord(listener: (record: CallDetailRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #post(record: CallDetailRecord): void {
    if (!this.#settings.cdr.enabled) return;
    this.posted += 1;
    if (this.#settings.cdr.sqlite) this.store.addCdr(record);
    this.#csv?.add(record);
    for (const listener of this.#listeners) listener(record);
    this.#scheduleFlush();
  }

  /** Batches: the first record after a flush starts the timer; the ones that follow ride along. */
  #scheduleFlush(): void {
    if (this.#flushTimer) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      void this.#csv?.flush();
      this.#flushBatch();
    }, this.#settings.cdr.flushMs);
    this.#flushTimer.unref();
  }

  /**
   * One bounded batch per turn of the event loop; what is left goes at the next turn. A batch that
   * could not go (a failing disk, a writer thread a whole queue behind) is tried again a flush
   * interval later, not at the next turn, which would spin the event loop.
   */
  #flushBatch(): void {
    const moved = this.store.flushBatch();
    if (this.store.waiting === 0 || !this.store.open) return;
    if (!moved) return this.#scheduleFlush();
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flushBatch();
    }, 0);
    this.#flushTimer.unref();
  }

  /** Writes every queued record now (the database at once, the CSV files when the append resolves). */
  flush(): Promise<void> {
    this.store.flush();
    return this.#csv?.flush() ?? Promise.resolve();
  }

  start(database: SqliteDatabase): void {
    this.store.attach(database, { thread: this.#settings.cdr.sqliteThread });
    this.quality.attach(database);
    this.#expire();
    this.#expiryTimer = setInterval(() => this.#expire(), EXPIRY_INTERVAL_MS);
    this.#expiryTimer.unref();
  }

  #expire(): void {
    this.store.expire();
    this.quality.expire(this.#cdrRetention, this.#now());
  }

  /** Writes what is queued and lets the database go (before the core closes it). */
  async stop(): Promise<void> {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#expiryTimer) clearInterval(this.#expiryTimer);
    this.#expiryTimer = undefined;
    this.store.close();
    this.quality.close();
    await Promise.all([this.#csv?.flush(), this.store.closed]);
  }

  queryCdr(query: CdrQuery): ReturnType<RecordStore['queryCdr']> {
    return this.store.queryCdr(query);
  }

  queryCel(query: CelQuery): ReturnType<RecordStore['queryCel']> {
    return this.store.queryCel(query);
  }

  /** CELGenUserEvent: nothing when CEL is off. */
  userEvent(snapshot: Model<'Channel'>, name: string, extra: string): void {
    this.#cel?.userEvent(snapshot, name, extra);
  }
}

/** What the CDR engine takes from cdr.conf. */
function engineRules(settings: CallRecordsSettings): { unanswered: boolean; congestion: boolean; initiatedSeconds: boolean; channelDefaultEnabled: boolean } {
  const { unanswered, congestion, initiatedSeconds, channelDefaultEnabled } = settings.cdr;
  return { unanswered, congestion, initiatedSeconds, channelDefaultEnabled };
}
