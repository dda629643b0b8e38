// Network access control lists with Asterisk's semantics (acl.c `ast_append_ha`/`ast_apply_ha`/
// `ast_apply_acl`), used for the per-user ACLs of ARI users (`permit`, `deny`, `acl`).
//
// - A rule is `[!]address[/mask]`: the mask is a CIDR prefix length or a netmask written as an
//   address of the same family; without a mask the rule names one host. `!` inverts the rule's
//   sense. The address is reduced to its network (10.1.2.3/8 is 10.0.0.0/8).
// - An IPv4-mapped IPv6 rule (`::ffff:10.0.0.0/8`) is turned into the IPv4 rule, as Asterisk does:
//   its CIDR length is then an IPv4 one (0–32).
// - One list of rules is evaluated in order starting from "allow"; every matching rule sets the
//   answer, so the LAST match wins. IPv4 rules apply to IPv4 and IPv4-mapped IPv6 clients, IPv6
//   rules only to other IPv6 clients.
// - Several lists (a user's own rules, then each named ACL it references) must each allow the
//   client: one deny refuses.
// The parser accepts only canonical numeric forms (dotted quads without leading zeros, RFC 4291
// text for IPv6) and never throws: any input gives a rule or a one-line problem.

/** A parsed address: 4 bytes (IPv4) or 16 bytes (IPv6). */
export type AddressBytes = Uint8Array;

export interface AclRule {
  /** True for a rule that permits (a `permit` entry, or a `!` entry of a deny list). */
  readonly allow: boolean;
  /** The network address (already masked), 4 or 16 bytes. */
  readonly network: AddressBytes;
  /** The netmask, the same length as `network`. */
  readonly mask: AddressBytes;
  /** The entry as written, for messages and logs. */
  readonly text: string;
}

/** Longest address text looked at; anything longer is not an address. */
const MAX_ADDRESS_TEXT = 64;

function parseIpv4(text: string): AddressBytes | undefined {
  if (text.length > 15) return undefined;
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    // No leading zeros: inet_aton would read "010" as octal 8, a classic ACL surprise.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes[i] = value;
  }
  return bytes;
}

function parseIpv6(text: string): AddressBytes | undefined {
  if (text.length > 45 || text.length < 2) return undefined;
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === '') return [];
    const pieces = part.split(':');
    const out: number[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIpv4(piece);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return undefined;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !tail) return undefined;
  // An embedded IPv4 tail is only allowed at the very end.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined;
  const total = head.length + tail.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return undefined;
  const groups = [...head, ...new Array<number>(8 - total).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/** `::ffff:a.b.c.d` as its IPv4 address, else undefined. */
function unmapIpv4(bytes: AddressBytes): AddressBytes | undefined {
  if (bytes.length !== 16) return undefined;
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return undefined;
  if (bytes[10] !== 0xff || bytes[11] !== 0xff) return undefined;
  return bytes.slice(12);
}

/**
 * A numeric IPv4 or IPv6 address (IPv6 optionally in brackets or with a `%zone`, which is
 * ignored). IPv4-mapped IPv6 addresses come back as IPv4. Undefined for anything else.
 */
export function parseAddress(text: string): AddressBytes | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_ADDRESS_TEXT) return undefined;
  let candidate = text;
  if (candidate.startsWith('[') && candidate.endsWith(']')) candidate = candidate.slice(1, -1);
  const zone = candidate.indexOf('%');
  if (zone >= 0) candidate = candidate.slice(0, zone);
  if (!candidate.includes(':')) return parseIpv4(candidate);
  const v6 = parseIpv6(candidate);
  return v6 && (unmapIpv4(v6) ?? v6);
}

function prefixMask(bits: number, length: 4 | 16): AddressBytes {
  const mask = new Uint8Array(length);
  for (let i = 0; i < length && bits > 0; i++, bits -= 8) mask[i] = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
  return mask;
}

/**
 * One ACL entry of a `permit` (allow) or `deny` list: `[!]address[/mask]`. Returns the rule, or a
 * problem in one line.
 */
export function parseAclRule(entry: string, allowList: boolean): AclRule | string {
  const text = entry.trim();
  if (text === '') return 'an ACL entry must not be empty';
  if (text.length > 2 * MAX_ADDRESS_TEXT + 2) return `'${text.slice(0, 40)}…' is too long for an ACL entry`;
  let body = text;
  let allow = allowList;
  if (body.startsWith('!')) {
    allow = !allowList;
    body = body.slice(1);
  }
  const slash = body.indexOf('/');
  const addressText = slash < 0 ? body : body.slice(0, slash);
  const maskText = slash < 0 ? undefined : body.slice(slash + 1);
  const address = parseAddress(addressText);
  if (!address) return `'${addressText}' is not an IPv4 or IPv6 address (write e.g. 10.0.0.0/8 or 2001:db8::/32)`;
  const length = address.length as 4 | 16;
  let mask: AddressBytes;
  if (maskText === undefined) {
    mask = prefixMask(length * 8, length);
  } else if (/^[0-9]{1,3}$/.test(maskText)) {
    const bits = Number(maskText);
    if (bits > length * 8) return `prefix length /${maskText} is too long for ${length === 4 ? 'an IPv4' : 'an IPv6'} address (0–${length * 8})`;
    mask = prefixMask(bits, length);
  } else {
    const parsed = maskText.includes(':') || maskText.includes('.') ? parseAddress(maskText) : undefined;
    if (!parsed) return `'${maskText}' is not a prefix length or a netmask`;
    if (parsed.length !== length) return `netmask '${maskText}' is not of the same address family as '${addressText}'`;
    mask = parsed;
  }
  const network = address.map((byte, i) => byte & mask[i]!);
  return { allow, network, mask, text };
}

