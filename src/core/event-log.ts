// The event log: numbers every event an application receives (`sequence`, consecutive per
// application) and keeps the recent ones, bounded by count, bytes and age, so that a client that
// reconnects can be sent what it missed. It sits between the router that decides which
// application receives an event (applications.ts) and the transports that send it: every
// transport gets the message's JSON text (the event with `application`, `asterisk_id` and
// `sequence`), made once here, and its sequence. Per event this allocates the text and nothing
// else (see eventBody and ApplicationLog).
//
// Optionally the log is mirrored in the server's SQLite database: the events an event-loop turn
// raised are written in one transaction on the next check phase, and a transport flushes the log
// before its frames leave (the event WebSocket does when it uncorks), so an event a client has
// seen survives a crash of the process.
import type { Statement as SqliteStatement } from 'better-sqlite3';
import type { SqliteDatabase } from './database.ts';
import type { CoreEvent } from '../spec/events.ts';
import type { ApplicationSink, SharedText } from './application-sink.ts';

// Declared beside the sink's types (the router fills it); named here too, where it was first.
export { emptySharedText, type SharedText } from './application-sink.ts';
import { ApplicationLog, ReusedMessage, spliceDeliveryFields, type LoggedEvent } from './event-log-ring.ts';
import { splicedLength } from '../util/websocket-text-frame.ts';

export interface EventLogLimits {
  /** Events kept per application. */
  readonly maxEvents: number;
  /** Bytes of JSON kept per application. */
  readonly maxBytes: number;
  readonly maxAgeSeconds: number;
  /** Applications whose log is kept at once. */
  readonly maxApplications: number;
  /** Bytes of JSON kept for all applications together. */
  readonly maxTotalBytes: number;
}

export type { LoggedEvent } from './event-log-ring.ts';

/** The message a transport sends: the core event with the delivery fields. */
export type SequencedEvent = CoreEvent & { readonly application: string; readonly asterisk_id: string; readonly sequence: number };

/** What the log holds (EventLog.usage). */
export interface EventLogUsage {
  readonly applications: number;
  /** Events held across all applications. */
  readonly events: number;
  /** Bytes of JSON text held across all applications (the bound `max_total_bytes` applies to). */
  readonly bytes: number;
  /** Ring slots allocated across all applications (held or free). */
  readonly slots: number;
  readonly appended: number;
  readonly evicted: number;
}

/** Where a resuming reader starts (see EventLog.resumePoint). */
export interface ResumePoint {
  /** The first sequence to send. */
  readonly next: number;
  /** Events the reader asked for that are no longer held: [from, to], `to` undefined when unknown. */
  readonly lost?: { readonly from: number; readonly to: number | undefined; readonly reason: LossReason };
}

/**
 * `expired`: the buffer no longer holds them (count, bytes or age). `unknown_sequence`: the server
 * never numbered that far (its numbering restarted: a restart without persistence, or the log of an
 * idle application was dropped); everything after the reader's point is unknown.
 */
export type LossReason = 'expired' | 'unknown_sequence';

/** Rows written per flush at most are bounded by what one turn raised; this bounds a load. */
const LOAD_BATCH = 1000;
/** Rows per batched insert statement (4 parameters each, well within SQLite's 32766). */
const INSERT_BATCH = 64;

export class EventLog {
  private readonly logs = new Map<string, ApplicationLog>();
  private readonly limits: EventLogLimits;
  private readonly serverId: string;
  private readonly inUse: (application: string) => boolean;
  private readonly maxAgeMs: number;
  private sweepTimer: NodeJS.Timeout | undefined;
  private database: Statements | undefined;
  private readonly pendingRows: PendingRow[] = [];
  /** Applications whose oldest persisted rows must go: the first sequence still held. */
  private readonly pendingTrims = new Map<string, number>();
  /** Applications whose last-sequence/ack row needs writing. */
  private readonly dirty = new Set<string>();
  private flushScheduled = false;
  /** Parameters of one batched insert, reused by every flush. */
  private readonly insertParameters: unknown[] = new Array<unknown>(INSERT_BATCH * 4).fill(undefined);
  /** Bytes held by every log together. */
  private totalBytes = 0;
  /** Told when writing to the database fails (the events stay held in memory). */
  onError: (error: unknown) => void = () => undefined;
  /**
   * Told of each event numbered (a cluster member journals what its applications were sent, so
   * that another member can take an application over with the same numbering). Unset: no cost.
   */
  onRecorded: ((application: string, sequence: number, json: string) => void) | undefined;
  /** Events numbered (metrics, bench). */
  appended = 0;
  /** Events dropped from the buffer before any reader asked for them again. */
  evicted = 0;

