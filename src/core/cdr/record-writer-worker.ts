// The call-record writer thread: inserts the CDR and CEL rows the main thread hands over (one JSON
// text per table per batch) and runs the retention sweep, on its own connection to the server's
// database, so SQLite's per-row work (binding 22 parameters, the index) is not the event loop's.
// Rows a failed write leaves are kept, bounded, and tried again with the next batch or a second
// later. Every message handled is announced through the shared counters (record-writer-thread.ts),
// which is what a synchronous flush on the main thread waits for.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type SqliteDatabase } from '../database.ts';
import { insertStatements, MAX_ROWS_PER_TRANSACTION, writeRows, type InsertStatements, type RowValues } from './record-rows.ts';
import { COUNTER, SEQUENCE, WRITER_STATE, type WriterMessage, type WriterReport, type WriterStart } from './record-writer-protocol.ts';

/** A failed write is tried again this much later when nothing else comes (a locked or full disk). */
const RETRY_MS = 1000;

class RecordWriter {
  readonly #database: SqliteDatabase;
  readonly #statements: InsertStatements;
  readonly #sequence: Int32Array;
  readonly #counters: BigInt64Array;
  readonly #maxQueued: number;
  #cdrs: RowValues[] = [];
  #cels: RowValues[] = [];
  #retry: NodeJS.Timeout | undefined;

  constructor(start: WriterStart) {
    this.#database = openDatabase(start.file);
    this.#statements = insertStatements(this.#database);
    this.#sequence = new Int32Array(start.sequence);
    this.#counters = new BigInt64Array(start.counters);
    this.#maxQueued = start.maxQueued;
  }

  handle(message: WriterMessage): void {
    try {
      if (message.kind === 'rows') this.#rows(message.cdrs, message.cels);
      else if (message.kind === 'expire') this.#expire(message);
      else this.#close();
    } catch (error) {
      report({ kind: 'error', message: describe(error) });
    } finally {
      Atomics.store(this.#sequence, SEQUENCE.handled, message.sequence);
      Atomics.notify(this.#sequence, SEQUENCE.handled);
    }
  }

  #rows(cdrText: string, celText: string): void {
    const cdrs = parseRows(cdrText);
    const cels = parseRows(celText);
    for (const row of cdrs) this.#cdrs.push(row);
    for (const row of cels) this.#cels.push(row);
    this.#bound();
    this.#write();
  }

  /** Never more than the bound waiting: beyond, the oldest go (a stuck disk must not grow the heap). */
  #bound(): void {
    const excess = this.#cdrs.length + this.#cels.length - this.#maxQueued;
    if (excess <= 0) return;
    const fromCdrs = Math.min(excess, this.#cdrs.length);
    this.#cdrs.splice(0, fromCdrs);
    this.#cels.splice(0, excess - fromCdrs);
    Atomics.add(this.#counters, COUNTER.dropped, BigInt(excess));
  }

  /** Everything queued, a bounded transaction at a time; on failure what is left waits for the retry. */
  #write(): void {
    while (this.#cdrs.length + this.#cels.length > 0) {
      const cdrs = this.#cdrs.slice(0, MAX_ROWS_PER_TRANSACTION);
      const cels = this.#cels.slice(0, MAX_ROWS_PER_TRANSACTION - cdrs.length);
      try {
        writeRows(this.#database, this.#statements, cdrs, cels);
      } catch (error) {
        report({ kind: 'error', message: describe(error) });
        this.#scheduleRetry();
        break;
      }
      this.#cdrs.splice(0, cdrs.length);
      this.#cels.splice(0, cels.length);
      Atomics.add(this.#counters, COUNTER.written, BigInt(cdrs.length + cels.length));
    }
    Atomics.store(this.#counters, COUNTER.queued, BigInt(this.#cdrs.length + this.#cels.length));
  }

  #scheduleRetry(): void {
    if (this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#write();
    }, RETRY_MS);
  }

  #expire(message: Extract<WriterMessage, { kind: 'expire' }>): void {
    this.#database.prepare('DELETE FROM cdr WHERE start < ?').run(message.cdrBefore);
    this.#database.prepare('DELETE FROM cel WHERE eventtime < ?').run(message.celBefore);
    this.#database.prepare('DELETE FROM cdr WHERE id <= (SELECT id FROM cdr ORDER BY id DESC LIMIT 1 OFFSET ?)').run(message.cdrMaxRows);
    this.#database.prepare('DELETE FROM cel WHERE id <= (SELECT id FROM cel ORDER BY id DESC LIMIT 1 OFFSET ?)').run(message.celMaxRows);
  }

  /** The last message: one more try for what is queued, then the file is let go and the thread ends. */
  #close(): void {
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#write();
    this.#database.close();
    markState(this.#sequence, WRITER_STATE.gone);
    parentPort?.close();
  }
}

/** A batch is the main thread's own JSON (an array of rows); anything else is a bug reported, not written. */
function parseRows(text: string): RowValues[] {
  if (text === '') return [];
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error('a call-record batch is not an array of rows');
  return parsed as RowValues[];
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function markState(sequence: Int32Array, state: number): void {
  Atomics.store(sequence, SEQUENCE.state, state);
  // A flush waiting on the handled slot looks at the state too.
  Atomics.notify(sequence, SEQUENCE.handled);
}

function report(message: WriterReport): void {
  parentPort?.postMessage(message);
}

const start = workerData as WriterStart;
let writer: RecordWriter | undefined;
try {
  writer = new RecordWriter(start);
} catch (error) {
  // The file could not be opened here: the main thread goes back to writing itself.
  markState(new Int32Array(start.sequence), WRITER_STATE.gone);
  report({ kind: 'failed', message: describe(error) });
}
if (writer) {
  const opened = writer;
  parentPort?.on('message', (message: WriterMessage) => opened.handle(message));
  markState(new Int32Array(start.sequence), WRITER_STATE.ready);
  report({ kind: 'ready' });
}