/** Whether one list of rules allows the client (last match wins, starting from allow). */
export function rulesAllow(rules: readonly AclRule[], client: AddressBytes): boolean {
  let allowed = true;
  for (const rule of rules) {
    if (rule.network.length !== client.length) continue;
    let matches = true;
    for (let i = 0; i < client.length; i++) {
      if ((client[i]! & rule.mask[i]!) !== rule.network[i]) {
        matches = false;
        break;
      }
    }
    if (matches) allowed = rule.allow;
  }
  return allowed;
}

/**
 * Whether every list allows the client address (as `socket.remoteAddress` gives it). An address
 * that cannot be read is refused whenever some list has a rule: the check fails closed.
 */
export function aclAllows(lists: readonly (readonly AclRule[])[], clientAddress: string | undefined): boolean {
  if (lists.every((rules) => rules.length === 0)) return true;
  const client = clientAddress === undefined ? undefined : parseAddress(clientAddress);
  if (!client) return false;
  return lists.every((rules) => rulesAllow(rules, client));
}

// ---- without allocation, for a check on every packet (res_pjsip's ACL) ---------------------------

/** Reads a dotted quad of text[start, end) into out[at..at+3]; false when it is not one. */
function readIpv4Into(text: string, start: number, end: number, out: Uint8Array, at: number): boolean {
  let part = 0;
  let digits = 0;
  let count = 0;
  for (let i = start; i <= end; i++) {
    const c = i === end ? 0x2e : text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || count === 4) return false;
      out[at + count++] = part;
      part = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && part === 0) return false; // a leading zero (octal to inet_aton)
      part = part * 10 + (c - 0x30);
      digits += 1;
      if (part > 255) return false;
    } else {
      return false;
    }
  }
  return count === 4;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** Reads RFC 4291 text of text[start, end) into the 16 bytes of out; false when it is not one. */
function readIpv6Into(text: string, start: number, end: number, out: Uint8Array): boolean {
  out.fill(0);
  if (end - start < 2) return false;
  let pos = 0;
  let gap = -1;
  let i = start;
  if (text.charCodeAt(i) === 0x3a) {
    if (text.charCodeAt(i + 1) !== 0x3a) return false;
    gap = 0;
    i += 2;
  }
  while (i < end) {
    if (pos >= 16) return false;
    let value = 0;
    let j = i;
    for (; j < end; j++) {
      const digit = hexValue(text.charCodeAt(j));
      if (digit < 0) break;
      if (j - i === 4) return false;
      value = value * 16 + digit;
    }
    if (j < end && text.charCodeAt(j) === 0x2e) {
      // The last 32 bits as a dotted quad (::ffff:10.0.0.1).
      if (pos > 12 || !readIpv4Into(text, i, end, out, pos)) return false;
      pos += 4;
      break;
    }
    if (j === i) return false;
    out[pos++] = value >> 8;
    out[pos++] = value & 0xff;
    i = j;
    if (i === end) break;
    if (text.charCodeAt(i) !== 0x3a) return false;
    i += 1;
    if (i < end && text.charCodeAt(i) === 0x3a) {
      if (gap >= 0) return false;
      gap = pos;
      i += 1;
    } else if (i === end) {
      return false;
    }
  }
  if (gap < 0) return pos === 16;
  if (pos === 16) return false;
  const tail = pos - gap;
  for (let k = tail - 1; k >= 0; k--) out[16 - tail + k] = out[gap + k]!;
  for (let k = gap; k < 16 - tail; k++) out[k] = 0;
  return true;
}

/**
 * The numeric address `text` (as a socket reports it, or a URI host: IPv6 in brackets or with a
 * `%zone` too) read into `out` (16 bytes) without allocating: 4 when it is IPv4 (out[0..3]; an
 * IPv4-mapped IPv6 address counts as its IPv4 one, as Asterisk applies IPv4 rules to it), 16 for
 * IPv6, 0 when it is not an address.
 */
export function readAddressInto(text: string, out: Uint8Array): 0 | 4 | 16 {
  let start = 0;
  let end = text.length;
  if (end === 0 || end > MAX_ADDRESS_TEXT) return 0;
  if (text.charCodeAt(0) === 0x5b) {
    if (text.charCodeAt(end - 1) !== 0x5d) return 0;
    start = 1;
    end -= 1;
  }
  let colon = false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25) {
      end = i; // %zone
      break;
    }
    if (c === 0x3a) colon = true;
  }
  if (!colon) return readIpv4Into(text, start, end, out, 0) ? 4 : 0;
  if (!readIpv6Into(text, start, end, out)) return 0;
  for (let i = 0; i < 10; i++) if (out[i] !== 0) return 16;
  if (out[10] !== 0xff || out[11] !== 0xff) return 16;
  out[0] = out[12]!;
  out[1] = out[13]!;
  out[2] = out[14]!;
  out[3] = out[15]!;
  return 4;
}

/** rulesAllow over an address readAddressInto read (its first `length` bytes), allocating nothing. */
export function rulesAllowBytes(rules: readonly AclRule[], address: Uint8Array, length: number): boolean {
  let allowed = true;
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r]!;
    if (rule.network.length !== length) continue;
    let matches = true;
    for (let i = 0; i < length; i++) {
      if ((address[i]! & rule.mask[i]!) !== rule.network[i]) {
        matches = false;
        break;
      }
    }
    if (matches) allowed = rule.allow;
  }
  return allowed;
}
