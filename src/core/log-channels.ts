// Log channels in the manner of Asterisk's logger: named destinations (the console, or files in
// the logs directory), each recording a chosen set of levels. The server's pino logger feeds
// them through `createPinoDestination()`, and ARI creates, deletes and rotates them at run time.
// As in Asterisk, channels created at run time do not survive a restart.
//
// File channels hold no descriptor: lines are queued and appended in batches, off the event loop,
// by opening the file without following links, checking it is a regular file with no other
// hard link, appending and closing. `flush()`/`close()` resolve once every queued line is written.
import { closeSync, constants, fstatSync, mkdirSync, openSync } from 'node:fs';
import { lstat, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { ConflictError, InvalidError, NotFoundError } from './errors.ts';

/** Asterisk's level names, in the order a channel's configuration is reported. */
export const LOG_LEVELS = ['debug', 'notice', 'warning', 'error', 'verbose', 'dtmf', 'fax', 'security'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogChannelType = 'Console' | 'File';

export interface LogChannelRecord {
  channel: string;
  type: LogChannelType;
  status: 'Enabled' | 'Disabled';
  /** The recorded levels joined by spaces, e.g. `notice warning error`. */
  configuration: string;
}

/** Anything text can be written to; process.stdout in production, a collector in tests. */
export interface TextSink {
  write(text: string): unknown;
}

export interface LogChannelsOptions {
  /** Directory holding the file channels. */
  readonly logsDir: string;
  /** Where the console channel writes; defaults to standard output. */
  readonly consoleSink?: TextSink;
  /** Most channels at once, the console and messages.log included (`logging.max_log_channels`). */
  readonly maxChannels?: number;
}

export const DEFAULT_MAX_LOG_CHANNELS = 64;
/** Text a file channel may hold while its disk lags; lines beyond are dropped and counted. */
const MAX_QUEUED_CHARS = 1024 * 1024;
/** Longest file name most file systems take (NAME_MAX). */
const MAX_NAME_BYTES = 255;

export const CONSOLE_CHANNEL_NAME = 'console';
export const DEFAULT_CONFIGURATION = 'notice,warning,error';
export const DEFAULT_FILE_CHANNEL_NAME = 'messages.log';

/** Parses a comma- or space-separated level list; `*` stands for every level. */
export function parseLogLevels(configuration: string): Set<LogLevel> {
  const words = configuration.split(/[\s,]+/).filter((word) => word !== '');
  if (words.length === 0) throw new InvalidError('Configuration levels are required');
  const levels = new Set<LogLevel>();
  for (const word of words.map((w) => w.toLowerCase())) {
    if (word === '*') LOG_LEVELS.forEach((level) => levels.add(level));
    else if (isLogLevel(word)) levels.add(word);
    else throw new InvalidError(`Unknown log level '${word}'`);
  }
  return levels;
}

function isLogLevel(word: string): word is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(word);
}

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/** Local time `YYYY-MM-DD HH:MM:SS.mmm`, the prefix of every log line. */
function formatLogTimestamp(date: Date): string {
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
  );
}

export function formatLogLine(level: LogLevel, message: string, time: Date = new Date()): string {
  return `[${formatLogTimestamp(time)}] ${level.toUpperCase()}: ${message}\n`;
}

abstract class LogChannel {
  abstract readonly type: LogChannelType;
  constructor(
    readonly name: string,
    readonly levels: ReadonlySet<LogLevel>,
  ) {}
  abstract get enabled(): boolean;
  abstract write(line: string): void;
  abstract rotate(): Promise<void>;
  /** Resolves when every line written so far has reached its destination. */
  abstract flush(): Promise<void>;
  /** Flushes, then takes no more lines. */
  abstract close(): Promise<void>;

  record(): LogChannelRecord {
    return {
      channel: this.name,
      type: this.type,
      status: this.enabled ? 'Enabled' : 'Disabled',
      configuration: LOG_LEVELS.filter((level) => this.levels.has(level)).join(' '),
    };
  }
}

