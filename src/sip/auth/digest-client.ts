// The client side of SIP digest authentication (RFC 3261 §22.2, RFC 7616): choosing one of the
// challenges of a 401/407 and computing the Authorization (or Proxy-Authorization) that answers it,
// with MD5 or SHA-256, qop=auth when offered (RFC 2069 style otherwise). auth-int, MD5-sess and
// unknown algorithms are skipped, as RFC 7616 §3.7 asks.
import { randomBytes } from 'node:crypto';
import { digestHa1, digestResponse, parseDigestParams, quoteString, type DigestAlgorithm } from './digest.ts';

export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly algorithm: DigestAlgorithm;
  /** `auth` when offered; undefined for an RFC 2069 challenge. */
  readonly qop?: 'auth';
  readonly opaque?: string;
  readonly stale: boolean;
}

/** Credentials of one auth object: a password, or Asterisk's md5_cred (valid for its realm, MD5 only). */
export interface DigestCredentials {
  readonly username: string;
  readonly password?: string;
  readonly md5Cred?: string;
  /** When set, only challenges of this realm are answered with these credentials. */
  readonly realm?: string;
}

/** Parses one WWW-Authenticate / Proxy-Authenticate value; undefined when not a usable digest challenge. */
export function parseDigestChallenge(value: string): DigestChallenge | undefined {
  const params = parseDigestParams(value);
  if (!params) return undefined;
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  if (realm === undefined || nonce === undefined || nonce === '') return undefined;
  const algorithmName = (params.get('algorithm') ?? 'MD5').toUpperCase();
  const algorithm: DigestAlgorithm | undefined = algorithmName === 'MD5' ? 'MD5' : algorithmName === 'SHA-256' ? 'SHA-256' : undefined;
  if (!algorithm) return undefined;
  const qopOffer = params.get('qop');
  let qop: 'auth' | undefined;
  if (qopOffer !== undefined) {
    const offered = qopOffer.split(',').map((item) => item.trim().toLowerCase());
    if (!offered.includes('auth')) return undefined; // auth-int only: not supported
    qop = 'auth';
  }
  const opaque = params.get('opaque');
  return { realm, nonce, algorithm, ...(qop ? { qop } : {}), ...(opaque !== undefined ? { opaque } : {}), stale: (params.get('stale') ?? '').toLowerCase() === 'true' };
}

/**
 * Picks the challenge to answer: the first, in the server's order of preference, that some
 * credentials can answer (a realm they are for; MD5 for md5_cred). Undefined when none.
 */
export function chooseChallenge(values: readonly string[], credentials: readonly DigestCredentials[]): { challenge: DigestChallenge; credentials: DigestCredentials } | undefined {
  for (const value of values.slice(0, 16)) {
    const challenge = parseDigestChallenge(value);
    if (!challenge) continue;
    const usable = credentials.find(
      (candidate) =>
        (candidate.realm === undefined || candidate.realm === '' || candidate.realm === challenge.realm) &&
        (candidate.password !== undefined || (candidate.md5Cred !== undefined && challenge.algorithm === 'MD5')),
    );
    if (usable) return { challenge, credentials: usable };
  }
  return undefined;
}

/** The credentials header value answering `challenge` for `method` on `uri`; nc counts uses of the nonce. */
export function answerChallenge(challenge: DigestChallenge, credentials: DigestCredentials, method: string, uri: string, nc = 1): string {
  const ha1 =
    credentials.password !== undefined ? digestHa1(challenge.algorithm, credentials.username, challenge.realm, credentials.password) : (credentials.md5Cred ?? '').toLowerCase();
  const ncText = nc.toString(16).padStart(8, '0');
  const cnonce = challenge.qop ? randomBytes(8).toString('hex') : undefined;
  const response = digestResponse(challenge.algorithm, ha1, { method, uri, nonce: challenge.nonce, ...(challenge.qop ? { qop: challenge.qop, nc: ncText, cnonce } : {}) });
  const parts = [
    `Digest username=${quoteString(credentials.username)}`,
    `realm=${quoteString(challenge.realm)}`,
    `nonce=${quoteString(challenge.nonce)}`,
    `uri=${quoteString(uri)}`,
    `response="${response}"`,
    `algorithm=${challenge.algorithm}`,
  ];
  if (challenge.opaque !== undefined) parts.push(`opaque=${quoteString(challenge.opaque)}`);
  if (challenge.qop) parts.push(`qop=${challenge.qop}`, `nc=${ncText}`, `cnonce="${cnonce!}"`);
  return parts.join(', ');
}
