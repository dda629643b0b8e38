// Session timers (RFC 4028): a session is kept alive by a refresh (re-INVITE or UPDATE) from one
// side, the refresher, every half interval; without one, the session is over. Here: reading the
// Session-Expires and Min-SE headers (bounded), what a UAS answers to a request (422 when the interval
// is too small, 421 when the endpoint requires timers and the caller has none, else the interval and
// refresher it grants), what a UAC asks for and takes from a 2xx, and the two timers of one session.
import { hasOptionTag, TAG_TIMER } from './extensions.ts';
import type { SipMessage } from './message.ts';

/** Asterisk's `timers`: no, yes (when the peer asks), required (the peer must support them), always (even when it does not ask). */
export type TimerMode = 'no' | 'yes' | 'required' | 'always';
export type Refresher = 'uac' | 'uas';

export interface SessionTimerSettings {
  readonly mode: TimerMode;
  /** The smallest interval accepted, seconds (timers_min_se; RFC 4028 says no less than 90). */
  readonly minSe: number;
  /** The interval asked for, and the largest granted, seconds (timers_sess_expires). */
  readonly sessionExpires: number;
}

/** RFC 4028 §4: no interval below 90 s is ever accepted. */
export const RFC_MIN_SE = 90;
/** Longest interval read from a peer, seconds (a day); larger values are taken as this. */
const MAX_INTERVAL = 86_400;

/** `Session-Expires: 1800;refresher=uac` (compact `x`); undefined when absent or unreadable. */
export function readSessionExpires(message: SipMessage): { interval: number; refresher?: Refresher } | undefined {
  const value = message.get('session-expires');
  const match = value === undefined ? null : /^\s*(\d{1,10})\s*(;.*)?$/.exec(value);
  if (!match) return undefined;
  const refresher = /;\s*refresher\s*=\s*(uac|uas)\b/i.exec(match[2] ?? '')?.[1]?.toLowerCase() as Refresher | undefined;
  return { interval: Math.min(Number(match[1]), MAX_INTERVAL), ...(refresher ? { refresher } : {}) };
}

/** `Min-SE: 90`; undefined when absent or unreadable. */
export function readMinSe(message: SipMessage): number | undefined {
  const match = /^\s*(\d{1,10})\s*(;.*)?$/.exec(message.get('min-se') ?? '');
  return match ? Math.min(Number(match[1]), MAX_INTERVAL) : undefined;
}

/** The Min-SE this side insists on: the setting, never below RFC 4028's 90 s. */
export function effectiveMinSe(settings: SessionTimerSettings): number {
  return Math.max(RFC_MIN_SE, settings.minSe);
}

/** What the session timer of a session is: how long, and which side refreshes. */
export interface SessionTimerTerms {
  readonly interval: number;
  readonly refresher: Refresher;
}

export type UasTimerDecision =
  /** 422 Session Interval Too Small with `Min-SE`. */
  | { readonly kind: 'too-small'; readonly minSe: number }
  /** 421 Extension Required with `Require: timer`: timers=required and the caller does not support them. */
  | { readonly kind: 'extension-required' }
  /** No session timer for this session. */
  | { readonly kind: 'none' }
  /** A session timer: the 2xx carries Session-Expires (and Require: timer when the caller supports it). */
  | { readonly kind: 'timer'; readonly terms: SessionTimerTerms; readonly requireTimer: boolean };

/**
 * The UAS side of RFC 4028 §9 for an INVITE or UPDATE (the first one or a refresh): the caller's
 * Session-Expires below our Min-SE is refused with 422; otherwise the interval is theirs, lowered to
 * our sessionExpires but not below the Min-SE they announced; the refresher is theirs, else the
 * caller when it supports timers, else us.
 */
export function uasSessionTimer(request: SipMessage, settings: SessionTimerSettings): UasTimerDecision {
  if (settings.mode === 'no') return { kind: 'none' };
  const supports = hasOptionTag(request, 'supported', TAG_TIMER) || hasOptionTag(request, 'require', TAG_TIMER);
  if (settings.mode === 'required' && !supports) return { kind: 'extension-required' };
  const minSe = effectiveMinSe(settings);
  const asked = readSessionExpires(request);
  if (!asked) {
    // The caller did not ask: only `required` and `always` impose a timer, which we refresh ourselves.
    if (settings.mode === 'yes') return { kind: 'none' };
    return { kind: 'timer', terms: { interval: Math.max(minSe, settings.sessionExpires), refresher: 'uas' }, requireTimer: supports };
  }
  if (asked.interval < minSe) return { kind: 'too-small', minSe };
  const floor = Math.max(minSe, readMinSe(request) ?? 0);
  const interval = Math.max(floor, Math.min(asked.interval, Math.max(minSe, settings.sessionExpires)));
  // A caller that does not support timers (a proxy asked for them) cannot refresh: we do (§9).
  const refresher: Refresher = !supports ? 'uas' : (asked.refresher ?? 'uac');
  return { kind: 'timer', terms: { interval, refresher }, requireTimer: supports };
}