class ConsoleChannel extends LogChannel {
  readonly type = 'Console' as const;
  constructor(name: string, levels: ReadonlySet<LogLevel>, private readonly sink: TextSink) {
    super(name, levels);
  }
  get enabled(): boolean {
    return true;
  }
  write(line: string): void {
    this.sink.write(line);
  }
  /** A terminal has nothing to rotate. */
  async rotate(): Promise<void> {}
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

const OPEN_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Why a log file may not be written, or undefined when it is a regular file with no other link. */
function refusal(stats: { isFile(): boolean; nlink: number }): string | undefined {
  if (!stats.isFile()) return 'is not a regular file';
  if (stats.nlink > 1) return 'has other hard links';
  return undefined;
}

function openProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  // O_NOFOLLOW refuses a symbolic link with ELOOP; O_NONBLOCK refuses a FIFO nobody reads with ENXIO.
  if (code === 'ELOOP' || code === 'EMLINK') return 'is a symbolic link';
  if (code === 'ENXIO') return 'is not a regular file';
  return `cannot be opened (${code ?? String(err)})`;
}

/** Creates the file if missing and checks it may be written; returns the problem, if any. Synchronous: only at creation. */
function probeLogFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (err) {
    return openProblem(err);
  }
  try {
    return refusal(fstatSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** Appends `text` to a regular, singly linked file, never through a link. */
async function appendToLogFile(path: string, text: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (err) {
    throw new Error(`${path} ${openProblem(err)}`);
  }
  try {
    const problem = refusal(await handle.stat());
    if (problem) throw new Error(`${path} ${problem}`);
    if (text !== '') await handle.appendFile(text);
  } finally {
    await handle.close();
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A file channel queues its lines and appends them in batches (one per turn of the event loop at
 * most), one batch at a time. A file it cannot write — missing permissions, or replaced by a link,
 * a directory or a FIFO — turns it Disabled until it is rotated.
 */
class FileChannel extends LogChannel {
  readonly type = 'File' as const;
  #queue: string[] = [];
  #queuedChars = 0;
  #dropped = 0;
  #enabled: boolean;
  #closed = false;
  #scheduled = false;
  /** Batches and rotations, in order. */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(name: string, levels: ReadonlySet<LogLevel>, readonly path: string, enabled: boolean) {
    super(name, levels);
    this.#enabled = enabled;
  }

  get enabled(): boolean {
    return this.#enabled && !this.#closed;
  }

  write(line: string): void {
    if (!this.enabled) return;
    if (this.#queuedChars + line.length > MAX_QUEUED_CHARS) {
      this.#dropped += 1;
      return;
    }
    this.#queue.push(line);
    this.#queuedChars += line.length;
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.flush();
    });
  }

  flush(): Promise<void> {
    return this.#then(() => this.#writeQueued());
  }

  /** Sequential rotation as in Asterisk: the file moves to `<name>.<N>` (first free N) and a fresh one is created. */
  rotate(): Promise<void> {
    return this.#then(async () => {
      await this.#writeQueued();
      if (await exists(this.path)) {
        let sequence = 0;
        while (await exists(`${this.path}.${sequence}`)) sequence += 1;
        try {
          await rename(this.path, `${this.path}.${sequence}`);
        } catch (err) {
          // A name near 255 bytes has no room for `.<N>` (ENAMETOOLONG); a directory that turned
          // read-only refuses too. Either is the file system's answer to this request, not a fault.
          const code = (err as NodeJS.ErrnoException).code ?? String(err);
          const why = code === 'ENAMETOOLONG' ? 'its rotated file name would be too long' : `the file cannot be renamed (${code})`;
          throw new ConflictError(`Log channel ${this.name} cannot be rotated: ${why}`);
        }
      }
      try {
        await appendToLogFile(this.path, '');
        this.#enabled = true;
      } catch {
        this.#enabled = false;
      }
    });
  }

  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
  }

  #then(task: () => Promise<void>): Promise<void> {
    const run = this.#chain.then(task);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #writeQueued(): Promise<void> {
    if (this.#queue.length === 0 && this.#dropped === 0) return;
    let text = this.#queue.join('');
    if (this.#dropped > 0) text += formatLogLine('warning', `${this.#dropped} log lines dropped: the log file did not keep up`);
    this.#queue = [];
    this.#queuedChars = 0;
    this.#dropped = 0;
    if (!this.#enabled) return;
    try {
      await appendToLogFile(this.path, text);
    } catch {
      // A full disk or a file swapped for a link must not take the server down; the channel reports Disabled instead.
      this.#enabled = false;
    }
  }
}

/** Pino's numeric levels → the Asterisk levels a line is recorded under (the first names the line). */
function asteriskLevelsOfPino(pinoLevel: number): readonly LogLevel[] {
  if (pinoLevel >= 50) return ['error'];
  if (pinoLevel >= 40) return ['warning'];
  if (pinoLevel >= 30) return ['notice', 'verbose'];
  return ['debug'];
}

/** Fields pino adds to every record that the readable line leaves out. */
const PINO_HOUSEKEEPING_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'err']);

