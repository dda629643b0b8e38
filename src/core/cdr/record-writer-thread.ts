// The main thread's side of the call-record writer thread (record-writer-worker.ts): hands batches
// over, asks for the retention sweep, and can wait — synchronously, through shared memory — until
// the thread has handled everything handed, so a read right after a flush finds the rows (the
// reads stay on the main thread's connection: WAL lets them see what the thread committed).
import { Worker } from 'node:worker_threads';
import { COUNTER, SEQUENCE, WRITER_STATE, type WriterMessage, type WriterReport, type WriterStart } from './record-writer-protocol.ts';

/** How long a synchronous flush waits for the thread at most (a disk stuck for longer is reported, not waited for). */
const FLUSH_WAIT_MS = 10_000;

export interface WriterThreadEvents<Batch> {
  readonly onError: (error: unknown) => void;
  /**
   * The thread ended without being closed, or never opened the database: `unhandled` are the
   * batches it never took (the caller writes them itself), `lostRows` those it took and could not
   * write (kept after a failed write when it went).
   */
  readonly onGone: (unhandled: Batch[], lostRows: number) => void;
}

interface HandedBatch<Batch> {
  readonly sequence: number;
  readonly rows: number;
  readonly batch: Batch;
}

/** `Batch` is what the caller keeps of each batch until the thread has taken it (its records), to write them itself if the thread goes. */
export class RecordWriterThread<Batch> {
  readonly #worker: Worker;
  readonly #sequence: Int32Array;
  readonly #counters: BigInt64Array;
  readonly #events: WriterThreadEvents<Batch>;
  /** The last sequence number handed (messages are numbered from 1). */
  #posted = 0;
  /** Batches handed and not yet taken, oldest first. */
  #handed: HandedBatch<Batch>[] = [];
  #handedRows = 0;
  #gone = false;
  #closing = false;
  readonly #exited: Promise<void>;

  constructor(file: string, maxQueued: number, events: WriterThreadEvents<Batch>) {
    this.#events = events;
    const sequence = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
    const counters = new SharedArrayBuffer(3 * BigInt64Array.BYTES_PER_ELEMENT);
    this.#sequence = new Int32Array(sequence);
    this.#counters = new BigInt64Array(counters);
    const start: WriterStart = { file, sequence, counters, maxQueued };
    this.#worker = spawnWriter(start);
    // The thread must not keep a server that is otherwise done alive; close() ends it.
    this.#worker.unref();
    this.#worker.on('message', (report: WriterReport) => this.#report(report));
    this.#worker.on('error', (error) => this.#events.onError(error));
    this.#exited = new Promise((resolve) => {
      this.#worker.once('exit', () => {
        this.#lose();
        resolve();
      });
    });
  }

  /** False once the thread has ended or failed to open the database: the caller writes itself. */
  get usable(): boolean {
    return !this.#gone && !this.#closing && Atomics.load(this.#sequence, SEQUENCE.state) !== WRITER_STATE.gone;
  }

  get written(): number {
    return Number(Atomics.load(this.#counters, COUNTER.written));
  }

  get dropped(): number {
    return Number(Atomics.load(this.#counters, COUNTER.dropped));
  }

  /** Rows handed and not yet written: in the message queue or kept by the thread after a failed write. */
  get pending(): number {
    this.#forgetTaken();
    return this.#handedRows + Number(Atomics.load(this.#counters, COUNTER.queued));
  }

  /** Hands one batch over (each table's rows as one JSON array of rows; '' for none). */
  hand(cdrs: string, cels: string, rows: number, batch: Batch): void {
    this.#forgetTaken();
    const sequence = this.#next();
    this.#handed.push({ sequence, rows, batch });
    this.#handedRows += rows;
    this.#post({ kind: 'rows', sequence, cdrs, cels });
  }

  /** Drops the batches the thread has taken (messages are handled in order). */
  #forgetTaken(): void {
    if (this.#handed.length === 0) return;
    const handled = Atomics.load(this.#sequence, SEQUENCE.handled);
    let taken = 0;
    // Sequence numbers wrap within an Int32: the distance tells which side of `handled` a batch is on.
    while (taken < this.#handed.length && ((handled - this.#handed[taken].sequence) | 0) >= 0) this.#handedRows -= this.#handed[taken++].rows;
    if (taken > 0) this.#handed.splice(0, taken);
  }

  expire(cdrBefore: number, celBefore: number, cdrMaxRows: number, celMaxRows: number): void {
    this.#post({ kind: 'expire', sequence: this.#next(), cdrBefore, celBefore, cdrMaxRows, celMaxRows });
  }

  /**
   * Blocks until the thread has handled everything handed so far (or has gone, or the wait is
   * over): only the rare paths wait (the read API, a reload, shutdown), never a call's.
   */
  waitHandled(): boolean {
    const deadline = Date.now() + FLUSH_WAIT_MS;
    for (;;) {
      const handled = Atomics.load(this.#sequence, SEQUENCE.handled);
      if (handled === this.#posted) return true;
      if (Atomics.load(this.#sequence, SEQUENCE.state) === WRITER_STATE.gone) return false;
      const left = deadline - Date.now();
      if (left <= 0) {
        this.#events.onError(new Error(`the call-record writer thread has not written for ${FLUSH_WAIT_MS} ms`));
        return false;
      }
      Atomics.wait(this.#sequence, SEQUENCE.handled, handled, left);
    }
  }

  /** Lets the thread write what it holds and end; resolves when it has. */
  close(): Promise<void> {
    if (!this.#gone && !this.#closing) {
      this.#closing = true;
      // Whoever waits for the end is kept alive until it comes.
      this.#worker.ref();
      this.#post({ kind: 'close', sequence: this.#next() });
    }
    return this.#exited;
  }

  #next(): number {
    // Wraps within the Int32 slot; only equality is ever compared.
    this.#posted = (this.#posted + 1) | 0;
    return this.#posted;
  }

  #post(message: WriterMessage): void {
    this.#worker.postMessage(message);
  }

  #report(report: WriterReport): void {
    if (report.kind === 'error') this.#events.onError(new Error(report.message));
    else if (report.kind === 'failed') this.#events.onError(new Error(`the call-record writer thread could not open the database: ${report.message}`));
  }

  #lose(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#forgetTaken();
    const unhandled = this.#handed.map((handed) => handed.batch);
    this.#handed = [];
    this.#handedRows = 0;
    this.#events.onGone(unhandled, Number(Atomics.load(this.#counters, COUNTER.queued)));
  }

  /** For a caller that stops waiting for a thread that went (the exit event cannot come while it blocks). */
  abandon(): void {
    this.#lose();
  }
}

/**
 * From dist/ the compiled worker runs as is; from src/ (tests and benches under tsx) the thread
 * registers tsx before it imports the .ts entry, as the media workers do (worker threads do not
 * inherit the loader).
 */
function spawnWriter(start: WriterStart): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './record-writer-worker.ts' : './record-writer-worker.js', import.meta.url);
  // stdout/stderr left unread (`true`), as the media workers' are: reading a worker's stdio stream
  // on the main thread slows every HTTP socket's stream functions (docs/performance.md, issue 25).
  const options = { workerData: start, execArgv: [], stdout: true, stderr: true };
  if (!fromSource) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
