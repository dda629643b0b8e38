// Server-side HTTP digest authentication as SIP uses it (RFC 3261 §22, RFC 2617, RFC 7616):
// challenges, a parser for Authorization / Proxy-Authorization values that never throws, and
// verification with stateless nonces (an HMAC over a timestamp and a random salt), expiry → stale,
// nonce-count replay protection in bounded memory and constant-time comparison.
// Knows nothing of SIP messages: the caller hands in the method, header values and a credential lookup.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type DigestAlgorithm = 'MD5' | 'SHA-256';

/** Credentials of one auth object: a plaintext password or Asterisk's `md5_cred` (hex MD5 of `username:realm:password`). */
export type DigestSecret = ({ readonly password: string } | { readonly md5Cred: string }) & {
  /** Seconds this user's nonces stay valid (pjsip.conf auth `nonce_lifetime`); default the authenticator's. */
  readonly nonceLifetime?: number;
};

/** The directives of one `Digest` credentials value, names lower-cased. */
export interface DigestAuthorization {
  readonly username: string;
  readonly realm: string;
  readonly nonce: string;
  readonly uri: string;
  readonly response: string;
  /** As sent (upper-cased); `MD5` when absent. */
  readonly algorithm: string;
  readonly qop?: string;
  readonly nc?: string;
  readonly cnonce?: string;
  readonly opaque?: string;
  /** Every directive, including ones this module does not use. */
  readonly params: ReadonlyMap<string, string>;
}

export type DigestFailure =
  | 'missing' // no Digest credentials for our realm
  | 'malformed' // a value we could not parse or that lacks a required directive
  | 'unsupported' // algorithm or qop we do not offer (e.g. MD5-sess, auth-int)
  | 'bad-nonce' // not a nonce we issued (or from the future)
  | 'unknown-user'
  | 'bad-response' // wrong password (or wrong method/uri)
  | 'stale' // right password, expired nonce: challenge again with stale=true
  | 'replay'; // a nonce count not above the last one seen for this nonce

export type DigestResult =
  | { readonly ok: true; readonly username: string; readonly algorithm: DigestAlgorithm }
  | { readonly ok: false; readonly reason: DigestFailure; readonly username?: string };

export interface DigestOptions {
  /** The realm challenged and required in credentials. */
  readonly realm: string;
  /** Key of the nonce HMAC; random per process by default (nonces then die with the process). */
  readonly secret?: Uint8Array;
  /** Seconds a nonce stays fresh (Asterisk's auth `nonce_lifetime`, default 32). */
  readonly nonceLifetime?: number;
  /** Algorithms offered, one challenge header value each, in this order. Default: SHA-256 then MD5. */
  readonly algorithms?: readonly DigestAlgorithm[];
  /** Accept RFC 2069 style credentials without qop (many SIP phones still send them). Default true. */
  readonly allowNoQop?: boolean;
  /** Nonces whose counts are remembered for replay protection. Default 4096. */
  readonly maxTrackedNonces?: number;
  /** Milliseconds since the epoch; for tests. */
  readonly now?: () => number;
}

export interface VerifyRequest {
  /** The request method (INVITE, REGISTER …); the HA2 input. */
  readonly method: string;
  /** Every Authorization (or Proxy-Authorization) header value of the request. */
  readonly authorization: string | readonly string[] | undefined;
  /** The secret of a user name, or undefined when the user is unknown. */
  readonly lookup: (username: string) => DigestSecret | undefined;
  /** When given, the credentials' `uri` must equal it exactly. */
  readonly expectedUri?: string;
}

/** Longest header value parsed; longer ones are malformed. */
export const MAX_AUTHORIZATION_LENGTH = 4096;
const MAX_PARAMS = 32;
const MAX_PARAM_VALUE = 1024;