export class LogChannels {
  readonly #logsDir: string;
  readonly #consoleSink: TextSink;
  readonly #maxChannels: number;
  readonly #channels = new Map<string, LogChannel>();
  /** Deleted channels still writing their last lines. */
  readonly #closing = new Set<Promise<void>>();

  constructor(options: LogChannelsOptions) {
    this.#logsDir = options.logsDir;
    this.#consoleSink = options.consoleSink ?? process.stdout;
    this.#maxChannels = options.maxChannels ?? DEFAULT_MAX_LOG_CHANNELS;
  }

  /**
   * Creates the start-up channels: the console (when wanted) and `messages.log`, each for notice,
   * warning and error. They do not count against the limit, and a file that may not be written
   * leaves its channel Disabled rather than stopping the server.
   */
  openDefaults(options: { console: boolean }): void {
    const levels = parseLogLevels(DEFAULT_CONFIGURATION);
    if (options.console && !this.#channels.has(CONSOLE_CHANNEL_NAME)) {
      this.#channels.set(CONSOLE_CHANNEL_NAME, new ConsoleChannel(CONSOLE_CHANNEL_NAME, levels, this.#consoleSink));
    }
    if (!this.#channels.has(DEFAULT_FILE_CHANNEL_NAME)) {
      const path = join(this.#logsDir, DEFAULT_FILE_CHANNEL_NAME);
      let writable = false;
      try {
        mkdirSync(this.#logsDir, { recursive: true });
        writable = probeLogFile(path) === undefined;
      } catch {
        // an unusable logs directory: the channel reports Disabled
      }
      this.#channels.set(DEFAULT_FILE_CHANNEL_NAME, new FileChannel(DEFAULT_FILE_CHANNEL_NAME, levels, path, writable));
    }
  }

  list(): LogChannelRecord[] {
    return [...this.#channels.values()].map((channel) => channel.record());
  }

  /**
   * `console` names the console; any other name is a file in the logs directory. A bad name or
   * level list → InvalidError; an existing name, the channel limit, or a file that is a link, not
   * a regular file or hard-linked elsewhere → ConflictError.
   */
  create(name: string, configuration: string): void {
    const levels = parseLogLevels(configuration);
    if (name !== CONSOLE_CHANNEL_NAME) assertFileChannelName(name);
    if (this.#channels.has(name)) throw new ConflictError('Log channel already exists');
    if (this.#channels.size >= this.#maxChannels) {
      throw new ConflictError(`Too many log channels: at most ${this.#maxChannels} (logging.max_log_channels)`);
    }
    if (name === CONSOLE_CHANNEL_NAME) {
      this.#channels.set(name, new ConsoleChannel(name, levels, this.#consoleSink));
      return;
    }
    mkdirSync(this.#logsDir, { recursive: true });
    const path = join(this.#logsDir, name);
    const problem = probeLogFile(path);
    if (problem) throw new ConflictError(`Log channel ${name} cannot be created: the file ${problem}`);
    this.#channels.set(name, new FileChannel(name, levels, path, true));
  }

  /** Stops recording to the channel; lines already written still reach its file, which stays on disk. */
  delete(name: string): void {
    const channel = this.#channels.get(name);
    if (!channel) throw new NotFoundError('Log channel does not exist');
    this.#channels.delete(name);
    const closing = channel.close().catch(() => undefined);
    this.#closing.add(closing);
    void closing.then(() => this.#closing.delete(closing));
  }

  rotate(name: string): Promise<void> {
    const channel = this.#channels.get(name);
    if (!channel) throw new NotFoundError('Log channel does not exist');
    return channel.rotate();
  }

  /** Records `message` at `level` in every channel that records that level. */
  write(level: LogLevel, message: string): void {
    this.#deliver([level], formatLogLine(level, message));
  }

  /** A pino destination: each JSON record becomes a readable line in the channels recording its level. */
  createPinoDestination(): { write(record: string): void } {
    return { write: (record: string) => this.#writePinoRecord(record) };
  }

  /** Resolves when every line written so far is in its file. */
  async flush(): Promise<void> {
    await Promise.all([...[...this.#channels.values()].map((channel) => channel.flush().catch(() => undefined)), ...this.#closing]);
  }

  /** Writes what is queued and closes every channel; resolves when all lines are in their files. */
  async close(): Promise<void> {
    const channels = [...this.#channels.values()];
    this.#channels.clear();
    await Promise.all([...channels.map((channel) => channel.close().catch(() => undefined)), ...this.#closing]);
  }

  #deliver(levels: readonly LogLevel[], line: string): void {
    for (const channel of this.#channels.values()) {
      if (levels.some((level) => channel.levels.has(level))) channel.write(line);
    }
  }

  #writePinoRecord(record: string): void {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(record) as Record<string, unknown>;
    } catch {
      // Not pino's JSON (e.g. a pretty-printed or foreign line): keep it rather than lose it.
      this.write('notice', record.trimEnd());
      return;
    }
    const levels = asteriskLevelsOfPino(typeof parsed.level === 'number' ? parsed.level : 30);
    const time = pinoRecordTime(parsed.time);
    this.#deliver(levels, formatLogLine(levels[0], describePinoRecord(parsed), time));
  }
}

/** Pino's `time` is epoch milliseconds by default, or an ISO string with `stdTimeFunctions.isoTime`. */
export function pinoRecordTime(time: unknown): Date {
  const date = typeof time === 'number' || typeof time === 'string' ? new Date(time) : new Date(NaN);
  return Number.isNaN(date.getTime()) ? new Date() : date;
}

export function describePinoRecord(record: Record<string, unknown>): string {
  const context = Object.fromEntries(Object.entries(record).filter(([key]) => !PINO_HOUSEKEEPING_FIELDS.has(key)));
  let text = typeof record.msg === 'string' ? record.msg : '';
  if (Object.keys(context).length > 0) text += `${text ? ' ' : ''}${JSON.stringify(context)}`;
  const error = record.err as { stack?: unknown; message?: unknown } | undefined;
  if (error && typeof error === 'object') {
    const detail = typeof error.stack === 'string' ? error.stack : String(error.message ?? '');
    if (detail) text += `${text ? '\n' : ''}${detail}`;
  }
  return text;
}

/** A file name in the logs directory: no path separators, no `..`, no control characters, at most 255 bytes. */
function assertFileChannelName(name: string): void {
  if (name === '' || name === '.' || name.includes('..') || /[/\\\x00-\x1f\x7f]/.test(name)) {
    throw new InvalidError(`Invalid log channel name ${JSON.stringify(name)}: no path separators, '..' or control characters`);
  }
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw new InvalidError(`Invalid log channel name: longer than ${MAX_NAME_BYTES} bytes`);
}
