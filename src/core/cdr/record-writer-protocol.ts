// What the main thread and the call-record writer thread (record-writer-worker.ts) say to each
// other. Rows go as one JSON text per table per batch: one string through the structured clone
// instead of an object per row. Progress goes the other way through shared memory, so that a
// synchronous flush (the read API, shutdown, a reload) can wait for it without the event loop.

/** Slots of the shared Int32Array. */
export const SEQUENCE = {
  /** The sequence number of the last message the writer has handled (written, or failed and kept). */
  handled: 0,
  /** The writer's state: one of WRITER_STATE. */
  state: 1,
} as const;

export const WRITER_STATE = { starting: 0, ready: 1, gone: 2 } as const;

/** Slots of the shared BigInt64Array (rows since the writer started). */
export const COUNTER = { written: 0, dropped: 1, queued: 2 } as const;

export interface WriterStart {
  /** The database file (the main thread's own connection keeps the tables and serves reads). */
  readonly file: string;
  readonly sequence: SharedArrayBuffer;
  readonly counters: SharedArrayBuffer;
  /** Rows the writer keeps waiting at most when writes fail. */
  readonly maxQueued: number;
}

export type WriterMessage =
  | { readonly kind: 'rows'; readonly sequence: number; readonly cdrs: string; readonly cels: string }
  | { readonly kind: 'expire'; readonly sequence: number; readonly cdrBefore: number; readonly celBefore: number; readonly cdrMaxRows: number; readonly celMaxRows: number }
  | { readonly kind: 'close'; readonly sequence: number };

export type WriterReport = { readonly kind: 'ready' } | { readonly kind: 'failed'; readonly message: string } | { readonly kind: 'error'; readonly message: string };
