/**
 * The SIP message model (RFC 3261 §7): requests and responses with an ordered header list, typed
 * accessors and a serializer. Header names are case-insensitive and compact forms are expanded
 * for lookup; the names are kept as written for serialization. Accessors that parse (Via, From,
 * CSeq …) return undefined for values they cannot read — they never throw.
 */
import { randomFillSync } from 'node:crypto';
import { formatHost, formatUri, parseHostPort, parseNameAddr, parseParams, parseUri, type NameAddr, type Uri } from './uri.ts';
import { ownedUtf8 } from '../util/owned-buffer.ts';

export const MAGIC_COOKIE = 'z9hG4bK';

const COMPACT: Record<string, string> = {
  a: 'accept-contact', b: 'referred-by', c: 'content-type', d: 'request-disposition', e: 'content-encoding',
  f: 'from', i: 'call-id', j: 'reject-contact', k: 'supported', l: 'content-length', m: 'contact',
  n: 'identity-info', o: 'event', r: 'refer-to', s: 'subject', t: 'to', u: 'allow-events', v: 'via',
  x: 'session-expires', y: 'identity',
};

/**
 * The compact names Patchbay writes with `compact_headers=yes` (pjsip's `use_compact_form`): those
 * of the headers pjsip itself gives a short name, its core's (RFC 3261 §7.3.3, §20) and those of its
 * event and session-timer modules. Refer-To, Referred-By and the rest pjsip writes as generic
 * headers, in full, and so does Patchbay.
 */
const WRITTEN_COMPACT: Readonly<Record<string, string>> = {
  via: 'v', from: 'f', to: 't', 'call-id': 'i', contact: 'm', 'content-type': 'c', 'content-encoding': 'e',
  subject: 's', supported: 'k', event: 'o', 'allow-events': 'u', 'session-expires': 'x',
};

const CANONICAL: Record<string, string> = {
  'call-id': 'Call-ID', cseq: 'CSeq', 'www-authenticate': 'WWW-Authenticate', 'mime-version': 'MIME-Version',
};

/** Lower-cased long form of a header name (`v` → `via`, `Call-Id` → `call-id`). */
export function headerKey(name: string): string {
  const lower = name.toLowerCase();
  return lower.length === 1 ? (COMPACT[lower] ?? lower) : lower;
}

/** A conventional spelling for a header name (`call-id` → `Call-ID`, `content-length` → `Content-Length`). */
export function canonicalName(name: string): string {
  const key = headerKey(name);
  return (Object.hasOwn(CANONICAL, key) ? CANONICAL[key] : undefined) ?? key.replace(/(^|-)([a-z])/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase());
}

/** Headers whose values are comma-separated lists (RFC 3261 §7.3.1), so a line can hold several. */
const LIST_HEADERS = new Set([
  'via', 'route', 'record-route', 'contact', 'allow', 'supported', 'require', 'proxy-require', 'unsupported',
  'accept', 'accept-encoding', 'accept-language', 'allow-events', 'content-encoding', 'path', 'service-route',
  'in-reply-to', 'alert-info', 'call-info', 'error-info', 'warning', 'reply-to',
]);

export function isListHeader(name: string): boolean {
  return LIST_HEADERS.has(headerKey(name));
}

/** Splits a header value at commas outside quoted strings and angle brackets. */
export function splitList(value: string): string[] {
  const out: string[] = [];
  let start = 0;
  let inQuote = false;
  let inAngle = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (inQuote) {
      if (ch === '\\') i++;
      else if (ch === '"') inQuote = false;
    } else if (ch === '"') inQuote = true;
    else if (ch === '<') inAngle = true;
    else if (ch === '>') inAngle = false;
    else if (ch === ',' && !inAngle) {
      const part = value.slice(start, i).trim();
      if (part) out.push(part);
      start = i + 1;
    }
  }
  const last = value.slice(start).trim();
  if (last) out.push(last);
  return out;
}

