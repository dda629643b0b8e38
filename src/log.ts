// Structured logging (pino). Level, format and destination come from the configuration; see
// "Where the log goes" in docs/configuration.md.
import path from 'node:path';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PatchbayConfig } from './config/config.ts';
import { describePinoRecord, pinoRecordTime } from './core/log-channels.ts';

export type { Logger };

/** Never log credentials, whatever shape the logged object has. */
const REDACT = [
  'password',
  '*.password',
  'api_key',
  '*.api_key',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
];

export type LogFormat = 'pretty' | 'json';

/** `auto` is pretty on a terminal, JSON otherwise (a service manager, a container, a pipe). */
export function resolveLogFormat(format: 'auto' | LogFormat, isTTY: boolean | undefined = process.stdout.isTTY): LogFormat {
  return format === 'auto' ? (isTTY ? 'pretty' : 'json') : format;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/** One pino JSON record as a readable line: `[YYYY-MM-DD HH:MM:SS.mmm] LEVEL: message {context}`. */
export function prettyLine(record: string): string {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(record) as Record<string, unknown>;
  } catch {
    return record.endsWith('\n') ? record : `${record}\n`;
  }
  const d = pinoRecordTime(parsed.time);
  const stamp = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  const level = LEVEL_NAMES[typeof parsed.level === 'number' ? parsed.level : 30] ?? 'INFO';
  return `[${stamp}] ${level}: ${describePinoRecord(parsed)}\n`;
}

/** A pino destination writing readable lines to `out`. */
export function prettyDestination(out: { write(text: string): unknown }): DestinationStream {
  return { write: (record: string) => void out.write(prettyLine(record)) };
}

/**
 * One output: to `options.destination` if given (JSON; tests capture it), else to stdout when
 * `logging.console` is true (readable or JSON lines per `logging.format`), else JSON lines
 * appended to `<dirs.logs>/patchbay.log`. The log channels (`options.alsoTo`) receive every record
 * too and keep the lines of the levels each records.
 */
export function createLogger(
  config: PatchbayConfig,
  options: { destination?: NodeJS.WritableStream; alsoTo?: { write(record: string): void } } = {},
): Logger {
  let destination: DestinationStream;
  if (options.destination) destination = options.destination as DestinationStream;
  else if (!config.logging.console) destination = pino.destination({ dest: path.join(config.dirs.logs, 'patchbay.log'), mkdir: true, sync: false });
  else if (resolveLogFormat(config.logging.format) === 'pretty') destination = prettyDestination(process.stdout);
  else destination = pino.destination({ dest: 1, sync: true });
  return pino(
    {
      name: 'patchbay',
      level: config.logging.level,
      base: { pid: process.pid, hostname: config.systemName },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    options.alsoTo
      ? // The streams take every level: the logger's own level gates, so a reload can change it.
        pino.multistream([
          { stream: destination, level: 'trace' },
          { stream: options.alsoTo, level: 'trace' },
        ])
      : destination,
  );
}