  /**
   * @param inUse tells whether an application still exists (its log is never dropped to make room).
   */
  constructor(limits: EventLogLimits, serverId: string, inUse: (application: string) => boolean = () => false, private readonly now: () => number = Date.now) {
    this.limits = limits;
    this.serverId = serverId;
    this.inUse = inUse;
    this.maxAgeMs = limits.maxAgeSeconds * 1000;
  }

  /**
   * Numbers the event for the application, keeps it, and returns the message to send with its
   * entry (tests, tools: the delivery path uses deliver, which builds neither object).
   */
  append(application: string, event: CoreEvent): { message: SequencedEvent; entry: LoggedEvent } {
    const log = this.logFor(application);
    const logged = this.record(application, log, event);
    const json = logged.text();
    const sequence = log.lastSequence;
    logged.clear();
    const message = { ...event, application, asterisk_id: ownerId(event) ?? this.serverId, sequence } as SequencedEvent;
    return { message, entry: { sequence, at: log.lastActivity, json, bytes: Buffer.byteLength(json) } };
  }

  /**
   * Numbers the event for the application, keeps it, and hands the sink the core event and the
   * message (with `application`, `asterisk_id` and `sequence`): in parts when it takes them
   * (deliverMessage), as text otherwise. Per event: the event's text, once for all applications.
   */
  deliver(application: string, event: CoreEvent, sink: ApplicationSink | undefined, shared?: SharedText): void {
    const log = this.logFor(application);
    const message = this.record(application, log, event, shared);
    try {
      if (sink?.deliverMessage) sink.deliverMessage(application, event, message);
      else sink?.deliver(application, event, message.text(), message.sequence);
    } finally {
      message.clear();
    }
  }

  /** The message being delivered (one object for every event: see ReusedMessage). */
  private readonly message = new ReusedMessage();

  /** Numbers and keeps the event; returns the message (this.message, filled for this event). */
  private record(application: string, log: ApplicationLog, event: CoreEvent, shared?: SharedText): ReusedMessage {
    const sequence = ++log.lastSequence;
    const now = this.now();
    log.lastActivity = now;
    const body = eventBody(event, shared);
    const tail = shared?.tail ?? '';
    // A nested delivery (a sink that raises an event at once) must not clobber the outer message.
    const message = this.message.body === '' ? this.message : new ReusedMessage();
    if (body !== undefined && body.length > 2) {
      // The ring keeps the event's own text, the same string for every application it went to, and
      // splices the delivery fields back when it is read again: with N subscribe-all applications,
      // one copy of each event is held instead of N. Sizes are counted, not measured on a joined text.
      // A text in two parts is held joined (a chained string, flattened only if it is read again)
      // and handed to the transport in its parts.
      const bodyBytes = shared ? (shared.bytes ??= Buffer.byteLength(body)) : Buffer.byteLength(body);
      const bytes = splicedLength(bodyBytes, log.deliveryFieldsBytes, sequence);
      message.set(body, tail, bodyBytes, log.deliveryFields, log.deliveryFieldsBytes, sequence, bytes);
      log.pushBody(now, tail === '' ? body : body + tail, bytes);
    } else {
      // An event relayed from another cluster member keeps that member's asterisk_id (its owner).
      const json = body !== undefined ? spliceDeliveryFields(tail === '' ? body : body + tail, log.deliveryFields, sequence) : JSON.stringify({ ...event, application, asterisk_id: ownerId(event) ?? this.serverId, sequence });
      const bytes = Buffer.byteLength(json);
      message.set(json, '', bytes, '', 0, sequence, bytes);
      log.push(now, json, bytes);
    }
    this.totalBytes += message.bytes;
    this.appended++;
    this.trim(application, log, now);
    if (this.totalBytes > this.limits.maxTotalBytes) this.makeRoom();
    if (this.onRecorded) this.onRecorded(application, sequence, message.text());
    if (this.database) {
      this.pendingRows.push({ application, sequence, at: now, json: message.text() });
      this.dirty.add(application);
      this.scheduleFlush();
    }
    return message;
  }