export interface Header {
  /** The name as written or given. */
  name: string;
  /** Lower-cased long form, for lookup. */
  key: string;
  value: string;
}

export interface Via {
  /** Protocol name and version, e.g. 'SIP/2.0'. */
  protocol: string;
  /** Transport, upper-cased: UDP, TCP, TLS, SCTP, WS … */
  transport: string;
  host: string;
  port?: number;
  params: Map<string, string | null>;
  branch?: string;
  received?: string;
  /** rport: null when present without a value (a request asking for it), a number once filled in. */
  rport?: number | null;
}

export interface CSeq {
  seq: number;
  method: string;
}

export interface Contact extends NameAddr {
  /** The `expires` parameter, when present and valid. */
  expires?: number;
  q?: number;
}

/** Largest CSeq sequence number (RFC 3261 §8.1.1.5: less than 2**31). */
export const MAX_CSEQ = 2 ** 31 - 1;

export function parseVia(text: string): Via | null {
  // sent-protocol = name LWS? / LWS? version LWS? / LWS? transport
  const m = /^\s*([A-Za-z0-9\-.!%*_+`'~]+)\s*\/\s*([A-Za-z0-9\-.!%*_+`'~]+)\s*\/\s*([A-Za-z0-9\-.!%*_+`'~]+)\s+([^;\s]+)\s*(?::\s*(\d+))?\s*(;.*)?$/s.exec(text);
  if (!m) return null;
  const sentBy = m[5] !== undefined ? `${m[4]}:${m[5]}` : m[4];
  const hp = parseHostPort(sentBy);
  if (!hp) return null;
  const params = parseParams((m[6] ?? '').replace(/\s*\([^)]*\)\s*$/, ''));
  if (!params) return null;
  const via: Via = { protocol: `${m[1].toUpperCase()}/${m[2]}`, transport: m[3].toUpperCase(), host: hp.host, params };
  if (hp.port !== undefined) via.port = hp.port;
  const branch = params.get('branch');
  if (branch) via.branch = branch;
  const received = params.get('received');
  if (received) via.received = received;
  if (params.has('rport')) {
    const r = params.get('rport');
    if (r === null || r === undefined) via.rport = null;
    else if (/^\d{1,5}$/.test(r) && Number(r) <= 65535) via.rport = Number(r);
    else return null;
  }
  return via;
}

export function formatVia(via: Via): string {
  let out = `${via.protocol}/${via.transport} ${formatHost(via.host)}`;
  if (via.port !== undefined) out += ':' + via.port;
  for (const [name, value] of via.params) out += value === null ? `;${name}` : `;${name}=${value}`;
  return out;
}

