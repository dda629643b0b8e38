// Translates the core's typed failures into ARI error answers.
import { CoreError, type CoreErrorKind } from '../core/errors.ts';
import { AriError } from './handler.ts';

const STATUS_BY_KIND: Readonly<Record<CoreErrorKind, number>> = {
  'not-found': 404,
  conflict: 409,
  forbidden: 403,
  invalid: 400,
  unprocessable: 422,
  state: 412,
  // Capacity (max_channels): Asterisk answers 500 when it cannot allocate the channel.
  unavailable: 503,
};

/** The ARI error for a core failure; `undefined` for anything that is not a CoreError. */
export function toAriError(error: unknown): AriError | undefined {
  if (error instanceof CoreError) return new AriError(STATUS_BY_KIND[error.kind], error.message);
  return undefined;
}
