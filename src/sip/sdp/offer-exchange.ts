/**
 * Which SDP offer/answer exchange of a session is still open (RFC 3264 §4): the far end's offer
 * that our answer has not gone out for yet, or our offer whose answer has not come. RFC 3311 §5.2
 * says how an UPDATE carrying another offer meanwhile is refused, and Asterisk's stack refuses it
 * so: 500 with a Retry-After while the far end's offer is unanswered (an UPDATE right after a
 * reliable 180 without SDP), 491 while ours waits (our INVITE's, before the callee answered it,
 * or the one in our 2xx awaiting its ACK). Taking it instead would answer two offers at once and
 * leave the first one answered by the wrong body.
 */

export type OpenExchange = 'none' | 'theirs' | 'ours';

export interface OfferRefusal {
  readonly status: number;
  readonly reason: string;
  readonly headers: Array<[string, string]>;
}

/** The longest Retry-After (s) of a refusal, as RFC 3311 §5.2 bounds it (chosen at random below it). */
const MAX_RETRY_AFTER_SECONDS = 10;

export class OfferExchange {
  #open: OpenExchange = 'none';

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