  /**
   * Takes over an application's numbering from another cluster member: `entries` are the messages
   * it sent (consecutive, oldest first, as sent). What this log held of the application goes (a
   * stand-in's numbering, which no client saw); the newest run that fits the bounds is kept, and
   * numbering goes on after the last.
   */
  adopt(application: string, entries: readonly { readonly sequence: number; readonly json: string }[]): boolean {
    if (entries.length === 0) return false;
    this.forget(application);
    const log = this.logFor(application);
    const now = this.now();
    const last = entries[entries.length - 1]!.sequence;
    // Only a consecutive run ending at the last one is usable (a gap ends it), within the bounds.
    let first = entries.length - 1;
    let bytes = Buffer.byteLength(entries[first]!.json);
    while (first > 0 && entries[first - 1]!.sequence === entries[first]!.sequence - 1 && entries.length - first < this.limits.maxEvents) {
      const size = Buffer.byteLength(entries[first - 1]!.json);
      if (bytes + size > this.limits.maxBytes) break;
      bytes += size;
      first--;
    }
    log.lastSequence = last - (entries.length - first);
    for (let i = first; i < entries.length; i++) {
      const json = entries[i]!.json;
      log.push(now, json, Buffer.byteLength(json));
      log.lastSequence++;
    }
    log.lastActivity = now;
    this.totalBytes += bytes;
    if (this.database) this.dirty.add(application);
    return true;
  }

  /** The last sequence given to the application's events (0 when none). */
  lastSequence(application: string): number {
    return this.logs.get(application)?.lastSequence ?? 0;
  }

  firstHeld(application: string): number {
    return this.logs.get(application)?.firstHeld ?? this.lastSequence(application) + 1;
  }

  /** The held event with this sequence, if it is still held. */
  get(application: string, sequence: number): LoggedEvent | undefined {
    return this.logs.get(application)?.get(sequence);
  }

  /** The text of the held event with this sequence, if it is still held (replay: no entry object). */
  text(application: string, sequence: number): string | undefined {
    return this.logs.get(application)?.text(sequence);
  }

  /** Where a reader that processed every event up to `after` continues, and what it lost. */
  resumePoint(application: string, after: number): ResumePoint {
    const last = this.lastSequence(application);
    const first = this.firstHeld(application);
    if (after > last) {
      // Everything past `after` from the numbering the reader knew is gone; what the current
      // numbering holds is all new to it.
      return { next: first, lost: { from: after + 1, to: undefined, reason: 'unknown_sequence' } };
    }
    if (after + 1 < first) return { next: first, lost: { from: after + 1, to: first - 1, reason: 'expired' } };
    return { next: after + 1 };
  }

  /** The acknowledged point of an at-least-once reader; undefined when none was recorded. */
  acked(application: string): number | undefined {
    return this.logs.get(application)?.acked;
  }

  /** Records that the reader processed every event up to `sequence` (never moves back). */
  ack(application: string, sequence: number): void {
    const log = this.logFor(application);
    if (log.acked !== undefined && sequence <= log.acked) return;
    log.acked = Math.min(sequence, log.lastSequence);
    if (this.database) {
      this.dirty.add(application);
      this.scheduleFlush();
    }
  }

  /** Applications with a log (tests, metrics). */
  get applicationCount(): number {
    return this.logs.size;
  }

  /** Events held for the application (tests, bench). */
  heldCount(application: string): number {
    return this.logs.get(application)?.count ?? 0;
  }

  /**
   * What the log holds now (bench, metrics): the texts are the memory; each also costs a ring slot
   * (a pointer and two doubles) and V8's string header, about 40 bytes beside its own bytes.
   */
  usage(): EventLogUsage {
    let events = 0;
    let slots = 0;
    for (const log of this.logs.values()) {
      events += log.count;
      slots += log.json.length;
    }
    return { applications: this.logs.size, events, bytes: this.totalBytes, slots, appended: this.appended, evicted: this.evicted };
  }

