// Failures of core operations, classified by what went wrong rather than by an HTTP status:
// the core knows nothing of HTTP, and the interface layer maps each kind to its answer. Each kind
// also has a stable machine-readable `code` (fastify style, `PB_NOT_FOUND`), so code that embeds
// the core, reads its logs or tests it matches on the code, never on the wording of a message
// (docs/errors.md lists them).

/** What kind of failure a CoreError reports; the interface layer chooses the wire status from it. */
export type CoreErrorKind = 'not-found' | 'conflict' | 'forbidden' | 'invalid' | 'unprocessable' | 'state' | 'unavailable';

/** The stable code of each kind; a new kind gets a new code, and a code never changes meaning. */
export type CoreErrorCode = 'PB_NOT_FOUND' | 'PB_CONFLICT' | 'PB_FORBIDDEN' | 'PB_INVALID' | 'PB_UNPROCESSABLE' | 'PB_STATE' | 'PB_UNAVAILABLE';

export abstract class CoreError extends Error {
  abstract readonly kind: CoreErrorKind;
  /** An own property, as on Node's and fastify's errors, so log serialisers carry it. */
  abstract readonly code: CoreErrorCode;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The addressed object does not exist (or is not active, e.g. a module that is not loaded). */
export class NotFoundError extends CoreError {
  readonly kind = 'not-found' as const;
  readonly code = 'PB_NOT_FOUND' as const;
}

/** The object exists but its present state or an existing object prevents the operation. */
export class ConflictError extends CoreError {
  readonly kind = 'conflict' as const;
  readonly code = 'PB_CONFLICT' as const;
}

/** The operation is understood but the object or its backing store refuses it. */
export class ForbiddenError extends CoreError {
  readonly kind = 'forbidden' as const;
  readonly code = 'PB_FORBIDDEN' as const;
}

/** The request itself is malformed: a bad name, value or missing input. */
export class InvalidError extends CoreError {
  readonly kind = 'invalid' as const;
  readonly code = 'PB_INVALID' as const;
}

/** The input is well formed but refers to something that cannot be used (e.g. an unknown format). */
export class UnprocessableError extends CoreError {
  readonly kind = 'unprocessable' as const;
  readonly code = 'PB_UNPROCESSABLE' as const;
}

/** A precondition on the object's state does not hold (e.g. a channel that is not answered). */
export class StateError extends CoreError {
  readonly kind = 'state' as const;
  readonly code = 'PB_STATE' as const;
}

/** The server cannot take the request on now (a capacity limit is reached); it may succeed later. */
export class UnavailableError extends CoreError {
  readonly kind = 'unavailable' as const;
  readonly code = 'PB_UNAVAILABLE' as const;
}