/** The header lines that grant `terms` in a 2xx (Session-Expires, and Require: timer when the caller supports timers). */
export function uasTimerHeaders(decision: Extract<UasTimerDecision, { kind: 'timer' }>): Array<[string, string]> {
  const headers: Array<[string, string]> = [['Session-Expires', `${decision.terms.interval};refresher=${decision.terms.refresher}`]];
  if (decision.requireTimer) headers.push(['Require', TAG_TIMER]);
  return headers;
}

/** The header lines of an INVITE or a refresh we send: Session-Expires and Min-SE (and Require: timer with `required`). */
export function uacTimerHeaders(settings: SessionTimerSettings, interval = settings.sessionExpires, refresher?: Refresher): Array<[string, string]> {
  if (settings.mode === 'no') return [];
  const minSe = effectiveMinSe(settings);
  const headers: Array<[string, string]> = [
    ['Session-Expires', `${Math.max(minSe, interval)}${refresher ? `;refresher=${refresher}` : ''}`],
    ['Min-SE', String(minSe)],
  ];
  if (settings.mode === 'required') headers.push(['Require', TAG_TIMER]);
  return headers;
}

/**
 * The UAC side of RFC 4028 §7.2: the session timer a 2xx to our INVITE (or refresh) grants. Without
 * Session-Expires in it there is none, unless timers=always (then we refresh, §7.2's last case).
 */
export function uacSessionTimer(response: SipMessage, settings: SessionTimerSettings, askedInterval = settings.sessionExpires): SessionTimerTerms | undefined {
  if (settings.mode === 'no') return undefined;
  const granted = readSessionExpires(response);
  if (!granted) return settings.mode === 'always' ? { interval: Math.max(effectiveMinSe(settings), askedInterval), refresher: 'uac' } : undefined;
  return { interval: Math.max(RFC_MIN_SE, granted.interval), refresher: granted.refresher ?? 'uac' };
}

/** The interval to ask again with after a 422: its Min-SE, when it is larger than what we asked and sensible. */
export function retryIntervalAfter422(response: SipMessage, asked: number): number | undefined {
  const minSe = readMinSe(response);
  return minSe !== undefined && minSe > asked && minSe <= MAX_INTERVAL ? minSe : undefined;
}

/**
 * The timers of one session: as refresher, `refresh` is called at half the interval; either way,
 * `expire` is called when the interval is nearly over without a refresh (RFC 4028 §10: the interval
 * less a third of it, at most 32 s), and the session must then end with BYE. Every completed refresh
 * (sent or received) calls start() again.
 */
export class SessionTimer {
  #refreshTimer: NodeJS.Timeout | undefined;
  #expiryTimer: NodeJS.Timeout | undefined;
  #terms: SessionTimerTerms | undefined;
  #refreshing = false;

  constructor(private readonly handlers: { refresh(): void; expire(): void }) {}

  get terms(): SessionTimerTerms | undefined {
    return this.#terms;
  }

  /** Whether we are the side that refreshes. */
  get refreshing(): boolean {
    return this.#refreshing;
  }

  /**
   * (Re)arms the timers for `terms`, negotiated in a transaction where we were `role` (the refresher
   * parameter names the UAC or UAS of the transaction that carried it, not of the first INVITE);
   * undefined stops them (no session timer any more).
   */
  start(terms: SessionTimerTerms | undefined, role: Refresher): void {
    this.stop();
    this.#terms = terms;
    this.#refreshing = terms !== undefined && terms.refresher === role;
    if (!terms) return;
    const intervalMs = terms.interval * 1000;
    if (this.#refreshing) this.#refreshTimer = setTimeout(() => this.handlers.refresh(), intervalMs / 2);
    const expiresMs = intervalMs - Math.min(32_000, intervalMs / 3);
    this.#expiryTimer = setTimeout(() => this.handlers.expire(), expiresMs);
    this.#refreshTimer?.unref();
    this.#expiryTimer.unref();
  }

  stop(): void {
    clearTimeout(this.#refreshTimer);
    clearTimeout(this.#expiryTimer);
    this.#refreshTimer = undefined;
    this.#expiryTimer = undefined;
  }
}
