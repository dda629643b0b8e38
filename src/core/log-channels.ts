// Log channels in the manner of Asterisk's logger: named destinations (the console, or files in
// the logs directory), each recording a chosen set of levels. The server's pino logger feeds
// them through `createPinoDestination()`, and ARI creates, deletes and rotates them at run time.
// As in Asterisk, channels created at run time do not survive a restart.
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
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
}

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
  abstract rotate(): void;
  abstract close(): void;

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
  rotate(): void {}
  close(): void {}
}

/** A file channel keeps its file open for appending; one it cannot open or write is Disabled until rotated. */
class FileChannel extends LogChannel {
  readonly type = 'File' as const;
  #fd: number | undefined;

  constructor(name: string, levels: ReadonlySet<LogLevel>, readonly path: string) {
    super(name, levels);
    this.#open();
  }

  get enabled(): boolean {
    return this.#fd !== undefined;
  }

  write(line: string): void {
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, line);
    } catch {
      // A full disk or a revoked file must not take the server down; the channel reports Disabled instead.
      this.close();
    }
  }

  /** Sequential rotation as in Asterisk: the file moves to `<name>.<N>` (first free N) and a fresh one is opened. */
  rotate(): void {
    this.close();
    if (existsSync(this.path)) {
      let sequence = 0;
      while (existsSync(`${this.path}.${sequence}`)) sequence += 1;
      renameSync(this.path, `${this.path}.${sequence}`);
    }
    this.#open();
  }

  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }

  #open(): void {
    try {
      this.#fd = openSync(this.path, 'a');
    } catch {
      this.#fd = undefined;
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
  readonly #channels = new Map<string, LogChannel>();

  constructor(options: LogChannelsOptions) {
    this.#logsDir = options.logsDir;
    this.#consoleSink = options.consoleSink ?? process.stdout;
  }

  /** Creates the start-up channels: the console (when wanted) and `messages.log`, each for notice, warning and error. */
  openDefaults(options: { console: boolean }): void {
    if (options.console && !this.#channels.has(CONSOLE_CHANNEL_NAME)) {
      this.create(CONSOLE_CHANNEL_NAME, DEFAULT_CONFIGURATION);
    }
    if (!this.#channels.has(DEFAULT_FILE_CHANNEL_NAME)) this.create(DEFAULT_FILE_CHANNEL_NAME, DEFAULT_CONFIGURATION);
  }

  list(): LogChannelRecord[] {
    return [...this.#channels.values()].map((channel) => channel.record());
  }

  /** `console` names the console; any other name is a file in the logs directory. */
  create(name: string, configuration: string): void {
    const levels = parseLogLevels(configuration);
    if (this.#channels.has(name)) throw new ConflictError('Log channel already exists');
    if (name === CONSOLE_CHANNEL_NAME) {
      this.#channels.set(name, new ConsoleChannel(name, levels, this.#consoleSink));
      return;
    }
    assertFileChannelName(name);
    mkdirSync(this.#logsDir, { recursive: true });
    this.#channels.set(name, new FileChannel(name, levels, join(this.#logsDir, name)));
  }

  /** Stops recording to the channel; its file stays on disk. */
  delete(name: string): void {
    const channel = this.#channels.get(name);
    if (!channel) throw new NotFoundError('Log channel does not exist');
    channel.close();
    this.#channels.delete(name);
  }

  rotate(name: string): void {
    const channel = this.#channels.get(name);
    if (!channel) throw new NotFoundError('Log channel does not exist');
    channel.rotate();
  }

  /** Records `message` at `level` in every channel that records that level. */
  write(level: LogLevel, message: string): void {
    this.#deliver([level], formatLogLine(level, message));
  }

  /** A pino destination: each JSON record becomes a readable line in the channels recording its level. */
  createPinoDestination(): { write(record: string): void } {
    return { write: (record: string) => this.#writePinoRecord(record) };
  }

  close(): void {
    for (const channel of this.#channels.values()) channel.close();
    this.#channels.clear();
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
function pinoRecordTime(time: unknown): Date {
  const date = typeof time === 'number' || typeof time === 'string' ? new Date(time) : new Date(NaN);
  return Number.isNaN(date.getTime()) ? new Date() : date;
}

function describePinoRecord(record: Record<string, unknown>): string {
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

function assertFileChannelName(name: string): void {
  if (name === '' || name === '.' || name.includes('/') || name.includes('\\') || name.includes('..') || name.includes('\0')) {
    throw new InvalidError(`Invalid log channel name '${name}'`);
  }
}
