// The SIP headers of one channel's session, as res_pjsip_header_funcs keeps them: an inbound
// channel starts with the headers of the INVITE that created it, an outbound one with none. The
// dialplan reads the list (PJSIP_HEADER(read), PJSIP_HEADERS) and adds, updates or removes
// headers (PJSIP_HEADER(add|update|remove)); an outbound channel's INVITE carries the headers
// added before it was sent. The technology owns the list; the functions only go through here.
import type { Logger } from 'pino';
import type { Channel } from '../../core/channels/channel.ts';
import { InvalidError } from '../../core/errors.ts';
import { canonicalName } from '../../sip/message.ts';

/** Headers one channel may add (PJSIP_HEADER(add) and SIPAddHeader together). */
export const MAX_ADDED_SIP_HEADERS = 32;
/** Longest value of an added header, in characters. */
export const MAX_SIP_HEADER_VALUE_LENGTH = 1024;
/** Longest header name accepted. */
export const MAX_SIP_HEADER_NAME_LENGTH = 64;

/** RFC 3261 `token`: the characters a header name is made of. */
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

/**
 * Headers the SIP stack writes itself: adding one would give the request two Call-IDs, two
 * Content-Lengths... (compact forms included). Asterisk leaves this to the administrator; a
 * request that the far end cannot parse helps nobody, so they are refused.
 */
const STRUCTURAL_HEADERS: ReadonlySet<string> = new Set([
  'via', 'v', 'from', 'f', 'to', 't', 'call-id', 'i', 'cseq', 'contact', 'm', 'content-length', 'l',
  'content-type', 'c', 'max-forwards', 'route', 'record-route',
]);

export interface SipHeader {
  readonly name: string;
  value: string;
}

/** A header name the dialplan may add: a SIP token, not one the stack writes itself. */
export function checkAddableHeaderName(name: string): void {
  if (name === '' || name.length > MAX_SIP_HEADER_NAME_LENGTH || !TOKEN.test(name) || name.endsWith('*')) {
    throw new InvalidError(`Not a valid SIP header name: ${name.slice(0, 64)}`);
  }
  if (STRUCTURAL_HEADERS.has(name.toLowerCase())) throw new InvalidError(`The ${name} header is written by the SIP stack and cannot be added`);
}

