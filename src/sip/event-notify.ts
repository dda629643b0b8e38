/**
 * The notifier's side of SIP events (RFC 6665) as pure decisions: which package a SUBSCRIBE asks
 * for (Event), whether the subscriber accepts the package's body type (Accept), what duration is
 * granted (Expires against a minimum and a maximum), and the Subscription-State a NOTIFY carries.
 * No dialogs, timers or transport: the layers above keep those.
 */
import type { SipRequest } from './message.ts';

/** Longest Event header value read; a longer one is refused as malformed. */
const MAX_EVENT_LENGTH = 256;
/** RFC 6665 §8.2.1 event-type token: `token-nodot` separated by dots. */
const EVENT_TYPE = /^[A-Za-z0-9!%*_+`'~-]+(\.[A-Za-z0-9!%*_+`'~-]+)*$/;

/** A SUBSCRIBE's Event header: the package and the `id` parameter that tells subscriptions of one dialog apart. */
export interface EventHeader {
  /** The package name, lower case (`dialog`, `presence`, `message-summary`). */
  readonly package: string;
  readonly id?: string;
}

/** The Event header of a request; undefined when it is missing or malformed (RFC 6665 §7.2.1: 400). */
export function parseEventHeader(request: SipRequest): EventHeader | undefined {
  const value = request.get('event');
  if (value === undefined || value.length > MAX_EVENT_LENGTH) return undefined;
  const [type, ...params] = value.split(';').map((part) => part.trim());
  if (!type || !EVENT_TYPE.test(type)) return undefined;
  let id: string | undefined;
  for (const param of params) {
    const [name, raw] = param.split('=', 2).map((part) => part.trim());
    if (name?.toLowerCase() === 'id' && raw) id = raw.replace(/^"|"$/g, '');
  }
  return { package: type.toLowerCase(), ...(id !== undefined ? { id } : {}) };
}

/**
 * Whether the subscriber accepts `type` (RFC 6665 §7.2.1: without Accept, the package's default
 * type is meant). Media ranges `*\/*` and `application/*` match; parameters (`;q=`) are ignored.
 */
export function acceptsType(request: SipRequest, type: string): boolean {
  const values = request.values('accept');
  if (values.length === 0) return true;
  const [major] = type.split('/');
  const ranges = values
    .flatMap((value) => value.split(','))
    .map((range) => range.split(';')[0].trim().toLowerCase())
    .filter((range) => range !== '');
  // An empty Accept says nothing is accepted (RFC 3261 §20.1); a list with only blanks likewise.
  if (ranges.length === 0) return false;
  return ranges.some((range) => range === type || range === '*/*' || range === `${major}/*`);
}

/** What the SUBSCRIBE's Expires asks: a number of seconds, `default` when absent, `invalid` when unreadable. */
export function requestedExpiry(request: SipRequest): number | 'default' | 'invalid' {
  if (!request.has('expires')) return 'default';
  // The parser refuses a message whose Expires is not 1–10 digits; a request built otherwise is checked here.
  return request.expires() ?? 'invalid';
}

/** `Subscription-State: active;expires=N`, or `terminated;reason=…` (RFC 6665 §8.2.3; reasons of §6.2). */
export function subscriptionState(state: { readonly kind: 'active'; readonly expires: number } | { readonly kind: 'terminated'; readonly reason: 'timeout' | 'noresource' | 'deactivated' | 'rejected' | 'giveup' }): string {
  return state.kind === 'active' ? `active;expires=${Math.max(0, Math.floor(state.expires))}` : `terminated;reason=${state.reason}`;
}
