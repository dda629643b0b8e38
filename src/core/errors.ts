// Failures of core operations, classified by what went wrong rather than by an HTTP status:
// the core knows nothing of HTTP, and the interface layer maps each kind to its answer.

/** What kind of failure a CoreError reports; the interface layer chooses the wire status from it. */
export type CoreErrorKind = 'not-found' | 'conflict' | 'forbidden' | 'invalid' | 'unprocessable' | 'state' | 'unavailable';

export abstract class CoreError extends Error {
  abstract readonly kind: CoreErrorKind;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The addressed object does not exist (or is not active, e.g. a module that is not loaded). */
export class NotFoundError extends CoreError {
  readonly kind = 'not-found' as const;
}

/** The object exists but its present state or an existing object prevents the operation. */
export class ConflictError extends CoreError {
  readonly kind = 'conflict' as const;
}

/** The operation is understood but the object or its backing store refuses it. */
export class ForbiddenError extends CoreError {
  readonly kind = 'forbidden' as const;
}

/** The request itself is malformed: a bad name, value or missing input. */
export class InvalidError extends CoreError {
  readonly kind = 'invalid' as const;
}

/** The input is well formed but refers to something that cannot be used (e.g. an unknown format). */
export class UnprocessableError extends CoreError {
  readonly kind = 'unprocessable' as const;
}

/** A precondition on the object's state does not hold (e.g. a channel that is not answered). */
export class StateError extends CoreError {
  readonly kind = 'state' as const;
}

/** The server cannot take the request on now (a capacity limit is reached); it may succeed later. */
export class UnavailableError extends CoreError {
  readonly kind = 'unavailable' as const;
}
