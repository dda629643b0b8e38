// Value parsers for res_pjsip options, in Asterisk's spellings. Each returns the value or an error string.
import { isIP, isIPv4 } from 'node:net';

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(error: string): Parsed<T> => ({ ok: false, error });

/** Shows a value in an error message: bounded and without control characters. */
export function shown(value: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\x00-\x1f\x7f]/g, '?');
  return `'${clean.length > 60 ? `${clean.slice(0, 60)}…` : clean}'`;
}

const TRUE = new Set(['yes', 'true', 'y', 't', '1', 'on']);
const FALSE = new Set(['no', 'false', 'n', 'f', '0', 'off']);

/** Asterisk's ast_true / ast_false spellings. */
export function parseBool(value: string): Parsed<boolean> {
  const lower = value.trim().toLowerCase();
  if (TRUE.has(lower)) return ok(true);
  if (FALSE.has(lower)) return ok(false);
  return fail(`${shown(value)} is not yes or no`);
}

export function parseInteger(value: string, min: number, max: number): Parsed<number> {
  const text = value.trim();
  if (!/^\d{1,10}$/.test(text)) return fail(`${shown(value)} is not a whole number`);
  const number = Number(text);
  if (number < min || number > max) return fail(`${number} is not between ${min} and ${max}`);
  return ok(number);
}

export function parseDecimal(value: string, min: number, max: number): Parsed<number> {
  const text = value.trim();
  if (!/^\d{1,10}(\.\d{1,6})?$/.test(text)) return fail(`${shown(value)} is not a number`);
  const number = Number(text);
  if (number < min || number > max) return fail(`${number} is not between ${min} and ${max}`);
  return ok(number);
}

export function parseChoice<T extends string>(value: string, allowed: readonly T[]): Parsed<T> {
  const lower = value.trim().toLowerCase();
  const found = allowed.find((choice) => choice === lower);
  return found ? ok(found) : fail(`${shown(value)} is not one of ${allowed.join(', ')}`);
}

