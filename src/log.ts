// Structured logging (pino). Level, format and destination come from the configuration; see
// "Where the log goes" in docs/configuration.md.
import { access, rename } from 'node:fs/promises';
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
  let logFile: { readonly path: string; readonly stream: ReturnType<typeof pino.destination> } | undefined;
  if (options.destination) destination = options.destination as DestinationStream;
  else if (!config.logging.console) {
    const file = path.join(config.dirs.logs, 'patchbay.log');
    const stream = pino.destination({ dest: file, mkdir: true, sync: false });
    logFile = { path: file, stream };
    destination = stream;
  }
  else if (resolveLogFormat(config.logging.format) === 'pretty') destination = prettyDestination(process.stdout);
  else destination = pino.destination({ dest: 1, sync: true });
  const family = new Set<WeakRef<Logger>>();
  const logger = pino(
    {
      name: 'patchbay',
      // Remembered so that `core set debug` reaches the child loggers too (a child keeps the
      // level it was created with when its parent's changes).
      onChild: (child) => void family.add(new WeakRef(child)),
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
  families.set(logger, family);
  if (logFile) logFiles.set(logger, logFile);
  return logger;
}

const families = new WeakMap<Logger, Set<WeakRef<Logger>>>();
const logFiles = new WeakMap<Logger, { readonly path: string; readonly stream: ReturnType<typeof pino.destination> }>();

/** Sets the level of a logger made by createLogger and of every child logger made from it since. */
export function setLogLevel(root: Logger, level: string): void {
  root.level = level;
  const family = families.get(root);
  if (!family) return;
  for (const ref of family) {
    const child = ref.deref();
    if (child) child.level = level;
    else family.delete(ref);
  }
}

/**
 * `logger rotate` for the server's own log file (when it writes one): the file moves to
 * `patchbay.log.<N>` (first free N, as the log channels rotate) and a fresh one is opened.
 * Resolves with the file's path, or undefined when the log goes elsewhere.
 */
export async function rotateLogFile(root: Logger): Promise<string | undefined> {
  const file = logFiles.get(root);
  if (!file) return undefined;
  const exists = (name: string) => access(name).then(() => true, () => false);
  try {
    file.stream.flushSync();
  } catch {
    // Not open yet (nothing written): nothing to flush.
  }
  if (await exists(file.path)) {
    let sequence = 0;
    while (await exists(`${file.path}.${sequence}`)) sequence += 1;
    await rename(file.path, `${file.path}.${sequence}`);
  }
  file.stream.reopen();
  return file.path;
}
