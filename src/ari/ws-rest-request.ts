// A REST request sent over an ARI WebSocket (a `RESTRequest` text frame) read as Asterisk 22 reads
// it (res/ari/ari_websocket_requests.c): every field is checked before anything is dispatched, and
// each wrong one has its own 400 — reason phrase `Bad request`, and the message Asterisk writes — so
// that a client sees the same answer from either server. Everything in the frame is hostile: no
// field is trusted for its type, and the number of query parameters is bounded.

import { parseBoundedJson } from '../util/json-object.ts';

/** The methods Asterisk knows (ast_get_http_method_from_string: exact, case-sensitive). */
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']);
/** Query parameters one request may carry (its uri's query and `query_strings` together). */
export const MAX_QUERY_PARAMETERS = 256;
const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

/** What every RESTResponse echoes of its request: strings only, `""` when absent or of another type. */
export interface RestEcho {
  readonly transaction_id: string;
  readonly request_id: string;
  /** The request's uri without its query. */
  readonly uri: string;
}

export interface ParsedRestRequest {
  readonly echo: RestEcho;
  readonly method: string;
  /** The path below /ari, with its leading slash. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly contentType?: string;
  readonly body?: Buffer;
}

/** A request refused before dispatch: its status, reason phrase and error message (none: no body). */
export interface RestRefusal {
  readonly echo: RestEcho;
  readonly status: number;
  readonly reason: string;
  readonly message?: string;
}

/** A frame that is no RESTRequest of Asterisk's at all, but an acknowledgement (events-resume.md). */
export interface RestAck {
  readonly ack: Record<string, unknown>;
}

export type RestFrame = { readonly ok: true; readonly request: ParsedRestRequest } | { readonly ok: false; readonly refusal: RestRefusal } | RestAck;

const NO_ECHO: RestEcho = { transaction_id: '', request_id: '', uri: '' };

const stringOr = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The uri without its query (what a RESTResponse echoes). */
function pathOf(uri: string): string {
  const queryStart = uri.indexOf('?');
  return queryStart < 0 ? uri : uri.slice(0, queryStart);
}

/**
 * Reads one text frame. `Ack` frames (Patchbay's resumable streams) are returned as they are;
 * anything else must be a RESTRequest Asterisk would take.
 */
export function readRestFrame(text: string): RestFrame {
  // A nesting deeper than jansson's limit is unparseable for Asterisk too.
  const read = parseBoundedJson(text);
  if (read === undefined) {
    // Asterisk answers this one without a body, the failure named in the reason phrase.
    return { ok: false, refusal: { echo: NO_ECHO, status: 400, reason: 'Failed to parse request message JSON' } };
  }
  const parsed = read.value;
  // A JSON value that is no object has no fields: no 'type'.
  const fields: Record<string, unknown> = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  if (fields.type === 'Ack') return { ack: fields };
  const uri = stringOr(fields.uri);
  const echo: RestEcho = { transaction_id: stringOr(fields.transaction_id), request_id: stringOr(fields.request_id), uri: pathOf(uri) };
  const refuse = (message: string): RestFrame => ({ ok: false, refusal: { echo, status: 400, reason: 'Bad request', message } });
  if (stringOr(fields.type) === '') return refuse("No 'type' property.");
  if (fields.type !== 'RESTRequest') return refuse('Unknown request type.');
  if (uri === '') return refuse("Empty or missing 'uri' property.");
  const method = stringOr(fields.method);
  if (!METHODS.has(method)) return refuse("Unknown or missing 'method' property.");
  const queryStart = uri.indexOf('?');
  const query = new URLSearchParams(queryStart < 0 ? '' : uri.slice(queryStart + 1));
  // A value that is no array is ignored (as Asterisk does); an array's entries must be {name, value} strings.
  if (Array.isArray(fields.query_strings)) {
    for (const entry of fields.query_strings as unknown[]) {
      const pair = entry !== null && typeof entry === 'object' ? (entry as { name?: unknown; value?: unknown }) : undefined;
      if (typeof pair?.name !== 'string' || typeof pair.value !== 'string') return refuse("Unable to parse 'query_strings' array.");
      if (query.size < MAX_QUERY_PARAMETERS) query.append(pair.name, pair.value);
    }
  }
  // Leading slashes are forgiven (`/asterisk/ping` is `asterisk/ping`), as Patchbay always did.
  const path = `/${pathOf(uri).replace(/^\/+/, '')}`;
  const body = stringOr(fields.message_body);
  if (body === '') return { ok: true, request: { echo, method, path, query } };
  const contentType = stringOr(fields.content_type);
  if (contentType === '') return refuse("No 'content_type' for 'message_body'.");
  if (contentType === JSON_TYPE) {
    if (parseBoundedJson(body) === undefined) return refuse(`Unable to parse 'message_body' as '${JSON_TYPE}'.`);
  } else if (contentType !== FORM) {
    return refuse('Unknown content type.');
  }
  return { ok: true, request: { echo, method, path, query, contentType, body: Buffer.from(body) } };
}

/**
 * What Asterisk answers instead of dispatching: the event stream's own resource cannot be opened
 * from inside a socket (400), and a binary answer (a stored recording's file) cannot travel in one
 * (406 with its own reason phrase and no body).
 */
export function websocketOnlyAnswer(request: ParsedRestRequest): RestRefusal | undefined {
  if (request.path === '/events' && request.method === 'GET') return { echo: request.echo, status: 400, reason: 'Bad request', message: "Can't upgrade to websocket from a websocket" };
  return undefined;
}

/** The reason phrase and body Asterisk gives a dispatched request's 406 (a binary answer). */
export const BINARY_ANSWER_REASON = 'Not Acceptable.  Use HTTP GET';
