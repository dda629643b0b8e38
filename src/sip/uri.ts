/**
 * SIP URIs (RFC 3261 §19.1) and the name-addr / addr-spec forms used by From, To, Contact, Route.
 * Parsing never throws: it returns null for anything it cannot read. The user and password are
 * kept unescaped; parameter and header values are kept as written (escapes included) with their
 * names lower-cased, so a URI formats back to an equivalent string.
 */

export const MAX_URI_LENGTH = 4096;
const MAX_URI_PARAMS = 64;

export interface SipUri {
  readonly kind: 'sip';
  /** 'sip' or 'sips' (lower-cased). */
  scheme: 'sip' | 'sips';
  /** Unescaped user part, or undefined when the URI has none. */
  user?: string;
  /** Unescaped password, or undefined. */
  password?: string;
  /** Host as written (IPv6 without brackets), lower-cased. */
  host: string;
  port?: number;
  /** URI parameters: lower-cased name → raw value (null for a flag such as `lr`). */
  params: Map<string, string | null>;
  /** URI headers (`?name=value&...`): raw name → raw value. */
  headers: Map<string, string>;
}

/** Any other absolute URI (tel:, http:, unknown schemes): kept opaque. */
export interface OtherUri {
  readonly kind: 'other';
  scheme: string;
  /** Everything after the scheme's colon, as written. */
  opaque: string;
}