  /** Starts the timer that drops events older than the age limit from logs nobody appends to. */
  start(): void {
    if (this.sweepTimer) return;
    const interval = Math.min(5000, Math.max(250, this.maxAgeMs / 4));
    this.sweepTimer = setInterval(() => this.sweep(), interval);
    this.sweepTimer.unref();
  }

  /** Drops expired events everywhere (also called by the timer). */
  sweep(): void {
    const now = this.now();
    for (const [application, log] of this.logs) this.trim(application, log, now);
  }

  /**
   * Mirrors the log in the database and loads what an earlier run kept there (numbering goes on
   * where it stopped). Rows beyond the limits are not loaded and are deleted.
   */
  open(database: SqliteDatabase): void {
    database.exec(`
      CREATE TABLE IF NOT EXISTS event_log (
        application TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        at INTEGER NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (application, sequence)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS event_log_state (
        application TEXT PRIMARY KEY,
        last_sequence INTEGER NOT NULL,
        acked INTEGER
      );
    `);
    const statements: Statements = {
      database,
      insert: database.prepare('INSERT OR REPLACE INTO event_log (application, sequence, at, message) VALUES (?, ?, ?, ?)'),
      insertBatch: database.prepare(`INSERT OR REPLACE INTO event_log (application, sequence, at, message) VALUES ${new Array(INSERT_BATCH).fill('(?, ?, ?, ?)').join(', ')}`),
      trim: database.prepare('DELETE FROM event_log WHERE application = ? AND sequence < ?'),
      saveState: database.prepare('INSERT OR REPLACE INTO event_log_state (application, last_sequence, acked) VALUES (?, ?, ?)'),
      dropApplication: database.prepare('DELETE FROM event_log WHERE application = ?'),
      dropState: database.prepare('DELETE FROM event_log_state WHERE application = ?'),
    };
    this.load(database);
    this.database = statements;
  }

  private load(database: SqliteDatabase): void {
    const now = this.now();
    const states = database
      .prepare('SELECT s.application AS application, s.last_sequence AS last, s.acked AS acked, (SELECT MAX(at) FROM event_log e WHERE e.application = s.application) AS newest FROM event_log_state s ORDER BY newest DESC LIMIT ?')
      .all(this.limits.maxApplications) as { application: string; last: number; acked: number | null; newest: number | null }[];
    const rowsOf = database.prepare('SELECT sequence, at, message FROM event_log WHERE application = ? AND sequence <= ? ORDER BY sequence DESC LIMIT ?');
    const kept = new Set<string>();
    for (const state of states) {
      if (typeof state.application !== 'string' || !Number.isSafeInteger(state.last) || state.last < 0) continue;
      const log = this.newLog(state.application);
      log.lastSequence = state.last;
      log.acked = state.acked ?? undefined;
      log.lastActivity = state.newest ?? now;
      // Newest first, until a limit is reached; then oldest first into the log.
      const newestFirst: LoggedEvent[] = [];
      let bytes = 0;
      let expected = state.last;
      read: while (newestFirst.length < this.limits.maxEvents) {
        const batch = rowsOf.all(state.application, expected, Math.min(LOAD_BATCH, this.limits.maxEvents - newestFirst.length)) as { sequence: number; at: number; message: string }[];
        if (batch.length === 0) break;
        for (const row of batch) {
          // Only a consecutive run ending at the last sequence is usable (a gap ends it).
          if (row.sequence !== expected || typeof row.message !== 'string') break read;
          const size = Buffer.byteLength(row.message);
          if (bytes + size > this.limits.maxBytes || now - row.at > this.maxAgeMs) break read;
          bytes += size;
          newestFirst.push({ sequence: row.sequence, at: row.at, json: row.message, bytes: size });
          expected--;
        }
      }
      for (let i = newestFirst.length - 1; i >= 0; i--) log.push(newestFirst[i]!.at, newestFirst[i]!.json, newestFirst[i]!.bytes);
      this.totalBytes += log.bytes;
      this.logs.set(state.application, log);
      kept.add(state.application);
    }
    // Rows of logs not loaded, and rows older than what was loaded, go.
    const trim = database.prepare('DELETE FROM event_log WHERE application = ? AND sequence < ?');
    const dropAll = database.prepare('DELETE FROM event_log WHERE application NOT IN (SELECT application FROM event_log_state)');
    database.transaction(() => {
      for (const [application, log] of this.logs) trim.run(application, log.firstHeld);
      const names = database.prepare('SELECT application FROM event_log_state').all() as { application: string }[];
      const dropState = database.prepare('DELETE FROM event_log_state WHERE application = ?');
      for (const { application } of names) if (!kept.has(application)) dropState.run(application);
      dropAll.run();
    })();
  }

