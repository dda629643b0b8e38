// Redirecting information on the wire, as Asterisk 22's res_pjsip_diversion has it.
//
// In: an INVITE's first Diversion header (RFC 5806) sets the new channel's redirecting party: from
// is the Diversion's URI (its user up to a ';', its display name) with the `reason` parameter, to is
// the To header. Without Diversion, History-Info (RFC 7044): the entry with index=1 is the party
// redirected from, the last entry (index=1 aside) the one redirected to, whose URI's `cause`
// gives the reason. A 302 or 181 to our INVITE does the same for our outbound channel (302: from the
// Diversion, else our own endpoint's caller id, else To; to the Contact. 181: from To, to the
// Diversion). Each time the count becomes 1, as Asterisk's (it does not read `counter`).
// Out: an INVITE of a redirected channel (count above 0) carries `Diversion:` with the from party
// on our From's host and the reason (send_diversion, default yes); `send_history_info` adds the
// History-Info pair on the To URI. Every header is a peer's: bounded, parsed, never trusted.
import type { CallerId } from '../../core/channels/channel-types.ts';
import { redirectingReasonCode, type Redirecting, type RedirectingReason } from '../../core/channels/redirecting.ts';
import { splitList, type SipMessage, type SipResponse } from '../../sip/message.ts';
import { parseNameAddr, type NameAddr, type Uri } from '../../sip/uri.ts';
import { nameAddr } from './addresses.ts';

/** History-Info entries read from one message; the rest are ignored (a hostile list is long). */
export const MAX_HISTORY_ENTRIES = 32;
/** Longest name, number or reason text kept from a peer. */
const MAX_PART = 80;

/** The SIP spelling of each reason code (Diversion's `reason`) and the cause History-Info gives it, by code. */
const SIP_REASONS: ReadonlyArray<readonly [string, number]> = [
  ['unknown', 404], ['user-busy', 486], ['no-answer', 408], ['unavailable', 503], ['unconditional', 302], ['time-of-day', 404],
  ['do-not-disturb', 404], ['deflection', 480], ['follow-me', 404], ['out-of-service', 404], ['away', 404], ['cf_dte', 404], ['send_to_vm', 404],
];

/** A History-Info cause as a reason code (res_pjsip_diversion's cause_to_reason). */
function reasonOfCause(cause: number): number {
  switch (cause) {
    case 302: return 4;
    case 486: return 1;
    case 408: return 2;
    case 480:
    case 487: return 7;
    case 503: return 3;
    default: return 0;
  }
}

/** The redirecting party an INVITE brings, or undefined when it has neither Diversion nor History-Info. */
export function redirectingOfRequest(request: SipMessage, current: Redirecting): Redirecting | undefined {
  const diversion = firstDiversion(request);
  if (diversion) return redirected(current, diversion, request.to());
  const history = historyInfo(request);
  return history ? redirected(current, history.from, history.to) : undefined;
}

/**
 * The redirecting party a 302 or 181 to our INVITE leaves on our channel (other statuses:
 * undefined). `self`: the endpoint's own caller id (Asterisk's session id), which a 302 without
 * Diversion names as the party redirected from when it has a number.
 */
export function redirectingOfResponse(response: SipResponse, current: Redirecting, self: Readonly<CallerId> | undefined): Redirecting | undefined {
  if (response.status !== 302 && response.status !== 181) return undefined;
  let diversion = firstDiversion(response);
  if (!diversion) {
    const history = historyInfo(response);
    if (history) return redirected(current, history.from, history.to);
    if (!self?.number) diversion = response.to();
  }
  if (response.status === 181) return redirected(current, response.to(), diversion);
  const contacts = response.contacts();
  const contact = contacts === 'wildcard' ? undefined : contacts[0];
  return redirected(current, diversion ?? self, contact ?? response.from());
}

/** The Diversion / History-Info headers of an outbound INVITE for `redirecting`. */
export function redirectingHeaders(
  options: { readonly sendDiversion: boolean; readonly sendHistoryInfo: boolean },
  redirecting: Redirecting,
  fromHost: string,
  toUri: Uri,
): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  // A request names the party the call was redirected from.
  if (options.sendDiversion && redirecting.count > 0) pushDiversion(headers, redirecting.from, redirecting.reason, sipUriOn(fromHost, ''));
  if (options.sendHistoryInfo) pushHistoryInfo(headers, redirecting, toUri);
  return headers;
}

/**
 * The Diversion / History-Info headers of a 181 (or 3xx) to an INVITE we received, as
 * res_pjsip_diversion's outgoing response: the Diversion names where the call went (the `to`
 * party) on the URI of the INVITE's From; History-Info as in a request, on its To URI.
 */
export function redirectingResponseHeaders(
  options: { readonly sendDiversion: boolean; readonly sendHistoryInfo: boolean },
  redirecting: Redirecting,
  fromUri: Uri | undefined,
  toUri: Uri | undefined,
  host: string,
): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const base = fromUri?.kind === 'sip' ? { ...fromUri, headers: new Map<string, string>() } : sipUriOn(host, '');
  if (options.sendDiversion && redirecting.count > 0) pushDiversion(headers, redirecting.to, redirecting.reason, base);
  if (options.sendHistoryInfo && toUri) pushHistoryInfo(headers, redirecting, toUri);
  return headers;
}

