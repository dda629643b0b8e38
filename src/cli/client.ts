// How the admin CLI talks to the server: ARI requests (and the `/admin/...` routes for what ARI has
// no operation for) with the configured credentials, each failure turned into one line and an exit
// code (EXIT).

/** Exit codes (documented in docs/cli.md and `--help`). */
export const EXIT = Object.freeze({
  ok: 0,
  /** Anything else: the server answered 5xx, an unexpected failure. */
  failure: 1,
  /** Bad command line or configuration (unknown command, missing argument, crypt-only user without --password). */
  usage: 2,
  /** The server could not be reached (connection refused, timeout, no pidfile for `stop`). */
  unreachable: 3,
  /** The credentials were refused (401) or the user may not do this (403). */
  auth: 4,
  /** The channel, module, context … does not exist (404). */
  notFound: 5,
  /** The server refused the request (400, 409, 422, 503 …). */
  refused: 6,
});

export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** Where the server is and how to authenticate (from the configuration, options and environment). */
export interface Target {
  /** `http://host:port` (with the http.prefix when --url gives one). */
  readonly base: string;
  readonly auth: string;
}

/** An ARI request (`/ari<path>`); resolves with the parsed JSON answer (null when empty). */
export function ari(target: Target, method: string, path: string, what: string): Promise<unknown> {
  return request(target, method, `/ari${path}`, what);
}

/** A request to the server's admin routes (`/admin<path>`, src/ops/admin.ts). */
export function adminRequest(target: Target, method: string, path: string, what: string): Promise<unknown> {
  return request(target, method, `/admin${path}`, what);
}

async function request(target: Target, method: string, path: string, what: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${target.base}${path}`, { method, headers: { authorization: target.auth }, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new CliError(`cannot reach the server at ${target.base}: ${reason}`, EXIT.unreachable);
  }
  const text = await response.text();
  if (response.ok) {
    if (text === '') return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CliError(`${what}: the server answered something that is not JSON`, EXIT.failure);
    }
  }
  let message = text;
  try {
    const body = JSON.parse(text) as { message?: string; error?: string };
    message = body.message ?? body.error ?? text;
  } catch {
    // not JSON: keep the text
  }
  message = String(message).replace(/\s+/g, ' ').trim().slice(0, 500);
  const status = response.status;
  const code =
    status === 401 || status === 403 ? EXIT.auth
      : status === 404 ? EXIT.notFound
        : status >= 500 && status !== 503 ? EXIT.failure
          : EXIT.refused;
  const why = status === 401 ? 'the server refused the credentials' : message;
  throw new CliError(`${what}: ${status} ${why}`, code);
}