/** A comma-separated list, items trimmed, empty items dropped. */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** `"Name" <number>`, `Name <number>` or a bare number (Asterisk's callerid option). */
export function parseCallerId(value: string): Parsed<{ name?: string; number?: string }> {
  const text = value.trim();
  if (text === '') return ok({});
  const angle = /^(?:"((?:[^"\\]|\\.)*)"|([^<"]*?))\s*<([^<>]*)>$/.exec(text);
  if (angle) {
    const name = (angle[1] !== undefined ? angle[1].replace(/\\(.)/g, '$1') : angle[2]).trim();
    const number = angle[3].trim();
    return ok({ ...(name ? { name } : {}), ...(number ? { number } : {}) });
  }
  if (/[<>"]/.test(text)) return fail(`${shown(value)} is not "Name" <number>`);
  return ok({ number: text });
}

/** A SIP or SIPS URI, roughly: `sip:` then something. Full parsing is the SIP stack's business. */
export function parseSipUri(value: string): Parsed<string> {
  const text = value.trim();
  // eslint-disable-next-line no-control-regex
  if (!/^sips?:[^\s\x00-\x1f\x7f]+$/i.test(text)) return fail(`${shown(value)} is not a sip: URI`);
  return ok(text);
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/;

export function isHostName(value: string): boolean {
  return HOST_NAME.test(value);
}

/** An IP address or a host name, as the options naming where media or signalling go take it. */
export function parseAddress(value: string): Parsed<string> {
  const trimmed = value.trim();
  return isIP(trimmed) || isHostName(trimmed) ? ok(trimmed) : fail(`${shown(value)} is not an address or host name`);
}

export interface HostPort {
  readonly host: string;
  readonly port?: number;
}

/** `host`, `host:port`, `1.2.3.4:5060`, `[::1]:5060`, `::1`. */
export function parseHostPort(value: string): Parsed<HostPort> {
  const text = value.trim();
  let host = text;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracket) {
    host = bracket[1];
    portText = bracket[2];
    if (!isIP(host) || isIPv4(host)) return fail(`${shown(value)} is not [IPv6]:port`);
  } else if (!isIP(text)) {
    const colon = text.lastIndexOf(':');
    if (colon > 0 && text.indexOf(':') === colon) {
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
    }
    if (!isIPv4(host) && !isHostName(host)) return fail(`${shown(value)} is not an address or host name`);
  }
  if (portText === undefined) return ok({ host });
  const port = parseInteger(portText, 1, 65535);
  if (!port.ok) return fail(`port of ${shown(value)}: ${port.error}`);
  return ok({ host, port: port.value });
}

/** An IP network: the address bytes and how many leading bits must match. */
export interface IpNetwork {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
  readonly prefix: number;
  readonly text: string;
}

function ipBytes(address: string): { family: 4 | 6; bytes: Uint8Array } | undefined {
  const version = isIP(address);
  if (version === 4) return { family: 4, bytes: Uint8Array.from(address.split('.').map(Number)) };
  if (version !== 6) return undefined;
  let text = address.split('%')[0];
  const embedded = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (embedded) {
    const four = embedded[2].split('.').map(Number);
    text = `${embedded[1]}${((four[0] << 8) | four[1]).toString(16)}:${((four[2] << 8) | four[3]).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const number = Number.parseInt(group || '0', 16);
    bytes[i * 2] = number >> 8;
    bytes[i * 2 + 1] = number & 0xff;
  });
  return { family: 6, bytes };
}

function maskPrefix(mask: string): number | undefined {
  const parsed = ipBytes(mask);
  if (!parsed || parsed.family !== 4) return undefined;
  let prefix = 0;
  let ended = false;
  for (const byte of parsed.bytes) {
    for (let bit = 7; bit >= 0; bit--) {
      const set = (byte >> bit) & 1;
      if (set && ended) return undefined;
      if (set) prefix++;
      else ended = true;
    }
  }
  return prefix;
}

/** `1.2.3.4`, `1.2.3.0/24`, `1.2.3.0/255.255.255.0`, `2001:db8::/32`. */
export function parseNetwork(value: string): Parsed<IpNetwork> {
  const text = value.trim();
  const [address, suffix, extra] = text.split('/');
  if (extra !== undefined) return fail(`${shown(value)} is not an address or network`);
  const parsed = ipBytes(address.replace(/^\[(.*)\]$/, '$1'));
  if (!parsed) return fail(`${shown(value)} is not an address or network`);
  const bits = parsed.family === 4 ? 32 : 128;
  let prefix: number | undefined = bits;
  if (suffix !== undefined) {
    prefix = /^\d{1,3}$/.test(suffix) ? Number(suffix) : parsed.family === 4 ? maskPrefix(suffix) : undefined;
    if (prefix === undefined || prefix > bits) return fail(`${shown(value)} has a bad mask or prefix length`);
  }
  return ok({ family: parsed.family, bytes: parsed.bytes, prefix, text });
}

/** Whether an IP address (IPv4, IPv6 or IPv4-mapped IPv6) is inside a network. */
export function networkContains(network: IpNetwork, address: string): boolean {
  let parsed = ipBytes(address);
  if (!parsed) return false;
  if (parsed.family === 6 && network.family === 4 && parsed.bytes.subarray(0, 12).every((b, i) => b === (i >= 10 ? 0xff : 0))) {
    parsed = { family: 4, bytes: parsed.bytes.slice(12) };
  }
  if (parsed.family !== network.family) return false;
  const whole = network.prefix >> 3;
  for (let i = 0; i < whole; i++) if (parsed.bytes[i] !== network.bytes[i]) return false;
  const rest = network.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (parsed.bytes[whole] & mask) === (network.bytes[whole] & mask);
}

/** One `match=` item of an identify: a network, or a host name the technology resolves. */
export type IdentifyMatch = ({ readonly kind: 'network' } & IpNetwork) | { readonly kind: 'host'; readonly host: string; readonly port?: number };

export function parseIdentifyMatch(value: string): Parsed<IdentifyMatch> {
  const network = parseNetwork(value);
  if (network.ok) return ok({ kind: 'network', ...network.value });
  const hostPort = parseHostPort(value);
  if (hostPort.ok) {
    const { host, port } = hostPort.value;
    if (isIP(host)) return ok({ kind: 'network', ...(parseNetwork(host) as { ok: true; value: IpNetwork }).value });
    return ok({ kind: 'host', host, ...(port === undefined ? {} : { port }) });
  }
  return fail(`${shown(value)} is not an address, network or host name`);
}

/** Whether a source address matches an identify's `match` list (host names are the caller's to resolve). */
export function identifyMatchesAddress(match: readonly IdentifyMatch[], address: string): boolean {
  return match.some((item) => item.kind === 'network' && networkContains(item, address));
}
