// DTMF in SIP INFO bodies (dtmf_mode info/auto_info): application/dtmf-relay, as phones and
// Asterisk send it, and application/dtmf, read whatever the endpoint's mode.

import type { DtmfMode } from './config/types.ts';

/** Digit duration assumed for an INFO that gives none, ms. */
const DEFAULT_INFO_DURATION_MS = 100;
/** Longest digit duration taken from or put into an INFO, ms. */
const MAX_INFO_DURATION_MS = 10_000;

/** Signal values of application/dtmf-relay beyond the digits: 10 is `*`, 11 `#`, 12–15 A–D (as Asterisk reads them). */
const RELAY_EVENT_DIGITS = '0123456789*#ABCD';

/**
 * The digit (and duration) of an INFO body: application/dtmf-relay (`Signal=5`, `Duration=160`
 * lines) or application/dtmf (the digit alone). Undefined for any other content or no digit.
 */
export function dtmfFromInfo(contentType: string | undefined, body: Buffer): { digit: string; durationMs: number } | undefined {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (body.length === 0 || body.length > 1024) return undefined;
  const text = body.toString('latin1');
  if (type === 'application/dtmf') {
    const digit = /^\s*([0-9A-D*#])\s*$/i.exec(text);
    return digit ? { digit: digit[1].toUpperCase(), durationMs: DEFAULT_INFO_DURATION_MS } : undefined;
  }
  if (type !== 'application/dtmf-relay') return undefined;
  const signal = /^\s*Signal\s*=\s*([0-9A-D*#]|1[0-5])\s*$/im.exec(text);
  if (!signal) return undefined;
  const value = signal[1].toUpperCase();
  const digit = value.length === 2 ? RELAY_EVENT_DIGITS[Number(value)] : value;
  const duration = /^\s*Duration\s*=\s*(\d{1,6})\s*$/im.exec(text);
  const durationMs = duration ? Math.max(1, Math.min(MAX_INFO_DURATION_MS, Number(duration[1]))) : DEFAULT_INFO_DURATION_MS;
  return { digit, durationMs };
}

/** The application/dtmf-relay body of one digit sent in an INFO; the duration is bounded. */
export function dtmfRelayBody(digit: string, durationMs: number): string {
  const duration = Math.max(1, Math.min(MAX_INFO_DURATION_MS, Math.round(durationMs)));
  return `Signal=${digit.toUpperCase()}\r\nDuration=${duration}\r\n`;
}

/** Whether digits go out as SIP INFO: dtmf_mode info, or auto_info when the far end agreed to no telephone-event. */
export function dtmfByInfo(mode: DtmfMode, media: { readonly telephoneEventPt?: number } | undefined): boolean {
  return mode === 'info' || (mode === 'auto_info' && media?.telephoneEventPt === undefined);
}

/** Whether DTMF travels as tones in the audio: dtmf_mode inband, or auto when the far end agreed to no telephone-event. */
export function dtmfInband(mode: DtmfMode, media: { readonly telephoneEventPt?: number }): boolean {
  return mode === 'inband' || (mode === 'auto' && media.telephoneEventPt === undefined);
}