export type Uri = SipUri | OtherUri;

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9.])?$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;
// user-unreserved and unreserved plus escapes (RFC 3261 §25.1)
const USER_CHARS = /^(?:[A-Za-z0-9\-_.!~*'()&=+$,;?/]|%[0-9A-Fa-f]{2})+$/;
const PASSWORD_CHARS = /^(?:[A-Za-z0-9\-_.!~*'()&=+$,]|%[0-9A-Fa-f]{2})*$/;
const PARAM_CHARS = /^(?:[A-Za-z0-9\-_.!~*'()[\]/:&+$]|%[0-9A-Fa-f]{2})+$/;
const HEADER_CHARS = /^(?:[A-Za-z0-9\-_.!~*'()[\]/?:+$]|%[0-9A-Fa-f]{2})*$/;

/** Percent-decodes a string; malformed escapes are left as written. */
export function unescape(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    // not valid UTF-8 once decoded: decode byte by byte as latin1
    return value.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}

const USER_SAFE = /[A-Za-z0-9\-_.!~*'()&=+$,;?/]/;
const PASSWORD_SAFE = /[A-Za-z0-9\-_.!~*'()&=+$,]/;

function escapeWith(value: string, safe: RegExp): string {
  let out = '';
  for (const ch of value) {
    if (safe.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

export function escapeUser(value: string): string {
  return escapeWith(value, USER_SAFE);
}

function isIPv4(host: string): boolean {
  const parts = host.split('.');
  if (parts.length !== 4) return false;
  return parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/** Parses host[:port] (IPv6 in brackets). Returns null when malformed. */
export function parseHostPort(text: string): { host: string; port?: number } | null {
  let host: string;
  let rest: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return null;
    host = text.slice(1, close);
    if (!IPV6.test(host) || !host.includes(':')) return null;
    rest = text.slice(close + 1);
  } else {
    const colon = text.indexOf(':');
    host = colon < 0 ? text : text.slice(0, colon);
    rest = colon < 0 ? '' : text.slice(colon);
    if (!HOSTNAME.test(host)) return null;
  }
  if (rest === '') return { host: host.toLowerCase() };
  if (!/^:\d{1,5}$/.test(rest)) return null;
  const port = Number(rest.slice(1));
  if (port > 65535) return null;
  return { host: host.toLowerCase(), port };
}

/** Formats a host for a URI or Via: IPv6 addresses in brackets. */
export function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export function parseUri(text: string): Uri | null {
  if (text.length === 0 || text.length > MAX_URI_LENGTH) return null;
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  const scheme = text.slice(0, colon);
  if (!SCHEME.test(scheme)) return null;
  const lower = scheme.toLowerCase();
  const rest = text.slice(colon + 1);
  if (lower !== 'sip' && lower !== 'sips') {
    if (rest.length === 0 || /[\s<>"]/.test(rest)) return null;
    return { kind: 'other', scheme: lower, opaque: rest };
  }
  return parseSipUri(lower, rest);
}

function parseSipUri(scheme: 'sip' | 'sips', rest: string): SipUri | null {
  if (/[\x00-\x20\x7f<>"]/.test(rest)) return null;
  // neither parameters nor headers may hold an unescaped '@': the last one ends the userinfo,
  // which itself may contain '?' and ';'
  const at = rest.lastIndexOf('@');
  const afterUser = at < 0 ? rest : rest.slice(at + 1);
  const question = afterUser.indexOf('?');
  const headerText = question < 0 ? '' : afterUser.slice(question + 1);
  let user: string | undefined;
  let password: string | undefined;
  let hostAndParams = question < 0 ? afterUser : afterUser.slice(0, question);
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    // the password cannot contain ';' or '?', the user may: split at the first ':'
    const pc = userinfo.indexOf(':');
    const userRaw = pc < 0 ? userinfo : userinfo.slice(0, pc);
    if (!USER_CHARS.test(userRaw)) return null;
    user = unescape(userRaw);
    if (pc >= 0) {
      const pw = userinfo.slice(pc + 1);
      if (!PASSWORD_CHARS.test(pw)) return null;
      password = unescape(pw);
    }
  }
  const semi = hostAndParams.indexOf(';', hostAndParams.startsWith('[') ? hostAndParams.indexOf(']') : 0);
  const hostPortText = semi < 0 ? hostAndParams : hostAndParams.slice(0, semi);
  const hp = parseHostPort(hostPortText);
  if (!hp) return null;
  const params = new Map<string, string | null>();
  if (semi >= 0) {
    const parts = hostAndParams.slice(semi + 1).split(';');
    if (parts.length > MAX_URI_PARAMS) return null;
    for (const part of parts) {
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      const value = eq < 0 ? null : part.slice(eq + 1);
      if (!PARAM_CHARS.test(name)) return null;
      if (value !== null && !PARAM_CHARS.test(value)) return null;
      const key = name.toLowerCase();
      if (params.has(key)) return null; // RFC 3261: a parameter appears at most once
      params.set(key, value);
    }
  }
  const headers = new Map<string, string>();
  if (question >= 0) {
    const parts = headerText.split('&');
    if (parts.length > MAX_URI_PARAMS) return null;
    for (const part of parts) {
      const eq = part.indexOf('=');
      if (eq <= 0) return null;
      const name = part.slice(0, eq);
      const value = part.slice(eq + 1);
      if (!HEADER_CHARS.test(name) || !HEADER_CHARS.test(value)) return null;
      headers.set(name, value);
    }
  }
  const uri: SipUri = { kind: 'sip', scheme, host: hp.host, params, headers };
  if (user !== undefined) uri.user = user;
  if (password !== undefined) uri.password = password;
  if (hp.port !== undefined) uri.port = hp.port;
  return uri;
}

export function formatUri(uri: Uri): string {
  if (uri.kind === 'other') return `${uri.scheme}:${uri.opaque}`;
  let out = uri.scheme + ':';
  if (uri.user !== undefined) {
    out += escapeUser(uri.user);
    if (uri.password !== undefined) out += ':' + escapeWith(uri.password, PASSWORD_SAFE);
    out += '@';
  }
  out += formatHost(uri.host);
  if (uri.port !== undefined) out += ':' + uri.port;
  for (const [name, value] of uri.params) out += value === null ? `;${name}` : `;${name}=${value}`;
  let first = true;
  for (const [name, value] of uri.headers) {
    out += (first ? '?' : '&') + name + '=' + value;
    first = false;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// name-addr / addr-spec with header parameters (From, To, Contact, Route, Record-Route …)

export interface NameAddr {
  /** Display name, unquoted and unescaped; undefined when absent. */
  displayName?: string;
  uri: Uri;
  /** The URI text as written (between the angle brackets, or the addr-spec). */
  uriText: string;
  /** Header parameters: lower-cased name → value (quotes kept), null for a flag. */
  params: Map<string, string | null>;
  /** True when the value was `*` (Contact: *). */
  wildcard?: false;
}

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

/** Splits `;`-separated parameters, honouring quoted strings. Returns null when malformed. */
export function parseParams(text: string, into: Map<string, string | null> = new Map()): Map<string, string | null> | null {
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= n) break;
    if (text[i] !== ';') return null;
    i++;
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
    let start = i;
    while (i < n && text[i] !== '=' && text[i] !== ';' && text[i] !== ' ' && text[i] !== '\t') i++;
    const name = text.slice(start, i);
    if (!TOKEN.test(name)) return null;
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
    let value: string | null = null;
    if (text[i] === '=') {
      i++;
      while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
      if (text[i] === '"') {
        start = i;
        i++;
        while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
        if (i >= n) return null;
        i++;
        value = text.slice(start, i);
      } else {
        start = i;
        while (i < n && text[i] !== ';' && text[i] !== ' ' && text[i] !== '\t') i++;
        value = text.slice(start, i);
        if (value.length === 0 || /[",]/.test(value)) return null;
      }
    }
    if (into.size >= MAX_URI_PARAMS) return null;
    into.set(name.toLowerCase(), value);
  }
  return into;
}

/** Removes surrounding quotes and backslash escapes. */
export function unquote(value: string): string {
  if (value.length < 2 || value[0] !== '"' || value[value.length - 1] !== '"') return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}

export function quote(value: string): string {
  return '"' + value.replace(/(["\\])/g, '\\$1') + '"';
}

/** Parses one name-addr or addr-spec with its header parameters. Returns null when malformed. */
export function parseNameAddr(text: string): NameAddr | null {
  const s = text.trim();
  if (s.length === 0 || s.length > MAX_URI_LENGTH * 2) return null;
  let displayName: string | undefined;
  let i = 0;
  let uriText: string;
  let rest: string;
  if (s[0] === '"') {
    i = 1;
    while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
    if (i >= s.length) return null;
    displayName = unquote(s.slice(0, i + 1));
    i++;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] !== '<') return null;
  }
  const lt = s.indexOf('<', i);
  if (lt >= 0 && (displayName !== undefined || /^[^;"]*$/.test(s.slice(0, lt)))) {
    if (displayName === undefined) {
      const name = s.slice(0, lt).trim();
      if (name.length > 0) {
        // unquoted display name: tokens separated by LWS
        if (!/^[A-Za-z0-9\-.!%*_+`'~ \t]+$/.test(name)) return null;
        displayName = name.replace(/[ \t]+/g, ' ');
      }
    }
    const gt = s.indexOf('>', lt);
    if (gt < 0) return null;
    uriText = s.slice(lt + 1, gt);
    rest = s.slice(gt + 1);
  } else {
    // addr-spec: the URI ends at the first ';' (its parameters are header parameters) or LWS
    let end = 0;
    while (end < s.length && s[end] !== ';' && s[end] !== ' ' && s[end] !== '\t') end++;
    uriText = s.slice(0, end);
    rest = s.slice(end);
    if (uriText.includes('?') || uriText.includes(',')) return null;
  }
  const uri = parseUri(uriText);
  if (!uri) return null;
  const params = parseParams(rest);
  if (!params) return null;
  const result: NameAddr = { uri, uriText, params };
  if (displayName !== undefined) result.displayName = displayName;
  return result;
}

export function formatNameAddr(value: { displayName?: string; uri: Uri | string; params?: Map<string, string | null> }): string {
  const uriText = typeof value.uri === 'string' ? value.uri : formatUri(value.uri);
  let out = value.displayName !== undefined && value.displayName !== '' ? `${quote(value.displayName)} <${uriText}>` : `<${uriText}>`;
  for (const [name, v] of value.params ?? []) out += v === null ? `;${name}` : `;${name}=${v}`;
  return out;
}
