// Structured JSON logging (pino). Level and destination come from the configuration.
import path from 'node:path';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PatchbayConfig } from './config/config.ts';

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

/**
 * JSON lines to `options.destination` if given, else to stdout when `logging.console` is true,
 * else appended to `<dirs.logs>/patchbay.log` (directory created as needed).
 */
export function createLogger(
  config: PatchbayConfig,
  options: { destination?: NodeJS.WritableStream; alsoTo?: { write(record: string): void } } = {},
): Logger {
  const destination: DestinationStream =
    (options.destination as DestinationStream | undefined) ??
    (config.logging.console
      ? pino.destination({ dest: 1, sync: true })
      : pino.destination({ dest: path.join(config.dirs.logs, 'patchbay.log'), mkdir: true, sync: false }));
  return pino(
    {
      name: 'patchbay',
      level: config.logging.level,
      base: { pid: process.pid, hostname: config.systemName },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    // The log channels (files and console managed through ARI) receive every record too.
    options.alsoTo
      ? pino.multistream([
          { stream: destination, level: config.logging.level },
          { stream: options.alsoTo, level: config.logging.level },
        ])
      : destination,
  );
}
