// ARI authentication: HTTP Basic first, then `api_key=user:pass`, checked before routing.
// Plain passwords, and credentials verified recently, are answered synchronously. Crypt hashes are
// verified on a worker thread (the answer is then a Promise), unknown users cost the same as
// known ones, and an address that keeps failing is refused without any check for a while.
import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import type { AriUser } from '../config/config.ts';
import type { AclEntry, NamedAcl } from '../config/ari-users.ts';
import { aclAllows, parseAclRule, type AclRule } from '../util/acl.ts';
import { CheckBudget } from './check-budget.ts';
import { PasswordHasher, decoyHashLike } from './passwords.ts';
import { constantTimeEqual } from '../util/password-hashes.ts';

export type AuthResult =
  | { readonly kind: 'ok'; readonly user: AriUser }
  | { readonly kind: 'unauthorized' }
  | { readonly kind: 'read-only' }
  /** The user's ACL (`permit`/`deny`/`acl`) refuses the client address. */
  | { readonly kind: 'acl-denied' };

/** Failed-login limits per client address (`ari.failed_logins`). `maxPerAddress: 0` turns them off. */
export interface FailedLoginLimits {
  readonly maxPerAddress: number;
  readonly windowSeconds: number;
  readonly blockSeconds: number;
  readonly trackedAddresses: number;
}

export const DEFAULT_FAILED_LOGIN_LIMITS: FailedLoginLimits = Object.freeze({
  maxPerAddress: 10,
  windowSeconds: 60,
  blockSeconds: 60,
  trackedAddresses: 10_000,
});

export interface AuthenticatorOptions {
  readonly failedLogins?: FailedLoginLimits;
  /** Milliseconds clock (tests). */
  readonly now?: () => number;
  /** Named ACLs (`ari.acls`, lower-cased names) that users' `acl` entries reference. */
  readonly namedAcls?: ReadonlyMap<string, NamedAcl>;
  /** Crypt checks the whole server starts per second (`ari.crypt_checks_per_second`); 0 or absent = no budget. */
  readonly cryptChecksPerSecond?: number;
  /**
   * A wrong password of a plain-password user costs a crypt check against the decoy, as an unknown
   * name does, whenever some user has a crypt hash: otherwise the quick 401 tells a guesser which
   * names exist. (Off in unit tests that pin the synchronous plain path.)
   */
  readonly equaliseFailures?: boolean;
}

const UNAUTHORIZED: AuthResult = Object.freeze({ kind: 'unauthorized' });
const ACL_DENIED: AuthResult = Object.freeze({ kind: 'acl-denied' });

/** Rules of one permit/deny pair in the order they were written (the configuration validated each entry). */
function compileRules(entries: readonly AclEntry[]): AclRule[] {
  return [...entries]
    .sort((a, b) => a.order - b.order)
    .map((entry) => {
      const rule = parseAclRule(entry.entry, entry.sense === 'permit');
      if (typeof rule === 'string') throw new Error(`invalid ACL entry '${entry.entry}': ${rule}`);
      return rule;
    });
}

/**
 * A user's ACL lists as Asterisk builds them: the unnamed list of its own permit/deny entries first,
 * then each named ACL it references, in order. Undefined when the user has none (no check at all).
 */
export function userAclLists(user: AriUser, namedAcls: ReadonlyMap<string, NamedAcl> = new Map()): AclRule[][] | undefined {
  if (user.permit.length === 0 && user.deny.length === 0 && user.acl.length === 0) return undefined;
  const lists = [compileRules([...user.permit, ...user.deny])];
  for (const name of user.acl) {
    const named = namedAcls.get(name.toLowerCase());
    // The configuration refuses unknown names; should one slip through, it denies, as in Asterisk.
    if (!named) return [compileRules([{ sense: 'deny', entry: '0.0.0.0/0', order: 0 }, { sense: 'deny', entry: '::/0', order: 1 }])];
    lists.push(compileRules([...named.permit, ...named.deny]));
  }
  return lists;
}

