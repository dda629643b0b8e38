// The ARI users of the settings (ari.users) and the ACLs they are checked against (their own
// permit/deny entries and the named ACLs of ari.acls, as ari.conf and acl.conf have them), with
// the embedded default user and the rule that finds it.
import { cryptHashProblem, verifyPassword } from '../util/password-hashes.ts';
import { parseAclRule } from '../util/acl.ts';
import { boolean, custom, describe, isPlainObject, oneOf, readSection, section, string, stringList, type Raw, type ReadContext, type Seg, type ValueOf } from './schema.ts';
import { noControl } from './value-checks.ts';

/** One `permit`/`deny` entry as configured; `order` is its place among the mapping's ACL entries. */
export interface AclEntry {
  readonly sense: 'permit' | 'deny';
  /** `[!]address[/mask]`, trimmed. */
  readonly entry: string;
  readonly order: number;
}

const MAX_ACL_ENTRIES = 1000;
const ACL_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * `permit` or `deny`: a list (or comma-separated string) of `[!]address[/mask]` entries. As in
 * ari.conf, where each line is appended in turn, the two keys' entries are evaluated in the order
 * the keys are written in the mapping (then in list order), so each entry records its place.
 */
function aclEntries(sense: 'permit' | 'deny', doc: string) {
  return custom<readonly AclEntry[], string[] | string>({
    docDefault: '`[]`',
    doc,
    read: (v, p, ctx, _scope, siblings) => {
      if (v === undefined || v === null) return Object.freeze([]);
      let items: unknown[];
      if (typeof v === 'string') items = v.split(',');
      else if (Array.isArray(v)) items = v;
      else return ctx.fail(p, `must be a list or a comma-separated string of addresses/networks, got ${describe(v)}`);
      if (items.length > MAX_ACL_ENTRIES) ctx.fail(p, `must have at most ${MAX_ACL_ENTRIES} entries, got ${items.length}`);
      const keyPlace = Object.keys(siblings).indexOf(sense);
      return Object.freeze(
        items.map((item, i) => {
          const ip = Array.isArray(v) ? [...p, i] : p;
          if (typeof item !== 'string') return ctx.fail(ip, `must be a string, got ${describe(item)}`);
          const rule = parseAclRule(item, sense === 'permit');
          if (typeof rule === 'string') return ctx.fail(ip, rule);
          return Object.freeze({ sense, entry: rule.text, order: keyPlace * MAX_ACL_ENTRIES + i });
        }),
      );
    },
  });
}

const ACL_RULES = {
  permit: aclEntries('permit', 'Networks allowed: `address[/mask]` entries (IPv4 or IPv6; mask as prefix length or netmask; `!` inverts). List or comma-separated string. See [ARI user ACLs](#ari-user-acls)'),
  deny: aclEntries('deny', 'Networks refused, written as for `permit`. `permit` and `deny` entries are evaluated in the order they are written (the key written first goes first); the last match wins'),
} as const;

/** A named ACL (acl.conf): `permit` and `deny` entries. */
export const NAMED_ACL = section(ACL_RULES);
export type NamedAcl = ValueOf<typeof NAMED_ACL>;

/** `ari.acls`: named ACLs, looked up case-insensitively (as Asterisk does) by lower-cased name. */
export function readNamedAcls(v: unknown, p: readonly Seg[], ctx: ReadContext): ReadonlyMap<string, NamedAcl> {
  const out = new Map<string, NamedAcl>();
  if (v === undefined || v === null) return out;
  if (!isPlainObject(v)) ctx.fail(p, `must be a mapping of ACL names to permit/deny lists, got ${describe(v)}`);
  for (const [name, body] of Object.entries(v)) {
    if (!ACL_NAME_RE.test(name)) ctx.fail([...p, name], 'an ACL name must be 1–64 letters, digits, `_`, `.` or `-`');
    const key = name.toLowerCase();
    if (out.has(key)) ctx.fail([...p, name], `duplicate ACL name '${name}' (names are case-insensitive)`);
    out.set(key, readSection(NAMED_ACL, body, [...p, name], ctx));
  }
  return out;
}

export const USER = section({
  name: string({
    required: true,
    docDefault: '(required)',
    doc: 'User name. It must be unique and must not contain `:`',
    check: (s) =>
      s === '' ? 'must not be empty'
        : s.includes(':') ? "must not contain ':' (HTTP Basic auth splits user and password at the first ':')"
          : noControl(s),
  }),
  // Read after password_format (late), which says how to check it.
  password: string({
    required: true,
    late: true,
    docDefault: '(required)',
    doc: 'Password, or a crypt hash when `password_format: crypt`',
    check: (s, user) => (s === '' ? 'must not be empty' : user.passwordFormat === 'crypt' ? cryptHashProblem(s) : null),
  }),
  password_format: oneOf({ values: ['plain', 'crypt'], default: 'plain', doc: '`plain` or `crypt`', docDefault: '`plain`' }),
  read_only: boolean({
    default: false,
    doc: 'When true, only GET and OPTIONS are allowed (others get 403). A read-only user may open the event WebSocket (`GET /ari/events`, as Asterisk allows) for applications no read-write user holds; connecting to an application a read-write user holds is refused with 403 and the holder keeps it. A read-write user connecting to an application a read-only user holds takes it over (ApplicationReplaced)',
  }),
  ...ACL_RULES,
  acl: stringList({
    default: [],
    comma: true,
    doc: 'Named ACLs (from `ari.acls`) the client address must also pass; each must allow it. List or comma-separated string',
    check: (s) => (ACL_NAME_RE.test(s) ? null : `'${s}' is not an ACL name`),
  }),
});

export type AriUser = ValueOf<typeof USER>;

export const DEFAULT_USER: AriUser = Object.freeze({
  name: 'asterisk',
  password: 'asterisk',
  passwordFormat: 'plain',
  readOnly: false,
  permit: Object.freeze([]),
  deny: Object.freeze([]),
  acl: Object.freeze([]),
});

/** Every named ACL a user references must be defined in `ari.acls` (Asterisk would deny everything). */
export function checkUserAcls(ari: Raw, p: readonly Seg[], ctx: ReadContext): void {
  const acls = ari.acls as ReadonlyMap<string, NamedAcl>;
  (ari.users as readonly AriUser[]).forEach((user, i) => {
    const seen = new Set<string>();
    user.acl.forEach((name, j) => {
      const key = name.toLowerCase();
      if (!acls.has(key)) ctx.fail([...p, 'users', i, 'acl', j], `unknown ACL '${name}' (define it under ari.acls)`);
      if (seen.has(key)) ctx.fail([...p, 'users', i, 'acl', j], `ACL '${name}' is listed twice`);
      seen.add(key);
    });
  });
}

/** True when any user still has the embedded default credentials asterisk/asterisk (a crypt hash of them too). */
export function usesDefaultPassword(users: readonly AriUser[]): boolean {
  // Remembered per (frozen) list: a crypt check costs milliseconds, and the bind rule asks first.
  let known = defaultPasswordIn.get(users);
  if (known === undefined) {
    known = users.some((u) => u.name === DEFAULT_USER.name && verifyPassword(u, DEFAULT_USER.password));
    defaultPasswordIn.set(users, known);
  }
  return known;
}
const defaultPasswordIn = new WeakMap<readonly AriUser[], boolean>();