/** A value that stays one header line: no CR, LF or other control characters (tab allowed), bounded. */
export function checkHeaderValue(name: string, value: string): void {
  if (value.length > MAX_SIP_HEADER_VALUE_LENGTH) throw new InvalidError(`The value of ${name.slice(0, 64)} is longer than ${MAX_SIP_HEADER_VALUE_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) throw new InvalidError(`The value of ${name.slice(0, 64)} contains control characters (CR/LF)`);
}

/** `X-Foo` matches itself (any case); `X-*` every name beginning with `X-`; `*` every name. */
function matcher(pattern: string): (name: string) => boolean {
  const lower = pattern.toLowerCase();
  if (lower.endsWith('*')) {
    const prefix = lower.slice(0, -1);
    return (name) => name.toLowerCase().startsWith(prefix);
  }
  return (name) => name.toLowerCase() === lower;
}

/** A message's headers as PJSIP_HEADER lists them: compact forms (`i:`, `f:`) under their full names, as pjsip prints them. */
export function sessionHeadersOf(headers: readonly SipHeader[]): SessionHeaders {
  return new SessionHeaders(headers.map((h) => ({ name: h.name.length === 1 ? canonicalName(h.name) : h.name, value: h.value })));
}

export class SessionHeaders {
  readonly #headers: SipHeader[];
  #added = 0;
  #sent = false;

  constructor(initial: Iterable<{ readonly name: string; readonly value: string }> = []) {
    this.#headers = [...initial].map(({ name, value }) => ({ name, value }));
  }

  /** Occurrence `number` (from 1) of the headers matching `pattern`; undefined when there is none. */
  read(pattern: string, number = 1): string | undefined {
    const matches = matcher(pattern);
    let seen = 0;
    for (const header of this.#headers) if (matches(header.name) && ++seen === number) return header.value.trim();
    return undefined;
  }

  /** The distinct names beginning with `prefix` (all names when it is empty), in order of first appearance. */
  names(prefix = ''): string[] {
    const lower = prefix.toLowerCase();
    const seen = new Set<string>();
    const names: string[] = [];
    for (const { name } of this.#headers) {
      if (!name.toLowerCase().startsWith(lower) || seen.has(name.toLowerCase())) continue;
      seen.add(name.toLowerCase());
      names.push(name);
    }
    return names;
  }

  /** Appends a header; InvalidError for a bad name or value, or past MAX_ADDED_SIP_HEADERS. */
  add(name: string, value: string): void {
    checkAddableHeaderName(name);
    checkHeaderValue(name, value);
    if (this.#added >= MAX_ADDED_SIP_HEADERS) throw new InvalidError(`At most ${MAX_ADDED_SIP_HEADERS} SIP headers can be added to a channel`);
    this.#added++;
    this.#headers.push({ name, value });
  }

  /** Replaces the value of occurrence `number` of header `name`; InvalidError when it does not exist. */
  update(name: string, number: number, value: string): void {
    checkHeaderValue(name, value);
    const lower = name.toLowerCase();
    let seen = 0;
    for (const header of this.#headers) {
      if (header.name.toLowerCase() === lower && ++seen === number) {
        header.value = value;
        return;
      }
    }
    throw new InvalidError(`There is no header named ${name.slice(0, 64)}`);
  }

  /** Removes every header matching `pattern` (`X-Foo`, `X-*`, `*`); returns how many went. */
  remove(pattern: string): number {
    const matches = matcher(pattern);
    let removed = 0;
    for (let i = this.#headers.length - 1; i >= 0; i--) {
      if (!matches(this.#headers[i].name)) continue;
      this.#headers.splice(i, 1);
      removed++;
    }
    this.#added = Math.max(0, this.#added - removed);
    return removed;
  }

  /** Whether the outgoing INVITE has been sent (later additions go nowhere). */
  get sent(): boolean {
    return this.#sent;
  }

  /** The headers for the outgoing INVITE, once: afterwards the list is spent, as Asterisk's is. */
  takeForRequest(): SipHeader[] {
    this.#sent = true;
    return this.#headers.splice(0, this.#headers.length);
  }
}

/**
 * The headers the dialplan gave an outbound INVITE: `SIPADDHEADERnn` variables (SIPAddHeader,
 * inherited from the caller as `__SIPADDHEADERnn`, `Name: value`) in name order, then the channel's
 * PJSIP_HEADER(add) ones (spent by this). Bad names or values are skipped (logged): the call still
 * goes out.
 */
export function dialplanHeaders(channel: Channel, added: SessionHeaders, log: Logger): SipHeader[] {
  const headers: SipHeader[] = [];
  const fromVariables = channel
    .variableNames()
    .filter((name) => name.replace(/^_{1,2}/, '').toUpperCase().startsWith('SIPADDHEADER'))
    .sort((a, b) => a.replace(/^_+/, '').localeCompare(b.replace(/^_+/, '')));
  for (const variable of fromVariables) {
    const text = (channel.getVariable(variable) ?? '').replace(/^\s*"/, '').replace(/"\s*$/, '');
    const colon = text.indexOf(':');
    const name = colon < 0 ? '' : text.slice(0, colon).trim();
    const value = colon < 0 ? '' : text.slice(colon + 1).trim();
    try {
      checkAddableHeaderName(name);
      checkHeaderValue(name, value);
    } catch (error) {
      log.warn({ channel: channel.name, variable }, `SIP header from ${variable} not added: ${(error as Error).message}`);
      continue;
    }
    headers.push({ name, value });
  }
  headers.push(...added.takeForRequest());
  if (headers.length > MAX_ADDED_SIP_HEADERS) {
    log.warn({ channel: channel.name, count: headers.length }, `only the first ${MAX_ADDED_SIP_HEADERS} added SIP headers are sent`);
    headers.length = MAX_ADDED_SIP_HEADERS;
  }
  return headers;
}

/**
 * What a transfer's dialplan tells the INVITE of a PJSIP channel it dials, as res_pjsip_refer's
 * outgoing supplement: Replaces from SIPREPLACESHDR (an `external_replaces` transfer) and
 * Referred-By from SIPREFERREDBYHDR, each unless the INVITE has that header already (PJSIP_HEADER,
 * SIPADDHEADER) or the value is unfit for a header.
 */
export function referHeaders(channel: Channel, present: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  for (const [variable, name] of [['SIPREPLACESHDR', 'Replaces'], ['SIPREFERREDBYHDR', 'Referred-By']] as const) {
    // Inherited from the transferee that dialed (`__NAME`), as the dialplan reads it by its bare name.
    const value = channel.getVariable(variable) ?? channel.getVariable(`__${variable}`) ?? channel.getVariable(`_${variable}`);
    if (!value || present.some(([other]) => canonicalName(other) === canonicalName(name))) continue;
    try {
      checkHeaderValue(name, value);
    } catch {
      continue;
    }
    headers.push([name, value]);
  }
  return headers;
}