/** Crypt checks queued on the hashing thread beyond which further ones are refused at once (≈ seconds of work). */
const MAX_PENDING_CHECKS = 256;
const MAX_REMEMBERED_HEADERS = 64;
/** Recently verified crypt passwords per user (HMAC tags), so repeated requests skip the slow hash. */
const VERIFIED_PER_USER = 8;

function credentialsFromBasic(header: string | undefined): [string, string] | undefined {
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // A header without a colon is not usable, so api_key gets its chance (as Asterisk does).
  if (colon < 0) return undefined;
  return [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

function credentialsFromApiKey(apiKey: string | null): [string, string] | undefined {
  if (!apiKey) return undefined;
  const colon = apiKey.indexOf(':');
  if (colon < 0 || colon === apiKey.length - 1) return undefined;
  return [apiKey.slice(0, colon), apiKey.slice(colon + 1)];
}

/**
 * The key failures are counted under: the IPv4 address (also when IPv4-mapped), or an IPv6
 * address's /64 network, since one host commonly holds a whole /64.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return '';
  if (address.startsWith('::ffff:') && net.isIPv4(address.slice(7))) return address.slice(7);
  const bare = address.split('%')[0]!;
  if (!net.isIPv6(bare)) return address;
  const [head = '', tail] = bare.split('::');
  const groups = (part: string): string[] =>
    part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${all.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

interface AddressRecord {
  failures: number;
  windowStart: number;
  blockedUntil: number;
  /** Crypt checks under way: they count against the budget until they succeed. */
  inFlight: number;
}

/**
 * Failed logins per client key in a fixed window; at `maxPerAddress` the key is refused for
 * `blockSeconds`. At most `trackedAddresses` keys are held: the least recently failing goes first.
 */
class FailedLogins {
  readonly #records = new Map<string, AddressRecord>();
  readonly #limits: FailedLoginLimits;
  readonly #now: () => number;

  constructor(limits: FailedLoginLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  get enabled(): boolean {
    return this.#limits.maxPerAddress > 0;
  }

  /** True when nothing is recorded (the fast path skips the address lookup). */
  get empty(): boolean {
    return this.#records.size === 0;
  }

  blocked(key: string): boolean {
    const record = this.#records.get(key);
    return record !== undefined && record.blockedUntil > this.#now();
  }

  /** May one more slow check start for the key? Failures in the window plus checks under way stay below the limit. */
  mayTry(key: string): boolean {
    if (!this.enabled) return true;
    const record = this.#records.get(key);
    if (!record) return true;
    const now = this.#now();
    if (record.blockedUntil > now) return false;
    const failures = now - record.windowStart >= this.#limits.windowSeconds * 1000 ? 0 : record.failures;
    return failures + record.inFlight < this.#limits.maxPerAddress;
  }

  begin(key: string): void {
    if (this.enabled) this.#touch(key).inFlight += 1;
  }

  end(key: string, ok: boolean): void {
    if (!this.enabled) return;
    const record = this.#touch(key);
    record.inFlight = Math.max(0, record.inFlight - 1);
    if (!ok) this.fail(key);
  }

  fail(key: string): void {
    if (!this.enabled) return;
    const now = this.#now();
    const record = this.#touch(key);
    if (now - record.windowStart >= this.#limits.windowSeconds * 1000) {
      record.failures = 0;
      record.windowStart = now;
    }
    record.failures += 1;
    if (record.failures >= this.#limits.maxPerAddress && record.blockedUntil <= now) {
      record.blockedUntil = now + this.#limits.blockSeconds * 1000;
      // A new window starts when the block ends.
      record.failures = 0;
      record.windowStart = record.blockedUntil;
    }
  }

  #touch(key: string): AddressRecord {
    let record = this.#records.get(key);
    if (record) this.#records.delete(key);
    else record = { failures: 0, windowStart: this.#now(), blockedUntil: 0, inFlight: 0 };
    this.#records.set(key, record);
    if (this.#records.size > this.#limits.trackedAddresses) {
      const oldest = this.#records.keys().next().value as string;
      this.#records.delete(oldest);
    }
    return record;
  }
}

type Granted = AuthResult & { readonly kind: 'ok' };
const READ_ONLY: AuthResult = Object.freeze({ kind: 'read-only' });

export class Authenticator {
  private users: ReadonlyMap<string, AriUser>;
  /**
   * Basic headers verified for a plain-password user, each with its success made once (frozen), so
   * that a request with a known header allocates no answer.
   */
  private readonly verifiedHeaders = new Map<string, Granted>();
  readonly #verifiedCrypt = new WeakMap<AriUser, Set<string>>();
  readonly #tagKey = crypto.randomBytes(32);
  readonly #hasher = new PasswordHasher();
  readonly #failed: FailedLogins;
  readonly #cryptBudget: CheckBudget;
  readonly #equaliseFailures: boolean;
  /** What an unknown user's password is checked against: a crypt decoy when any user has a crypt hash. */
  #decoyHash: string | undefined;
  readonly #decoyPlain = crypto.randomBytes(12).toString('base64');
  /** Per-user ACL lists, for the users that have any. */
  readonly #acls = new Map<string, AclRule[][]>();

  constructor(users: readonly AriUser[], options: AuthenticatorOptions = {}) {
    this.users = new Map(users.map((user) => [user.name, user]));
    this.#loadAcls(users, options.namedAcls);
    this.#failed = new FailedLogins(options.failedLogins ?? DEFAULT_FAILED_LOGIN_LIMITS, options.now ?? Date.now);
    this.#cryptBudget = new CheckBudget(options.cryptChecksPerSecond ?? 0, options.now ?? Date.now);
    this.#equaliseFailures = options.equaliseFailures ?? false;
    this.#decoyHash = decoyHashLike(users.filter((u) => u.passwordFormat === 'crypt').map((u) => u.password));
    if (this.#decoyHash !== undefined) this.#hasher.warmUp();
  }

  /** The user of this name as configured now (after any reload). */
  userNamed(name: string): AriUser | undefined {
    return this.users.get(name);
  }

  /**
   * Takes a reloaded user list: from now on only these users and passwords are accepted; every
   * credential verified before is forgotten (a removed user or changed password stops working at once).
   * The users' ACLs (and the named ACLs they reference) apply from the next request too.
   */
  replaceUsers(users: readonly AriUser[], namedAcls?: ReadonlyMap<string, NamedAcl>): void {
    this.users = new Map(users.map((user) => [user.name, user]));
    this.#loadAcls(users, namedAcls);
    this.verifiedHeaders.clear();
    this.#decoyHash = decoyHashLike(users.filter((u) => u.passwordFormat === 'crypt').map((u) => u.password));
    if (this.#decoyHash !== undefined) this.#hasher.warmUp();
  }

  /**
   * Synchronous for plain passwords and for credentials verified recently; a Promise when a crypt
   * hash has to be checked. `address` is the client's (`request.socket.remoteAddress`).
   */
  authenticate(headers: IncomingHttpHeaders, query: URLSearchParams, method: string, address?: string): AuthResult | Promise<AuthResult> {
    const header = headers.authorization;
    // A header already verified for a plain-password user maps straight to that user: the password
    // is held in plain text in the configuration anyway, so remembering its header reveals nothing new.
    // It passes even from a blocked address: a credential proven before teaches a guesser nothing,
    // and the applications sharing the address (loopback, a proxy) keep working.
    const known = header === undefined ? undefined : this.verifiedHeaders.get(header);
    if (known) return this.authorize(known.user, method, address, known);
    const credentials = credentialsFromBasic(header) ?? credentialsFromApiKey(query.get('api_key'));
    if (!credentials) return UNAUTHORIZED;
    const [name, password] = credentials;
    const user = this.users.get(name);

    if (user?.passwordFormat === 'crypt' || (user === undefined && this.#decoyHash !== undefined)) {
      return this.checkCrypt(user, password, method, address);
    }
    // Any other credential from a blocked address gets no check at all: it learns nothing, costs nothing.
    if (!this.#failed.empty && this.#failed.blocked(clientKey(address))) return UNAUTHORIZED;
    // Plain: an unknown name is compared against a decoy, so it costs what a known one does.
    if (!constantTimeEqual(password, user?.password ?? this.#decoyPlain) || user === undefined) {
      if (this.#equaliseFailures && this.#decoyHash !== undefined) {
        // The decoy check fails and counts the failure as an unknown name's does. Refused without
        // one (a budget spent), the guess was still compared: it counts against the address here.
        const checked = this.checkCrypt(undefined, password, method, address);
        if (!(checked instanceof Promise)) this.#failed.fail(clientKey(address));
        return checked;
      }
      this.#failed.fail(clientKey(address));
      return UNAUTHORIZED;
    }
    if (header !== undefined && credentialsFromBasic(header)) {
      if (this.verifiedHeaders.size >= MAX_REMEMBERED_HEADERS) this.verifiedHeaders.clear();
      this.verifiedHeaders.set(header, Object.freeze({ kind: 'ok', user }));
    }
    return this.authorize(user, method, address);
  }

  #loadAcls(users: readonly AriUser[], namedAcls: ReadonlyMap<string, NamedAcl> | undefined): void {
    this.#acls.clear();
    for (const user of users) {
      const lists = userAclLists(user, namedAcls);
      if (lists) this.#acls.set(user.name, lists);
    }
  }

  /** Stops the hashing thread; checks still waiting answer unauthorized. */
  close(): Promise<void> {
    return this.#hasher.close();
  }

  private checkCrypt(user: AriUser | undefined, password: string, method: string, address: string | undefined): AuthResult | Promise<AuthResult> {
    const key = clientKey(address);
    const tag = user && this.tag(user, password);
    if (user && this.#verifiedCrypt.get(user)?.has(tag!)) return this.authorize(user, method, address);
    if (!this.#failed.mayTry(key) || this.#hasher.pending >= MAX_PENDING_CHECKS) return UNAUTHORIZED;
    // Last, so that a refused address or a full queue spends nothing of the server-wide budget.
    if (!this.#cryptBudget.take()) return UNAUTHORIZED;
    this.#failed.begin(key);
    return this.#hasher.verify(password, user?.password ?? this.#decoyHash!).then((matches) => {
      const ok = matches && user !== undefined;
      this.#failed.end(key, ok);
      if (!ok) return UNAUTHORIZED;
      let verified = this.#verifiedCrypt.get(user);
      if (!verified) this.#verifiedCrypt.set(user, (verified = new Set()));
      if (verified.size >= VERIFIED_PER_USER) verified.clear();
      verified.add(tag!);
      return this.authorize(user, method, address);
    });
  }

  private tag(user: AriUser, password: string): string {
    return crypto.createHmac('sha256', this.#tagKey).update(user.password).update('\0').update(password).digest('base64');
  }

  /**
   * After the credentials, as Asterisk orders it: the user's ACL against the client address
   * (403 `Access denied by ACL`), then read-only users' write methods (403 `Write access denied`).
   */
  private authorize(user: AriUser, method: string, address: string | undefined, granted?: Granted): AuthResult {
    const acl = this.#acls.get(user.name);
    if (acl && !aclAllows(acl, address)) return ACL_DENIED;
    if (user.readOnly && method !== 'GET' && method !== 'OPTIONS') return READ_ONLY;
    return granted ?? { kind: 'ok', user };
  }
}