const DEFAULT_NONCE_LIFETIME = 32;
/** Nonce layout: 6 bytes of milliseconds timestamp, 9 bytes of salt, 15 bytes of HMAC-SHA-256; base64url. */
const TIME_BYTES = 6;
const SALT_BYTES = 9;
const MAC_BYTES = 15;
const NONCE_BYTES = TIME_BYTES + SALT_BYTES + MAC_BYTES;
const NONCE_CHARS = (NONCE_BYTES / 3) * 4;
/** Clock skew tolerated for a nonce stamped in the future (several processes sharing a secret). */
const FUTURE_SKEW_MS = 2000;

const HASHES: Record<DigestAlgorithm, string> = { MD5: 'md5', 'SHA-256': 'sha256' };
const HEX_LENGTH: Record<DigestAlgorithm, number> = { MD5: 32, 'SHA-256': 64 };

export function digestHash(algorithm: DigestAlgorithm, text: string): string {
  return createHash(HASHES[algorithm]).update(text, 'utf8').digest('hex');
}

/** HA1 = H(username:realm:password), RFC 7616 §3.4.2. */
export function digestHa1(algorithm: DigestAlgorithm, username: string, realm: string, password: string): string {
  return digestHash(algorithm, `${username}:${realm}:${password}`);
}

/** The expected `response` for a HA1, RFC 7616 §3.4.1 (qop=auth) or RFC 2069 (no qop). */
export function digestResponse(
  algorithm: DigestAlgorithm,
  ha1: string,
  fields: { method: string; uri: string; nonce: string; qop?: string; nc?: string; cnonce?: string },
): string {
  const ha2 = digestHash(algorithm, `${fields.method}:${fields.uri}`);
  if (fields.qop === undefined) return digestHash(algorithm, `${ha1}:${fields.nonce}:${ha2}`);
  return digestHash(algorithm, `${ha1}:${fields.nonce}:${fields.nc ?? ''}:${fields.cnonce ?? ''}:${fields.qop}:${ha2}`);
}