/** Diversion naming `party` (a number is needed) with the reason, on `base` with the party's number as user. */
function pushDiversion(headers: Array<[string, string]>, party: Readonly<CallerId>, reasonOf: RedirectingReason, base: Uri & { kind: 'sip' }): void {
  if (!party.number) return;
  const reason = reasonText(reasonOf);
  // A token or a whole quoted string goes as it is; anything else is quoted (without its own quotes).
  const quoted = /^[A-Za-z0-9\-.!%*_+`'~]+$/.test(reason) || /^"[^"\\]*"$/.test(reason) ? reason : `"${reason.replace(/["\\]/g, '')}"`;
  headers.push(['Diversion', nameAddr({ ...base, user: clean(party.number) }, [['reason', quoted]], clean(party.name) || undefined)]);
}

/** The History-Info pair: the party redirected from (index 1; without one, the To URI itself) and, with a number, the one redirected to (index 1.1, with its cause). */
function pushHistoryInfo(headers: Array<[string, string]>, redirecting: Redirecting, toUri: Uri): void {
  if (toUri.kind !== 'sip') return;
  const from = redirecting.from;
  const first = from.number ? { ...toUri, user: clean(from.number) } : toUri;
  headers.push(['History-Info', nameAddr(first, [['index', '1']], from.number ? clean(from.name) || undefined : undefined)]);
  const to = redirecting.to;
  if (to.number) {
    const cause = SIP_REASONS[redirecting.reason.code]?.[1] ?? 404;
    const params = new Map(toUri.params);
    params.set('cause', String(cause));
    headers.push(['History-Info', nameAddr({ ...toUri, user: clean(to.number), params }, [['index', '1.1']], clean(to.name) || undefined)]);
  }
}

/** The reason as Diversion writes it: the text a peer or the dialplan gave, else the code's SIP name. */
function reasonText(reason: RedirectingReason): string {
  return reason.text || (SIP_REASONS[reason.code]?.[0] ?? 'unknown');
}

function sipUriOn(host: string, user: string): Uri & { kind: 'sip' } {
  return { kind: 'sip', scheme: 'sip', user, host, params: new Map(), headers: new Map() };
}

/** The first entry of the first Diversion header, when it parses. */
function firstDiversion(message: SipMessage): NameAddr | undefined {
  const line = message.get('diversion');
  if (line === undefined) return undefined;
  const first = splitList(line.slice(0, 8192))[0];
  return (first && parseNameAddr(first)) || undefined;
}

/**
 * The History-Info entries that name the redirect (get_history_info_header): the entry of
 * index 1 (the party redirected from) and the last other one (redirected to); undefined when no
 * entry parses.
 */
function historyInfo(message: SipMessage): { from: NameAddr | undefined; to: NameAddr } | undefined {
  let from: NameAddr | undefined;
  let to: NameAddr | undefined;
  let seen = 0;
  for (const line of message.getAll('history-info')) {
    for (const entry of splitList(line.slice(0, 8192))) {
      if (++seen > MAX_HISTORY_ENTRIES) break;
      const parsed = parseNameAddr(entry);
      if (!parsed) continue;
      // As Asterisk: the first index=1 entry is the original; every other one may be the last hop.
      if (parsed.params.get('index') === '1') from ??= parsed;
      else to = parsed;
    }
  }
  return to ? { from, to } : undefined;
}

/**
 * set_redirecting: the parties a redirect names replace what the channel had where they give a
 * name or number; the reason is the new one (unknown when not given), the orig reason cleared, the
 * count 1. `fromInfo` a header (with its `reason`) or our own caller id.
 */
function redirected(current: Redirecting, fromInfo: NameAddr | Readonly<CallerId> | undefined, toInfo: NameAddr | undefined): Redirecting {
  let reason: RedirectingReason = { code: 0, text: '' };
  let from = current.from;
  if (fromInfo && 'uri' in fromInfo) {
    from = merged(from, idOf(fromInfo));
    reason = reasonOf(fromInfo, toInfo);
  } else if (fromInfo) {
    from = merged(from, { name: clean(fromInfo.name), number: clean(fromInfo.number) });
  }
  const to = toInfo ? merged(current.to, idOf(toInfo)) : current.to;
  return { orig: current.orig, from, to, count: 1, reason, origReason: { code: 0, text: '' } };
}

function merged(party: Readonly<CallerId>, update: CallerId): Readonly<CallerId> {
  if (!update.name && !update.number) return party;
  return { name: update.name || party.name, number: update.number || party.number };
}

/** A header's party: the URI's user (a tel: URI's number) up to a ';', and its display name. */
function idOf(address: NameAddr): CallerId {
  const uri = address.uri;
  const user = uri.kind === 'sip' ? (uri.user ?? '') : uri.scheme === 'tel' ? uri.opaque : '';
  const semi = user.indexOf(';');
  return { name: clean(address.displayName ?? ''), number: clean(semi < 0 ? user : user.slice(0, semi)) };
}

/** The `reason` parameter of a Diversion (quoted or not), else the cause of the redirected-to URI. */
function reasonOf(fromInfo: NameAddr, toInfo: NameAddr | undefined): RedirectingReason {
  const raw = fromInfo.params.get('reason');
  if (raw === undefined || raw === null) {
    const cause = toInfo?.uri.kind === 'sip' ? toInfo.uri.params.get('cause') : undefined;
    if (cause === undefined || cause === null) return { code: 0, text: '' };
    return { code: reasonOfCause(Number.parseInt(cause, 10)), text: '' };
  }
  const unquoted = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1) : raw;
  const code = redirectingReasonCode(unquoted);
  // A reason Asterisk does not know is kept as it came (quotes included), under code unknown.
  return code >= 0 ? { code, text: '' } : { code: 0, text: clean(raw) };
}

/** A name, number or reason as it may go into a channel or a header: no control characters, bounded. */
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x1f\x7f]/g, '').slice(0, MAX_PART);
}
