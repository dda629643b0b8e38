// Password and crypt-hash checks that need nothing but the hash: the configuration uses them to
// refuse a malformed hash at load time and to spot the default password, ARI's authenticator and its
// hashing thread to verify requests. Kept below config/ and ari/ so both can use them.
import crypto from 'node:crypto';
import { verify as unixcryptVerify } from 'unixcrypt';

/** A stored password: the text itself (`plain`) or a crypt hash of it (`crypt`). */
export interface PasswordEntry {
  readonly passwordFormat: 'plain' | 'crypt';
  readonly password: string;
}

export const CRYPT_CHARS = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Compares in time independent of where the strings differ (only their lengths show). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    crypto.timingSafeEqual(left, left);
    return false;
  }
  return crypto.timingSafeEqual(left, right);
}

const CRYPT_CLASS = '[./0-9A-Za-z]';
const SHA_CRYPT_RE = new RegExp(`^\\$([56])\\$(?:rounds=([1-9][0-9]*)\\$)?(${CRYPT_CLASS}{0,16})\\$(${CRYPT_CLASS}+)$`);
const MD5_CRYPT_RE = new RegExp(`^\\$1\\$([^$]{0,8})\\$(${CRYPT_CLASS}{22})$`);

/**
 * Why a crypt hash cannot be used (one line), or null when it is a well-formed `$6$`, `$5$` or `$1$`
 * hash. The configuration calls this to refuse a bad hash at load time.
 */
export function cryptHashProblem(hash: string): string | null {
  const sha = SHA_CRYPT_RE.exec(hash);
  if (sha) {
    const expected = sha[1] === '5' ? 43 : 86;
    if (sha[4]!.length !== expected) return `malformed $${sha[1]}$ crypt hash (digest must be ${expected} characters)`;
    if (sha[2] !== undefined) {
      const rounds = Number(sha[2]);
      if (rounds < 1000 || rounds > 1_000_000) return 'crypt rounds must be between 1000 and 1000000 (every request re-verifies)';
    }
    return null;
  }
  if (MD5_CRYPT_RE.test(hash)) return null;
  return 'unsupported or malformed crypt hash: use $6$ (SHA-512), $5$ (SHA-256) or $1$ (MD5), e.g. from `openssl passwd -6`';
}

/** Checks a password against a crypt hash, synchronously (worker threads and start-up checks only). */
export function verifyCrypt(password: string, hash: string): boolean {
  try {
    if (hash.startsWith('$1$')) {
      const m = MD5_CRYPT_RE.exec(hash);
      return m !== null && constantTimeEqual(md5Crypt(password, m[1]!), hash);
    }
    if (hash.startsWith('$5$') || hash.startsWith('$6$')) return unixcryptVerify(password, hash);
  } catch {
    // malformed hash or length mismatch inside unixcrypt
  }
  return false;
}

/**
 * Checks a password against a user, synchronously: plain → constant-time compare; crypt → the
 * hash. Blocks for the hash's cost, so only for one-off checks (the configuration's default-password
 * rule); requests go through `Authenticator`.
 */
export function verifyPassword(user: PasswordEntry, password: string): boolean {
  if (user.passwordFormat === 'plain') return constantTimeEqual(password, user.password);
  return verifyCrypt(password, user.password);
}

/** FreeBSD/glibc MD5-crypt (`$1$`). */
export function md5Crypt(password: string, salt: string): string {
  const pw = Buffer.from(password, 'utf8');
  const s = Buffer.from(salt.split('$')[0]!.slice(0, 8), 'utf8');
  const md5 = (...parts: Buffer[]): Buffer => {
    const h = crypto.createHash('md5');
    for (const part of parts) h.update(part);
    return h.digest();
  };
  const magic = Buffer.from('$1$');
  const alt = md5(pw, s, pw);
  const ctx = crypto.createHash('md5');
  ctx.update(pw).update(magic).update(s);
  for (let left = pw.length; left > 0; left -= 16) ctx.update(alt.subarray(0, Math.min(16, left)));
  for (let i = pw.length; i > 0; i >>= 1) ctx.update(i & 1 ? Buffer.from([0]) : pw.subarray(0, 1));
  let final: Buffer = ctx.digest();
  for (let i = 0; i < 1000; i++) {
    const parts: Buffer[] = [];
    parts.push(i & 1 ? pw : final);
    if (i % 3) parts.push(s);
    if (i % 7) parts.push(pw);
    parts.push(i & 1 ? final : pw);
    final = md5(...parts);
  }
  let out = '';
  const to64 = (v: number, n: number): void => {
    for (; n > 0; n--, v >>= 6) out += CRYPT_CHARS[v & 0x3f];
  };
  const f = final;
  to64((f[0]! << 16) | (f[6]! << 8) | f[12]!, 4);
  to64((f[1]! << 16) | (f[7]! << 8) | f[13]!, 4);
  to64((f[2]! << 16) | (f[8]! << 8) | f[14]!, 4);
  to64((f[3]! << 16) | (f[9]! << 8) | f[15]!, 4);
  to64((f[4]! << 16) | (f[10]! << 8) | f[5]!, 4);
  to64(f[11]!, 2);
  return `$1$${s.toString('utf8')}$${out}`;
}