  /** Writes what is pending and stops mirroring (before the database closes). */
  close(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.flushSafely();
    this.database = undefined;
  }

  /** Writes what is pending now; a failure is reported to onError (the events stay in memory). */
  flushSafely(): void {
    try {
      this.flush();
    } catch (error) {
      this.onError(error);
    }
  }

  /** Writes pending events, trims and states in one transaction. */
  flush(): void {
    const statements = this.database;
    if (!statements) return;
    if (this.pendingRows.length === 0 && this.pendingTrims.size === 0 && this.dirty.size === 0) return;
    const rows = this.pendingRows.splice(0);
    const trims = [...this.pendingTrims];
    this.pendingTrims.clear();
    const dirty = [...this.dirty];
    this.dirty.clear();
    statements.database.transaction(() => {
      // Rows go INSERT_BATCH to a statement (one bind and step for many rows), the rest one by one.
      const batch = this.insertParameters;
      let filled = 0;
      try {
        for (const { application, sequence, at, json } of rows) {
          // An event already dropped from the buffer within this turn is not written.
          const log = this.logs.get(application);
          if (!log || sequence < log.firstHeld) continue;
          batch[filled++] = application;
          batch[filled++] = sequence;
          batch[filled++] = at;
          batch[filled++] = json;
          if (filled === batch.length) {
            statements.insertBatch.run(batch);
            filled = 0;
          }
        }
        for (let i = 0; i < filled; i += 4) statements.insert.run(batch[i], batch[i + 1], batch[i + 2], batch[i + 3]);
      } finally {
        // The texts are not held past the flush.
        batch.fill(undefined);
      }
      for (const [application, firstHeld] of trims) statements.trim.run(application, firstHeld);
      for (const application of dirty) {
        const log = this.logs.get(application);
        if (log) statements.saveState.run(application, log.lastSequence, log.acked ?? null);
      }
    })();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      // A full disk or a locked database must not take the event path down: the events stay
      // held in memory (that batch is not written; a restart resumes from what was).
      this.flushSafely();
    });
  }

  private logFor(application: string): ApplicationLog {
    let log = this.logs.get(application);
    if (!log) {
      if (this.logs.size >= this.limits.maxApplications) this.dropIdlest();
      log = this.newLog(application);
      this.logs.set(application, log);
    }
    return log;
  }

  private newLog(application: string): ApplicationLog {
    // The ring holds the count bound plus the event being added before the trim.
    return new ApplicationLog(application, this.serverId, this.limits.maxEvents + 1);
  }

  /** Makes room: the log of an application that no longer exists and raised nothing for the longest. */
  private dropIdlest(): void {
    let idlest: string | undefined;
    let idlestAt = Infinity;
    for (const [application, log] of this.logs) {
      if (log.lastActivity < idlestAt && !this.inUse(application)) {
        idlest = application;
        idlestAt = log.lastActivity;
      }
    }
    if (idlest === undefined) {
      // Every application has a connection. Dropping a log would restart its numbering under a
      // live stream, which then ignores every event until the new numbers pass the old ones (a
      // client opening many applications could silence everyone else's). The idlest log with
      // events lets them go instead and keeps its numbering. Logs beyond the limit are no more than
      // the applications registered, and the bytes they hold stay within max_total_bytes.
      let emptied: [string, ApplicationLog] | undefined;
      for (const entry of this.logs) if (entry[1].count > 0 && (!emptied || entry[1].lastActivity < emptied[1].lastActivity)) emptied = entry;
      if (emptied) this.trim(emptied[0], emptied[1], -Infinity, -1);
      return;
    }
    this.forget(idlest);
  }

  /** Drops an application's log: its numbering restarts (or is adopted). */
  private forget(application: string): void {
    this.totalBytes -= this.logs.get(application)?.bytes ?? 0;
    this.logs.delete(application);
    this.pendingTrims.delete(application);
    this.dirty.delete(application);
    // Rows of this turn must not be written under a numbering that is about to restart.
    for (let i = this.pendingRows.length - 1; i >= 0; i--) if (this.pendingRows[i]!.application === application) this.pendingRows.splice(i, 1);
    if (this.database) {
      this.database.dropApplication.run(application);
      this.database.dropState.run(application);
    }
  }

  /**
   * Over the total byte budget: the oldest events of the largest logs go until a tenth of the
   * budget is free again, so that the scan over the logs happens once per many events.
   */
  private makeRoom(): void {
    const target = this.limits.maxTotalBytes * 0.9;
    while (this.totalBytes > target) {
      let largest: string | undefined;
      let largestBytes = 0;
      for (const [application, log] of this.logs) {
        if (log.bytes > largestBytes) {
          largest = application;
          largestBytes = log.bytes;
        }
      }
      if (largest === undefined) return;
      const log = this.logs.get(largest)!;
      // Down to the size of the next largest share of the target, at least one event.
      const keep = Math.min(log.bytes - 1, Math.max(0, target / Math.max(1, this.logs.size)));
      this.trim(largest, log, -Infinity, keep);
    }
  }

  private trim(application: string, log: ApplicationLog, now: number, maxBytes = this.limits.maxBytes): void {
    const before = log.count;
    const bytesBefore = log.bytes;
    const oldestAllowed = now - this.maxAgeMs;
    while (log.count > 0 && (log.count > this.limits.maxEvents || log.bytes > maxBytes || log.oldestAt < oldestAllowed)) {
      log.dropOldest();
    }
    this.totalBytes -= bytesBefore - log.bytes;
    const dropped = before - log.count;
    if (dropped === 0) return;
    this.evicted += dropped;
    if (this.database) {
      this.pendingTrims.set(application, log.firstHeld);
      this.scheduleFlush();
    }
  }
}

