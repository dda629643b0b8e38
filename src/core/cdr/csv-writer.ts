// Asterisk's cdr_csv backend: `<astlogdir>/cdr-csv/Master.csv`, one line per record in its column
// order and quoting, and a file per accountcode (`accountlogs`). Lines are queued and appended
// together at each flush, off the path of the event that finished the call.
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AMA_FLAGS, formatCdrTime, type CallDetailRecord } from './record.ts';
import { dropOldest, RecordStore } from './record-store.ts';

export interface CsvOptions {
  /** `usegmtime`. */
  readonly useGmtTime: boolean;
  /** `loguniqueid`. */
  readonly logUniqueId: boolean;
  /** `loguserfield`. */
  readonly logUserField: boolean;
  /** `accountlogs`. */
  readonly accountLogs: boolean;
  /** `newcdrcolumns`. */
  readonly newCdrColumns: boolean;
}

/** cdr_csv refuses records longer than its buffer; so do we. */
const MAX_LINE_BYTES = 1024;
/** Account files kept open for appends at once per flush (a flood of account codes makes no flood of files). */
const MAX_ACCOUNT_FILES_PER_FLUSH = 64;

/**
 * A field's text as cdr_csv's append_string writes it between its double quotes: a quote doubled.
 * The quotes around it are in the line's template, so a field without a quote (most) is the
 * field's own string, not a new one.
 */
function escaped(value: string): string {
  return value.includes('"') ? value.replace(/"/g, '""') : value;
}

/**
 * The pieces of the line being built, reused by every line (csvLine runs to its end without
 * yielding). Joined once into a flat string: a template of some forty pieces made a chain of
 * intermediate strings (≈ 1.3 KB a line) that measuring the line then flattened into a copy.
 * Written by index and never emptied (`length = 0` gives its store back, and the next line's
 * pushes grew a new one); the last line's pieces stay referenced until the next line.
 */
const pieces: (string | number)[] = [];
let count = 0;

function put(piece: string | number): void {
  pieces[count++] = piece;
}

/** Adds a quoted text field and the separator after it. */
function quoted(value: string, separator: string): void {
  put(escaped(value));
  put(separator);
}

/** Adds a time field and the separator after it: an empty time is an empty field, not "" (append_date writes only the comma). */
function time(ms: number, useGmtTime: boolean, separator: string): void {
  if (ms) {
    put('"');
    put(formatCdrTime(ms, useGmtTime));
    put('"');
  }
  put(separator);
}

/** One Master.csv line (with its newline), or undefined when it is too long, as cdr_csv drops it. */
export function csvLine(record: CallDetailRecord, options: CsvOptions): string | undefined {
  count = 0;
  put('"');
  quoted(record.accountcode, '","');
  quoted(record.src, '","');
  quoted(record.dst, '","');
  quoted(record.dcontext, '","');
  quoted(record.clid, '","');
  quoted(record.channel, '","');
  quoted(record.dstchannel, '","');
  quoted(record.lastapp, '","');
  quoted(record.lastdata, '",');
  time(record.start, options.useGmtTime, ',');
  time(record.answer, options.useGmtTime, ',');
  time(record.end, options.useGmtTime, ',');
  put(record.duration);
  put(',');
  put(record.billsec);
  put(',"');
  quoted(record.disposition, '","');
  put(AMA_FLAGS.includes(record.amaflags) ? record.amaflags : 'DOCUMENTATION');
  put('"');
  if (options.logUniqueId) quotedAfter(',"', record.uniqueid);
  if (options.logUserField) quotedAfter(',"', record.userfield);
  if (options.newCdrColumns) {
    quotedAfter(',"', record.peeraccount);
    quotedAfter(',"', record.linkedid);
    put(',');
    put(record.sequence);
  }
  put('\n');
  // Shorter than the last line's pieces (an empty time): trimmed in place, no new store.
  if (pieces.length !== count) pieces.length = count;
  const line = pieces.join('');
  return Buffer.byteLength(line) < MAX_LINE_BYTES - 5 ? line : undefined;
}

/** Adds `before`, a quoted text field and its closing quote. */
function quotedAfter(before: string, value: string): void {
  put(before);
  put(escaped(value));
  put('"');
}

/** cdr_csv's writefile_account check: a code that could leave the directory is refused. */
function safeAccountFile(accountcode: string): boolean {
  return accountcode.length <= 80 && !accountcode.includes('/') && !accountcode.startsWith('.') && !accountcode.includes('\0');
}

export class CsvWriter {
  readonly directory: string;
  readonly master: string;
  #lines: { line: string; accountcode: string }[] = [];
  #writing: Promise<void> = Promise.resolve();
  dropped = 0;

  constructor(
    logsDir: string,
    private readonly options: CsvOptions,
    private readonly onError: (error: unknown) => void,
  ) {
    this.directory = join(logsDir, 'cdr-csv');
    this.master = join(this.directory, 'Master.csv');
  }

  add(record: CallDetailRecord): void {
    const line = csvLine(record, this.options);
    if (line === undefined) {
      this.dropped += 1;
      return;
    }
    this.#lines.push({ line, accountcode: record.accountcode });
    if (this.#lines.length > RecordStore.MAX_PENDING) this.dropped += dropOldest(this.#lines);
  }

  /** Appends what is queued (after any append still under way); resolves when it is on disk. */
  flush(): Promise<void> {
    if (this.#lines.length === 0) return this.#writing;
    const lines = this.#lines;
    this.#lines = [];
    this.#writing = this.#writing.then(() => this.#append(lines)).catch((error: unknown) => this.onError(error));
    return this.#writing;
  }

  async #append(lines: readonly { line: string; accountcode: string }[]): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    await appendFile(this.master, lines.map((l) => l.line).join(''));
    if (!this.options.accountLogs) return;
    const byAccount = new Map<string, string[]>();
    for (const { line, accountcode } of lines) {
      if (accountcode === '' || !safeAccountFile(accountcode)) continue;
      if (!byAccount.has(accountcode) && byAccount.size >= MAX_ACCOUNT_FILES_PER_FLUSH) continue;
      const list = byAccount.get(accountcode) ?? [];
      list.push(line);
      byAccount.set(accountcode, list);
    }
    for (const [accountcode, list] of byAccount) await appendFile(join(this.directory, `${accountcode}.csv`), list.join(''));
  }
}
