// What travels between members over NATS: a forwarded ARI request and its answer, as JSON. Every
// message from NATS is checked before use: a member (or anything else allowed to publish on the
// cluster's subjects) may send anything, and a bad message is answered 400, never a crash.
import type { AriUser } from '../config/config.ts';
import { parseJsonObject } from '../util/json-object.ts';

/** The request as the ARI dispatcher sees it (structurally ari/request-types.ts's AriRequest). */
export interface ClusterAriRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly contentType?: string;
  readonly body?: Buffer;
  readonly user: AriUser;
  readonly origin?: string;
  readonly transport: 'http' | 'websocket';
  readonly forwarded?: boolean;
}

/** The answer as the dispatcher gives it (structurally ari/request-types.ts's AriResponse). */
export interface ClusterAriResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly json?: unknown;
  readonly raw?: Buffer | NodeJS.ReadableStream;
  readonly contentType?: string;
}

/** A forwarded request on the wire. The user travels by name: the owner applies its own rights. */
export interface WireRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly contentType?: string;
  /** Base64. */
  readonly body?: string;
  readonly user: string;
  readonly origin?: string;
  readonly transport: 'http' | 'websocket';
  /** Asked of every member at once: serve it only when holding this resource, else answer NOT_OWNER. */
  readonly owned?: OwnedResource;
}

export type ResourceKind = 'channel' | 'bridge' | 'playback' | 'recording';

export interface OwnedResource {
  readonly kind: ResourceKind;
  readonly id: string;
}

/** The header of an answer from a member that does not hold the resource it was asked about. */
export const NOT_OWNER_HEADER = 'X-Patchbay-Not-Owner';
/** The header of a forwarded answer naming the member that served it. */
export const SERVED_BY_HEADER = 'X-Patchbay-Node';

const KINDS: ReadonlySet<string> = new Set(['channel', 'bridge', 'playback', 'recording']);

function readOwned(value: unknown): OwnedResource | undefined | string {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object') return 'bad owned';
  const { kind, id } = value as Record<string, unknown>;
  if (typeof kind !== 'string' || !KINDS.has(kind) || !isShortString(id)) return 'bad owned';
  return { kind: kind as ResourceKind, id };
}

export interface WireResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly json?: unknown;
  /** Base64 of a binary answer. */
  readonly raw?: string;
  readonly contentType?: string;
}

const MAX_FIELD = 8192;

export function encodeRequest(request: ClusterAriRequest, owned?: OwnedResource): Uint8Array {
  const wire: WireRequest = {
    method: request.method,
    path: request.path,
    query: request.query.toString(),
    ...(request.contentType !== undefined ? { contentType: request.contentType } : {}),
    ...(request.body !== undefined && request.body.length > 0 ? { body: request.body.toString('base64') } : {}),
    user: request.user.name,
    ...(request.origin !== undefined ? { origin: request.origin } : {}),
    transport: request.transport,
    ...(owned ? { owned } : {}),
  };
  return Buffer.from(JSON.stringify(wire));
}

function isShortString(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_FIELD;
}

/** The request in a message, or a sentence saying why it is not one. */
export function decodeRequest(data: Uint8Array): WireRequest | string {
  const r = parseJsonObject(data);
  if (typeof r === 'string') return r;
  if (!isShortString(r.method) || !/^[A-Z]{1,16}$/.test(r.method)) return 'bad method';
  if (!isShortString(r.path) || !r.path.startsWith('/')) return 'bad path';
  if (!isShortString(r.query)) return 'bad query';
  if (r.contentType !== undefined && !isShortString(r.contentType)) return 'bad contentType';
  if (r.body !== undefined && typeof r.body !== 'string') return 'bad body';
  if (!isShortString(r.user) || r.user === '') return 'bad user';
  if (r.origin !== undefined && !isShortString(r.origin)) return 'bad origin';
  if (r.transport !== 'http' && r.transport !== 'websocket') return 'bad transport';
  const owned = readOwned(r.owned);
  if (typeof owned === 'string') return owned;
  return {
    method: r.method,
    path: r.path,
    query: r.query,
    ...(r.contentType !== undefined ? { contentType: r.contentType } : {}),
    ...(typeof r.body === 'string' ? { body: r.body } : {}),
    user: r.user,
    ...(typeof r.origin === 'string' ? { origin: r.origin } : {}),
    transport: r.transport,
    ...(owned ? { owned } : {}),
  };
}

export function encodeResponse(response: WireResponse): Uint8Array {
  return Buffer.from(JSON.stringify(response));
}

/** The answer in a reply; a malformed one is the owner's failure (502). */
export function decodeResponse(data: Uint8Array): ClusterAriResponse {
  try {
    const r = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
    const status = r.status;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) throw new Error('status');
    const headers: Record<string, string> = {};
    if (r.headers !== null && typeof r.headers === 'object') {
      for (const [name, value] of Object.entries(r.headers as Record<string, unknown>)) {
        if (typeof value === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(name) && !/[\r\n]/.test(value)) headers[name] = value;
      }
    }
    if (typeof r.raw === 'string') {
      return { status, headers, raw: Buffer.from(r.raw, 'base64'), ...(typeof r.contentType === 'string' ? { contentType: r.contentType } : {}) };
    }
    return { status, headers, ...(r.json !== undefined ? { json: r.json } : {}) };
  } catch {
    return { status: 502, headers: {}, json: { message: 'The cluster member owning the resource gave a malformed answer' } };
  }
}

/** A NATS subject token for an id a client chose: anything but letters, digits, `_`, `-` and `=` is hex-escaped. */
export function subjectToken(id: string): string {
  let out = '';
  for (const char of id) {
    out += /[A-Za-z0-9_-]/.test(char) ? char : `=${char.codePointAt(0)!.toString(16)}=`;
  }
  return out === '' ? '=' : out;
}