/** The asterisk_id an event already carries (relayed from another cluster member), if any. */
function ownerId(event: CoreEvent): string | undefined {
  const id = (event as { asterisk_id?: unknown }).asterisk_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The event's own text (`{…}`), into which the delivery fields are spliced before the closing
 * brace (spliceDeliveryFields) — what serialising `{ ...event, application, asterisk_id, sequence }`
 * gives, without copying the event into a new object. Undefined for an event that carries one of
 * those fields itself (the copy would keep its place) or serialises itself (toJSON): it takes the copy.
 */
function eventBody(event: CoreEvent, shared?: SharedText): string | undefined {
  const fields = event as unknown as Record<string, unknown>;
  if ('application' in fields || 'asterisk_id' in fields || 'sequence' in fields || 'toJSON' in fields) return undefined;
  let text = shared?.text;
  if (text === undefined) {
    const source = shared?.source;
    if (shared?.split && source?.splitEventText?.(event, shared.split)) {
      text = shared.split.head;
      shared.tail = shared.split.tail;
      shared.bytes = shared.split.bytes;
    } else {
      text = source?.eventText(event) ?? JSON.stringify(event);
    }
    if (shared) shared.text = text;
  }
  // Always an object's text; the check keeps the splice honest if that ever changes.
  const last = shared?.tail ? shared.tail : text;
  return text.length >= 2 && text.charCodeAt(0) === 0x7b && last.charCodeAt(last.length - 1) === 0x7d ? text : undefined;
}

interface PendingRow {
  readonly application: string;
  readonly sequence: number;
  readonly at: number;
  readonly json: string;
}

type Statement = SqliteStatement<unknown[]>;

interface Statements {
  readonly database: SqliteDatabase;
  readonly insert: Statement;
  readonly insertBatch: Statement;
  readonly trim: Statement;
  readonly saveState: Statement;
  readonly dropApplication: Statement;
  readonly dropState: Statement;
}
