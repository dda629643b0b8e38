// A channel's redirecting party (Asterisk's ast_party_redirecting): who the call was first meant
// for (orig), the last party that forwarded it (from), where it was forwarded to (to), how many
// times (count) and why (reason, orig-reason). Technologies fill it from their signalling (SIP
// Diversion / History-Info), Dial() carries it to its callees and a forward, REDIRECTING() reads
// and writes it, and ARI shows `from`'s number as the snapshot's caller_rdnis. Patchbay keeps no
// presentation, so the priv-* parties Asterisk keeps are always empty and every id is allowed.
import type { CallerId } from './channel-types.ts';

/**
 * A redirecting reason: one of Asterisk's codes (REDIRECTING_REASON_NAMES' index), and the text
 * a peer or the dialplan gave when it named none of them (then the code is 0, unknown).
 */
export interface RedirectingReason {
  readonly code: number;
  readonly text: string;
}

export interface Redirecting {
  readonly orig: Readonly<CallerId>;
  readonly from: Readonly<CallerId>;
  readonly to: Readonly<CallerId>;
  readonly count: number;
  readonly reason: RedirectingReason;
  readonly origReason: RedirectingReason;
}

const NOBODY: Readonly<CallerId> = Object.freeze({ name: '', number: '' });
const UNKNOWN_REASON: RedirectingReason = Object.freeze({ code: 0, text: '' });

/** A channel never redirected: shared, never changed in place (a new value replaces it). */
export const NOT_REDIRECTED: Redirecting = Object.freeze({ orig: NOBODY, from: NOBODY, to: NOBODY, count: 0, reason: UNKNOWN_REASON, origReason: UNKNOWN_REASON });

/** The name REDIRECTING(reason) reads for each code (Asterisk's ast_redirecting_reason_name), by code. */
const REDIRECTING_REASON_NAMES: readonly string[] = [
  'unknown', 'cfb', 'cfnr', 'unavailable', 'cfu', 'time_of_day', 'dnd', 'deflection', 'follow_me', 'out_of_order', 'away', 'cf_dte', 'send_to_vm',
];

/** Other names a reason is known by (the SIP Diversion reasons of RFC 5806), also accepted when parsing. */
const REASON_ALIASES: ReadonlyMap<string, number> = new Map([
  ['user-busy', 1], ['no-answer', 2], ['unconditional', 4], ['time-of-day', 5], ['do-not-disturb', 6], ['follow-me', 8], ['out-of-service', 9],
]);

/** The code of a reason name (case-insensitive, either spelling), or -1 when it names none. */
export function redirectingReasonCode(name: string): number {
  const key = name.toLowerCase();
  const at = REDIRECTING_REASON_NAMES.indexOf(key);
  return at >= 0 ? at : (REASON_ALIASES.get(key) ?? -1);
}

/**
 * A reason from a name as the dialplan writes it (func_callerid): a number is the code itself, a
 * known name its code, anything else is kept as text under code 0.
 */
export function parseRedirectingReason(value: string): RedirectingReason {
  const trimmed = value.trim();
  if (/^\d{1,9}$/.test(trimmed)) return { code: Number(trimmed), text: '' };
  const code = redirectingReasonCode(trimmed);
  return code >= 0 ? { code, text: '' } : { code: 0, text: trimmed };
}

/** What REDIRECTING(reason) reads: the text given, else the code's name ('not-known' for a code without one, as Asterisk). */
export function redirectingReasonName(reason: RedirectingReason): string {
  return reason.text || (REDIRECTING_REASON_NAMES[reason.code] ?? 'not-known');
}