/** A quoted-string: backslash and double quote escaped, control characters (CR, LF …) dropped. */
export function quoteString(value: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${value.replace(/[\x00-\x1f\x7f]/g, '').replace(/(["\\])/g, '\\$1')}"`;
}

function isTokenChar(code: number): boolean {
  // RFC 3261 token: alphanum and -.!%*_+`'~
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    '-.!%*_+`\'~'.includes(String.fromCharCode(code))
  );
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

/**
 * The directives of one `Digest k=v, k="v"` value (credentials or a challenge), names lower-cased;
 * undefined for anything malformed (limits as parseDigestAuthorization). Never throws.
 */
export function parseDigestParams(value: unknown): Map<string, string> | undefined {
  if (typeof value !== 'string' || value.length > MAX_AUTHORIZATION_LENGTH) return undefined;
  let i = 0;
  const n = value.length;
  while (i < n && isSpace(value.charCodeAt(i))) i++;
  const schemeStart = i;
  while (i < n && isTokenChar(value.charCodeAt(i))) i++;
  if (value.slice(schemeStart, i).toLowerCase() !== 'digest') return undefined;
  if (i >= n || !isSpace(value.charCodeAt(i))) return undefined;

  const params = new Map<string, string>();
  for (;;) {
    while (i < n && (isSpace(value.charCodeAt(i)) || value[i] === ',')) i++;
    if (i >= n) break;
    const nameStart = i;
    while (i < n && isTokenChar(value.charCodeAt(i))) i++;
    if (i === nameStart) return undefined;
    const name = value.slice(nameStart, i).toLowerCase();
    while (i < n && isSpace(value.charCodeAt(i))) i++;
    if (value[i] !== '=') return undefined;
    i++;
    while (i < n && isSpace(value.charCodeAt(i))) i++;
    let param: string;
    if (value[i] === '"') {
      i++;
      let text = '';
      let closed = false;
      while (i < n) {
        const ch = value[i];
        if (ch === '\\' && i + 1 < n) {
          text += value[i + 1];
          i += 2;
        } else if (ch === '"') {
          closed = true;
          i++;
          break;
        } else {
          text += ch;
          i++;
        }
        if (text.length > MAX_PARAM_VALUE) return undefined;
      }
      if (!closed) return undefined;
      param = text;
    } else {
      const valueStart = i;
      while (i < n && isTokenChar(value.charCodeAt(i))) i++;
      if (i === valueStart) return undefined;
      param = value.slice(valueStart, i);
    }
    if (param.length > MAX_PARAM_VALUE || params.has(name) || params.size >= MAX_PARAMS) return undefined;
    params.set(name, param);
    while (i < n && isSpace(value.charCodeAt(i))) i++;
    if (i < n && value[i] !== ',') return undefined;
  }

  return params;
}

/**
 * Parses one `Digest k=v, k="v"` value. Returns undefined for anything malformed: another scheme,
 * a duplicated directive, more than 32 directives, an unterminated quoted string, a value longer
 * than 1024 characters, or a whole value longer than 4096. Never throws.
 */
export function parseDigestAuthorization(value: unknown): DigestAuthorization | undefined {
  const params = parseDigestParams(value);
  if (!params) return undefined;
  let username = params.get('username');
  if (username === undefined) username = decodeExtendedValue(params.get('username*'));
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  const uri = params.get('uri');
  const response = params.get('response');
  if (username === undefined || realm === undefined || nonce === undefined || uri === undefined || response === undefined) {
    return undefined;
  }
  return {
    username,
    realm,
    nonce,
    uri,
    response,
    algorithm: (params.get('algorithm') ?? 'MD5').toUpperCase(),
    qop: params.get('qop'),
    nc: params.get('nc'),
    cnonce: params.get('cnonce'),
    opaque: params.get('opaque'),
    params,
  };
}

/** RFC 8187 `UTF-8''percent%20encoded` (RFC 7616's `username*`); undefined when malformed. */
function decodeExtendedValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const match = /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

function constantTimeEqualText(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  // Compare equal lengths always, so the time depends on the expected length only.
  const same = timingSafeEqual(a, b.length === a.length ? b : a);
  return same && b.length === a.length;
}

function asAlgorithm(name: string): DigestAlgorithm | undefined {
  if (name === 'MD5') return 'MD5';
  if (name === 'SHA-256') return 'SHA-256';
  return undefined;
}

function toBase64Url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/**
 * One realm's digest authentication. Nonces need no state: each carries its issue time and a salt
 * under an HMAC of the server secret. Only nonces that authenticated successfully with qop=auth are
 * remembered (their last nonce count), at most `maxTrackedNonces`; a nonce forgotten early is
 * answered as stale, so a bounded table never lets a replay through.
 */
export class DigestAuthenticator {
  readonly realm: string;
  readonly algorithms: readonly DigestAlgorithm[];
  readonly nonceLifetimeMs: number;
  private readonly secret: Buffer;
  private readonly opaque: string;
  private readonly allowNoQop: boolean;
  private readonly maxTracked: number;
  private readonly now: () => number;
  /** Last nonce count by nonce, oldest first. */
  private readonly counts = new Map<string, number>();
  /** Issue time of the newest nonce evicted from `counts`; nonces not newer are stale when unknown. */
  private evictedUpTo = -1;
  /** The longest lifetime a nonce was accepted with: counts are kept at least that long. */
  private longestLifetimeMs: number;

  constructor(options: DigestOptions) {
    this.realm = options.realm;
    const algorithms = options.algorithms ?? ['SHA-256', 'MD5'];
    this.algorithms = algorithms.length > 0 ? [...new Set(algorithms)] : ['MD5'];
    const lifetime = options.nonceLifetime ?? DEFAULT_NONCE_LIFETIME;
    this.nonceLifetimeMs = Number.isFinite(lifetime) && lifetime > 0 ? Math.round(lifetime * 1000) : DEFAULT_NONCE_LIFETIME * 1000;
    this.longestLifetimeMs = this.nonceLifetimeMs;
    this.secret = options.secret && options.secret.length > 0 ? Buffer.from(options.secret) : randomBytes(32);
    this.opaque = toBase64Url(createHmac('sha256', this.secret).update(`opaque:${this.realm}`).digest().subarray(0, 12));
    this.allowNoQop = options.allowNoQop ?? true;
    this.maxTracked = Math.max(1, Math.floor(options.maxTrackedNonces ?? 4096));
    this.now = options.now ?? Date.now;
  }

  /** A fresh nonce. */
  createNonce(): string {
    const bytes = Buffer.alloc(NONCE_BYTES);
    bytes.writeUIntBE(Math.max(0, Math.min(this.now(), 2 ** 48 - 1)), 0, TIME_BYTES);
    randomBytes(SALT_BYTES).copy(bytes, TIME_BYTES);
    this.mac(bytes.subarray(0, TIME_BYTES + SALT_BYTES)).copy(bytes, TIME_BYTES + SALT_BYTES);
    return toBase64Url(bytes);
  }

  /**
   * Header values for a 401 (`WWW-Authenticate`) or 407 (`Proxy-Authenticate`): one per offered
   * algorithm, the preferred first (RFC 7616 §3.7), all with the same nonce.
   */
  challenge(options: { stale?: boolean; algorithms?: readonly DigestAlgorithm[] } = {}): string[] {
    const nonce = this.createNonce();
    const algorithms = options.algorithms && options.algorithms.length > 0 ? options.algorithms : this.algorithms;
    return algorithms.map(
      (algorithm) =>
        `Digest realm=${quoteString(this.realm)}, nonce="${nonce}", opaque="${this.opaque}", algorithm=${algorithm}, qop="auth"` +
        (options.stale ? ', stale=true' : ''),
    );
  }

  /** Checks a request's credentials for this realm. Never throws. */
  verify(request: VerifyRequest): DigestResult {
    const values = request.authorization === undefined ? [] : typeof request.authorization === 'string' ? [request.authorization] : request.authorization;
    let credentials: DigestAuthorization | undefined;
    let sawMalformed = false;
    for (const value of values.slice(0, 16)) {
      const parsed = parseDigestAuthorization(value);
      if (!parsed) {
        sawMalformed ||= typeof value === 'string' && /^\s*digest\s/i.test(value);
        continue;
      }
      if (parsed.realm === this.realm) {
        credentials = parsed;
        break;
      }
    }
    if (!credentials) return { ok: false, reason: sawMalformed ? 'malformed' : 'missing' };
    const username = credentials.username;

    const algorithm = asAlgorithm(credentials.algorithm);
    if (!algorithm || !this.algorithms.includes(algorithm)) return { ok: false, reason: 'unsupported', username };
    if (credentials.qop !== undefined) {
      if (credentials.qop.toLowerCase() !== 'auth') return { ok: false, reason: 'unsupported', username };
      if (credentials.nc === undefined || !/^[0-9a-fA-F]{8}$/.test(credentials.nc) || !credentials.cnonce) {
        return { ok: false, reason: 'malformed', username };
      }
    } else if (!this.allowNoQop) {
      return { ok: false, reason: 'unsupported', username };
    }
    if (credentials.opaque !== undefined && credentials.opaque !== this.opaque) return { ok: false, reason: 'bad-nonce', username };
    if (request.expectedUri !== undefined && credentials.uri !== request.expectedUri) {
      return { ok: false, reason: 'bad-response', username };
    }

    const issuedAt = this.nonceTime(credentials.nonce);
    if (issuedAt === undefined) return { ok: false, reason: 'bad-nonce', username };

    const secret = request.lookup(username);
    const ha1 = this.ha1(algorithm, username, secret);
    const expected = digestResponse(algorithm, ha1 ?? '0'.repeat(HEX_LENGTH[algorithm]), {
      method: request.method,
      uri: credentials.uri,
      nonce: credentials.nonce,
      qop: credentials.qop === undefined ? undefined : 'auth',
      nc: credentials.nc,
      cnonce: credentials.cnonce,
    });
    const matches = constantTimeEqualText(expected, credentials.response.toLowerCase());
    if (!secret) return { ok: false, reason: 'unknown-user', username };
    if (!ha1 || !matches) return { ok: false, reason: 'bad-response', username };

    const own = secret.nonceLifetime;
    const lifetimeMs = own !== undefined && Number.isFinite(own) && own > 0 ? Math.round(own * 1000) : this.nonceLifetimeMs;
    const age = this.now() - issuedAt;
    if (age > lifetimeMs) return { ok: false, reason: 'stale', username };
    if (lifetimeMs > this.longestLifetimeMs) this.longestLifetimeMs = lifetimeMs;

    if (credentials.qop !== undefined) {
      const count = Number.parseInt(credentials.nc as string, 16);
      const last = this.counts.get(credentials.nonce);
      if (last === undefined) {
        // Forgotten to keep the table bounded: it may have been used already, so make the client renew it.
        if (issuedAt <= this.evictedUpTo) return { ok: false, reason: 'stale', username };
      } else if (count <= last) {
        return { ok: false, reason: 'replay', username };
      }
      this.remember(credentials.nonce, count, issuedAt);
    }
    return { ok: true, username, algorithm };
  }

  /** Nonces whose counts are remembered right now (for tests and statistics). */
  get trackedNonces(): number {
    return this.counts.size;
  }

  private remember(nonce: string, count: number, issuedAt: number): void {
    this.counts.delete(nonce);
    this.counts.set(nonce, count);
    const expiredBefore = this.now() - this.longestLifetimeMs;
    for (const [oldest] of this.counts) {
      if (this.counts.size <= this.maxTracked) {
        const time = this.nonceTime(oldest);
        if (time !== undefined && time >= expiredBefore) break;
      }
      const time = this.nonceTime(oldest) ?? issuedAt;
      if (time > this.evictedUpTo) this.evictedUpTo = time;
      this.counts.delete(oldest);
    }
  }

  private ha1(algorithm: DigestAlgorithm, username: string, secret: DigestSecret | undefined): string | undefined {
    if (!secret) return undefined;
    if ('password' in secret) {
      return typeof secret.password === 'string' ? digestHa1(algorithm, username, this.realm, secret.password) : undefined;
    }
    // md5_cred already is HA1 for MD5; it cannot answer a SHA-256 challenge.
    if (algorithm !== 'MD5' || typeof secret.md5Cred !== 'string' || !/^[0-9a-fA-F]{32}$/.test(secret.md5Cred)) return undefined;
    return secret.md5Cred.toLowerCase();
  }

  private mac(data: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(data).update(this.realm, 'utf8').digest().subarray(0, MAC_BYTES);
  }

  /** The issue time of a nonce we made, or undefined for anything else. */
  private nonceTime(nonce: string): number | undefined {
    if (nonce.length !== NONCE_CHARS || !/^[A-Za-z0-9_-]+$/.test(nonce)) return undefined;
    const bytes = Buffer.from(nonce, 'base64url');
    if (bytes.length !== NONCE_BYTES) return undefined;
    const mac = this.mac(bytes.subarray(0, TIME_BYTES + SALT_BYTES));
    if (!timingSafeEqual(mac, bytes.subarray(TIME_BYTES + SALT_BYTES))) return undefined;
    const issuedAt = bytes.readUIntBE(0, TIME_BYTES);
    if (issuedAt > this.now() + FUTURE_SKEW_MS) return undefined;
    return issuedAt;
  }
}
