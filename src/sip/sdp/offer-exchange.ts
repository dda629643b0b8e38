/**
 * Which SDP offer/answer exchange of a session is still open (RFC 3264 §4): the far end's offer
 * that our answer has not gone out for yet, or our offer whose answer has not come. RFC 3311 §5.2
 * says how an UPDATE carrying another offer meanwhile is refused, and Asterisk's stack refuses it
 * so: 500 with a Retry-After while the far end's offer is unanswered (an UPDATE right after a
 * reliable 180 without SDP), 491 while ours waits (our INVITE's, before the callee answered it,
 * or the one in our 2xx awaiting its ACK). Taking it instead would answer two offers at once and
 * leave the first one answered by the wrong body.
 *
 * Our own offers in the confirmed dialog (a hold re-INVITE, a session refresh re-INVITE) are open
 * exchanges too: a re-INVITE or UPDATE offer from the far end that crosses one is glare, refused
 * 491 (RFC 3261 §14.2, RFC 3311 §5.2), as pjsip's inv_session refuses it. When the far end refuses
 * ours 491, ours is sent again after the random wait of RFC 3261 §14.1 (glareRetryDelayMs), and
 * only one such retry waits at a time: a newer offer of ours replaces it.
 *
 * Any other final refusal of our offer is read by failedOffer() (RFC 3261 §14.1, §12.2.1.2,
 * RFC 5057 §5.1): 408 or 481 (or no response at all) means the dialog is gone and the session must
 * end; 422 with a Min-SE asks for a longer session interval (RFC 4028 §6); anything else leaves
 * the session as it was before the offer, as if it had never been made.
 */
import type { SipResponse } from '../message.ts';
import { retryIntervalAfter422 } from '../session-timer.ts';

export type OpenExchange = 'none' | 'theirs' | 'ours';

export interface OfferRefusal {
  readonly status: number;
  readonly reason: string;
  readonly headers: Array<[string, string]>;
}

/** The longest Retry-After (s) of a refusal, as RFC 3311 §5.2 bounds it (chosen at random below it). */
const MAX_RETRY_AFTER_SECONDS = 10;

/**
 * How long to wait before sending again an offer the far end refused 491 (RFC 3261 §14.1), in
 * steps of 10 ms: 2.1–4 s when we chose the Call-ID (we placed the call), else 0–2 s, so the two
 * ends of a glare do not retry at the same moment again.
 */
export function glareRetryDelayMs(ownsCallId: boolean, random: () => number = Math.random): number {
  const [from, steps] = ownsCallId ? [2100, 190] : [0, 200];
  return from + Math.min(steps, Math.floor(random() * (steps + 1))) * 10;
}

export class OfferExchange {
  #open: OpenExchange = 'none';
  #retry: NodeJS.Timeout | undefined;

  get open(): OpenExchange {
    return this.#open;
  }

  /** The far end offered; our answer is still to go out. */
  theirsReceived(): void {
    this.#open = 'theirs';
  }

  /** Our offer went out; its answer is still to come. */
  oursSent(): void {
    this.#open = 'ours';
  }

  /** The answer went out or came, or the exchange ended without one (an ACK without SDP). */
  closed(): void {
    this.#open = 'none';
  }

  /**
   * The far end refused our offer 491: `resend` runs after the RFC 3261 §14.1 wait unless another
   * offer of ours, or the end of the call (stop), comes first.
   */
  retryAfterGlare(ownsCallId: boolean, resend: () => void, random: () => number = Math.random): void {
    this.#open = 'none';
    this.cancelRetry();
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      resend();
    }, glareRetryDelayMs(ownsCallId, random));
    this.#retry.unref();
  }

  /** A retry waiting after a 491 is no longer wanted (a newer offer of ours, or the call ended). */
  cancelRetry(): void {
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  /** How to refuse another offer from the far end now, or undefined when it may be answered. */
  refusal(random: () => number = Math.random): OfferRefusal | undefined {
    if (this.#open === 'ours') return { status: 491, reason: 'Request Pending', headers: [] };
    if (this.#open === 'theirs') {
      const seconds = Math.min(MAX_RETRY_AFTER_SECONDS, Math.floor(random() * (MAX_RETRY_AFTER_SECONDS + 1)));
      return { status: 500, reason: 'Server Internal Error', headers: [['Retry-After', String(seconds)]] };
    }
    return undefined;
  }
}

/** What a final non-2xx response to our offer (a re-INVITE, or a session refresh) means for the session. */
export type OfferFailure =
  /** 491: glare, the offer goes again after the RFC 3261 §14.1 wait. */
  | { readonly kind: 'glare' }
  /** 408, 481 (RFC 3261 §12.2.1.2, RFC 5057 §5.1), or no response: the dialog is over; end it with BYE. */
  | { readonly kind: 'dialog-gone'; readonly status: number }
  /** 422 with a Min-SE larger than we asked (RFC 4028 §6): ask again with it. */
  | { readonly kind: 'interval-too-small'; readonly minSe: number }
  /** Any other refusal (488, 500, 403…, a 422 without a usable Min-SE): the session goes on as before the offer. */
  | { readonly kind: 'refused'; readonly status: number };

/**
 * Reads a final non-2xx `response` to our offer; undefined `response`: none came (Timer B/F, or the
 * transport failed), which RFC 3261 §14.1 treats as a 408. `askedInterval`: the Session-Expires we
 * asked for, when the request carried one.
 */
export function failedOffer(response: SipResponse | undefined, askedInterval?: number): OfferFailure {
  const status = response?.status ?? 408;
  if (status === 491) return { kind: 'glare' };
  if (status === 408 || status === 481) return { kind: 'dialog-gone', status };
  const minSe = status === 422 && response && askedInterval !== undefined ? retryIntervalAfter422(response, askedInterval) : undefined;
  if (minSe !== undefined) return { kind: 'interval-too-small', minSe };
  return { kind: 'refused', status };
}