export function parseCSeq(text: string): CSeq | null {
  const m = /^\s*(\d{1,10})\s+([A-Za-z0-9\-.!%*_+`'~]+)\s*$/.exec(text);
  if (!m) return null;
  const seq = Number(m[1]);
  if (seq > MAX_CSEQ) return null;
  return { seq, method: m[2] };
}

function parseContact(text: string): Contact | null {
  const na = parseNameAddr(text);
  if (!na) return null;
  const contact: Contact = na;
  const expires = na.params.get('expires');
  if (expires !== undefined) {
    if (expires === null || !/^\d{1,10}$/.test(expires)) return null;
    contact.expires = Math.min(Number(expires), 2 ** 32 - 1);
  }
  const q = na.params.get('q');
  if (q !== undefined && q !== null) {
    if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(q)) return null;
    contact.q = Number(q);
  }
  return contact;
}

export abstract class SipMessage {
  headers: Header[] = [];
  body: Buffer = Buffer.alloc(0);

  abstract isRequest(): this is SipRequest;

  /** The first value of a header (the whole line; for list headers use values()). */
  get(name: string): string | undefined {
    const key = headerKey(name);
    for (const h of this.headers) if (h.key === key) return h.value;
    return undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Every line of a header, in order. */
  getAll(name: string): string[] {
    const key = headerKey(name);
    const out: string[] = [];
    for (const h of this.headers) if (h.key === key) out.push(h.value);
    return out;
  }

  /** Every value of a header, list headers split at their commas. */
  values(name: string): string[] {
    const lines = this.getAll(name);
    if (!isListHeader(name)) return lines;
    const out: string[] = [];
    for (const line of lines) for (const v of splitList(line)) out.push(v);
    return out;
  }

  /** Replaces every line of a header with one value. */
  set(name: string, value: string): this {
    const key = headerKey(name);
    const index = this.headers.findIndex((h) => h.key === key);
    this.headers = this.headers.filter((h) => h.key !== key);
    const header = { name, key, value };
    if (index < 0) this.headers.push(header);
    else this.headers.splice(index, 0, header);
    return this;
  }

  add(name: string, value: string): this {
    this.headers.push({ name, key: headerKey(name), value });
    return this;
  }

  /** Adds a value before every existing line of this header (a new top Via, Record-Route). */
  prepend(name: string, value: string): this {
    const key = headerKey(name);
    const index = this.headers.findIndex((h) => h.key === key);
    const header = { name, key, value };
    if (index < 0) this.headers.push(header);
    else this.headers.splice(index, 0, header);
    return this;
  }

  remove(name: string): this {
    const key = headerKey(name);
    this.headers = this.headers.filter((h) => h.key !== key);
    return this;
  }

  // ---- typed accessors

  vias(): Via[] {
    const out: Via[] = [];
    for (const v of this.values('via')) {
      const via = parseVia(v);
      if (via) out.push(via);
    }
    return out;
  }

  topVia(): Via | undefined {
    const first = this.values('via')[0];
    return first === undefined ? undefined : (parseVia(first) ?? undefined);
  }

  /** Replaces the top Via value (the first element of the first Via line). */
  setTopVia(via: Via): void {
    const key = 'via';
    const index = this.headers.findIndex((h) => h.key === key);
    if (index < 0) {
      this.add('Via', formatVia(via));
      return;
    }
    const items = splitList(this.headers[index].value);
    items[0] = formatVia(via);
    this.headers[index] = { ...this.headers[index], value: items.join(', ') };
  }

  /** Removes the top Via value (a proxy or a UAC receiving a response). */
  removeTopVia(): void {
    const index = this.headers.findIndex((h) => h.key === 'via');
    if (index < 0) return;
    const items = splitList(this.headers[index].value);
    items.shift();
    if (items.length === 0) this.headers.splice(index, 1);
    else this.headers[index] = { ...this.headers[index], value: items.join(', ') };
  }

  from(): NameAddr | undefined {
    const v = this.get('from');
    return v === undefined ? undefined : (parseNameAddr(v) ?? undefined);
  }

  to(): NameAddr | undefined {
    const v = this.get('to');
    return v === undefined ? undefined : (parseNameAddr(v) ?? undefined);
  }

  fromTag(): string | undefined {
    return this.from()?.params.get('tag') ?? undefined;
  }

  toTag(): string | undefined {
    return this.to()?.params.get('tag') ?? undefined;
  }

  callId(): string | undefined {
    return this.get('call-id')?.trim();
  }

  cseq(): CSeq | undefined {
    const v = this.get('cseq');
    return v === undefined ? undefined : (parseCSeq(v) ?? undefined);
  }

  maxForwards(): number | undefined {
    const v = this.get('max-forwards');
    if (v === undefined || !/^\s*\d{1,10}\s*$/.test(v)) return undefined;
    const n = Number(v);
    return n <= 255 ? n : undefined;
  }

  /** Contact values; `Contact: *` gives 'wildcard'. Unparseable entries are skipped. */
  contacts(): Contact[] | 'wildcard' {
    const values = this.values('contact');
    if (values.length === 1 && values[0] === '*') return 'wildcard';
    const out: Contact[] = [];
    for (const v of values) {
      const c = parseContact(v);
      if (c) out.push(c);
    }
    return out;
  }

  /** Route / Record-Route entries, parsed. */
  routes(name: 'route' | 'record-route'): NameAddr[] {
    const out: NameAddr[] = [];
    for (const v of this.values(name)) {
      const na = parseNameAddr(v);
      if (na) out.push(na);
    }
    return out;
  }

  contentLength(): number | undefined {
    const v = this.get('content-length');
    if (v === undefined || !/^\s*\d{1,10}\s*$/.test(v)) return undefined;
    return Number(v);
  }

  expires(): number | undefined {
    const v = this.get('expires');
    if (v === undefined || !/^\s*\d{1,10}\s*$/.test(v)) return undefined;
    return Math.min(Number(v), 2 ** 32 - 1);
  }

  contentType(): string | undefined {
    return this.get('content-type')?.trim();
  }

  /** Raw credentials or challenges; the digest layer parses them. */
  authorization(): string[] {
    return this.getAll('authorization');
  }

  proxyAuthorization(): string[] {
    return this.getAll('proxy-authorization');
  }

  wwwAuthenticate(): string[] {
    return this.getAll('www-authenticate');
  }

  proxyAuthenticate(): string[] {
    return this.getAll('proxy-authenticate');
  }

  /**
   * Wire form: start line, headers (Content-Length set to the body's length), CRLF, body. `compact`
   * (system `compact_headers`): the headers that have a compact name pjsip writes are written with it.
   */
  serialize(compact = false): Buffer {
    let head = this.startLine() + '\r\n';
    for (const h of this.headers) {
      if (h.key === 'content-length') continue;
      // a value given by the TU with a line break must not inject headers
      const value = /[\r\n]/.test(h.value) ? h.value.replace(/[\r\n]+[ \t]*/g, ' ') : h.value;
      // Own keys only: a header named `constructor` or `__proto__` must not read Object's members.
      head += `${compact && Object.hasOwn(WRITTEN_COMPACT, h.key) ? WRITTEN_COMPACT[h.key] : h.name}: ${value}\r\n`;
    }
    head += `${compact ? 'l' : 'Content-Length'}: ${this.body.length}\r\n\r\n`;
    const headBuf = Buffer.from(head, 'utf8');
    return this.body.length === 0 ? headBuf : Buffer.concat([headBuf, this.body]);
  }

  toString(): string {
    return this.serialize().toString('utf8');
  }

  abstract startLine(): string;
}

export class SipRequest extends SipMessage {
  method: string;
  /** Request-URI as written. */
  uriText: string;
  uri: Uri;
  version = 'SIP/2.0';

  constructor(method: string, uri: Uri | string, headers: Array<[string, string]> = [], body?: Buffer | string) {
    super();
    this.method = method;
    if (typeof uri === 'string') {
      this.uriText = uri;
      this.uri = parseUri(uri) ?? { kind: 'other', scheme: '', opaque: uri };
    } else {
      this.uri = uri;
      this.uriText = '';
    }
    for (const [n, v] of headers) this.add(n, v);
    if (body !== undefined) this.body = typeof body === 'string' ? ownedUtf8(body) : body;
  }

  isRequest(): this is SipRequest {
    return true;
  }

  setUri(uri: Uri): void {
    this.uri = uri;
    this.uriText = '';
  }

  startLine(): string {
    const uriText = this.uriText || formatUri(this.uri);
    return `${this.method} ${uriText} ${this.version}`;
  }
}

export class SipResponse extends SipMessage {
  status: number;
  reason: string;
  version = 'SIP/2.0';

  constructor(status: number, reason: string, headers: Array<[string, string]> = [], body?: Buffer | string) {
    super();
    this.status = status;
    this.reason = reason;
    for (const [n, v] of headers) this.add(n, v);
    if (body !== undefined) this.body = typeof body === 'string' ? ownedUtf8(body) : body;
  }

  isRequest(): this is SipRequest {
    return false;
  }

  startLine(): string {
    return `${this.version} ${this.status} ${this.reason}`;
  }
}


export const REASON_PHRASES: Record<number, string> = {
  100: 'Trying', 180: 'Ringing', 181: 'Call Is Being Forwarded', 182: 'Queued', 183: 'Session Progress',
  200: 'OK', 202: 'Accepted', 300: 'Multiple Choices', 301: 'Moved Permanently', 302: 'Moved Temporarily',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 407: 'Proxy Authentication Required', 408: 'Request Timeout', 413: 'Request Entity Too Large',
  414: 'Request-URI Too Long', 415: 'Unsupported Media Type', 416: 'Unsupported URI Scheme', 420: 'Bad Extension',
  421: 'Extension Required', 422: 'Session Interval Too Small', 423: 'Interval Too Brief', 480: 'Temporarily Unavailable', 481: 'Call/Transaction Does Not Exist',
  482: 'Loop Detected', 483: 'Too Many Hops', 484: 'Address Incomplete', 486: 'Busy Here', 487: 'Request Terminated',
  488: 'Not Acceptable Here', 489: 'Bad Event', 491: 'Request Pending', 500: 'Server Internal Error', 501: 'Not Implemented',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Server Time-out', 505: 'Version Not Supported',
  513: 'Message Too Large', 600: 'Busy Everywhere', 603: 'Decline', 604: 'Does Not Exist Anywhere', 606: 'Not Acceptable',
};

/** Characters for tags and branches. */
const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/**
 * Random bytes drawn a page at a time: every request and response we make takes a tag or a branch,
 * and one crypto call per token was a tenth of a SUBSCRIBE flood's cost (fuzz42's profile).
 */
const randomPool = Buffer.alloc(4096);
let randomUsed = randomPool.length;

function randomToken(bytes: number): string {
  if (randomUsed + bytes > randomPool.length) {
    randomFillSync(randomPool);
    randomUsed = 0;
  }
  let out = '';
  for (let i = 0; i < bytes; i++) out += TOKEN_ALPHABET[randomPool[randomUsed + i] % TOKEN_ALPHABET.length];
  // Spent bytes are never handed out twice.
  randomUsed += bytes;
  return out;
}

export function newBranch(): string {
  return MAGIC_COOKIE + randomToken(16);
}

export function newTag(): string {
  return randomToken(12);
}

export function newCallId(): string {
  return randomToken(24);
}

/**
 * Builds a response to a request per RFC 3261 §8.2.6: Via, From, To, Call-ID, CSeq copied
 * (Record-Route too for 1xx/2xx when asked), a To tag added when given and absent.
 */
export function createResponse(request: SipRequest, status: number, reason?: string, options: { toTag?: string; copyRecordRoute?: boolean } = {}): SipResponse {
  const response = new SipResponse(status, reason ?? REASON_PHRASES[status] ?? 'Unknown');
  for (const h of request.headers) {
    if (h.key === 'via' || h.key === 'from' || h.key === 'call-id' || h.key === 'cseq') response.headers.push({ ...h });
    else if (h.key === 'to') {
      let value = h.value;
      if (options.toTag !== undefined && status !== 100) {
        const to = parseNameAddr(value);
        if (to && !to.params.has('tag')) value += `;tag=${options.toTag}`;
      }
      response.headers.push({ ...h, value });
    } else if (h.key === 'record-route' && options.copyRecordRoute && status >= 101 && status < 300) response.headers.push({ ...h });
  }
  // a 100 Trying copies Timestamp (§8.2.6.1)
  if (status === 100) {
    const ts = request.get('timestamp');
    if (ts !== undefined) response.add('Timestamp', ts);
  }
  return response;
}
