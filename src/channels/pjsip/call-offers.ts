// The offers a SIP call makes in its confirmed dialog: a hold passthrough re-INVITE and the session
// refresh (an UPDATE without SDP, or a re-INVITE with our SDP, sent by call-session.ts). Kept apart
// from the far end's offers (far-end-requests.ts answers them): here each offer of ours is marked
// open in the call's OfferExchange while it waits for its answer, so a crossing offer from the far
// end is refused 491, and a refusal of ours is taken as RFC 3261 §14.1 and pjsip's inv_session take
// it (offer-exchange.ts failedOffer):
// - 491 (the far end saw the glare first): sent again after the §14.1 wait instead of giving up;
// - 408 or 481, or no response at all (§12.2.1.2, RFC 5057 §5.1): the dialog is gone, the call ends
//   with BYE and the cause Asterisk gives (18 for 408 and silence, 127 for 481);
// - 422 to a refresh (RFC 4028 §6): asked again once with the far end's Min-SE;
// - 503 to a refresh: asked again 10 s later, 502: the call ends (pjsip's refresh error handling);
// - anything else (488, 500, 403 …): the offer is void and the session goes on as before it: our SDP
//   is again the one in force (call-media.ts), the stream was never moved, and a hold that was
//   refused is no hold (hold.ts).
// No offer of ours goes while another is open (RFC 3261 §14.1): a hold re-INVITE or a refresh due
// then waits OFFER_WAIT_MS and tries again.
import type { Dialog } from '../../sip/dialog.ts';
import type { SipResponse } from '../../sip/message.ts';
import type { MediaDirection } from '../../sip/sdp/index.ts';
import { failedOffer, type OfferFailure } from '../../sip/sdp/offer-exchange.ts';
import type { CallMedia } from './call-media.ts';
import type { CallSession } from './call-session.ts';
import type { CallDialogRequests, InDialogSender } from './call-dialog-requests.ts';
import type { CallEnvironment } from './call-types.ts';
import { causeForStatus } from './causes.ts';

/** What the offers read of their call at each send (SipCall is one). */
export interface OfferingCall {
  readonly dialog: Dialog | undefined;
  readonly ended: boolean;
  /** The call's RTP stream, once bound (no re-INVITE before). */
  readonly stream: object | undefined;
}

/** What the call tells the offers once. */
export interface OfferTerms {
  /** We placed the call, so chose its Call-ID: the longer glare wait is ours (RFC 3261 §14.1). */
  readonly ownsCallId: boolean;
  /** Contact and Allow for a request of ours in the dialog. */
  dialogHeaders(): Array<[string, string]>;
  /** The dialog is over on our side (an offer answered 408/481, or never answered): BYE, and the channel ends with `cause`. */
  ended(cause: number, why: string): void;
}

/** How long a refresh refused 503 waits before it goes again (pjsip's PJSIP_SESS_TIMER_RETRY_DELAY). */
export const REFRESH_RETRY_AFTER_503_MS = 10_000;
/** How long an offer of ours due while another offer is open waits before it tries again (pjsip's 1 s for a refresh). */
export const OFFER_WAIT_MS = 1_000;

export class CallOffers {
  /** A refresh waiting (after a 503, or for an open exchange to close). */
  #refreshLater: NodeJS.Timeout | undefined;
  /** A refresh went again after a 422: a second 422 in a row is not followed (pjsip's loop guard). */
  #intervalRaised = false;
  /** A re-INVITE of ours waiting for the offer open now to close; a newer one replaces it. */
  #reinviteLater: NodeJS.Timeout | undefined;

  constructor(
    private readonly services: Pick<CallEnvironment, 'log' | 'userAgent'> & { readonly layer: InDialogSender },
    private readonly call: OfferingCall,
    private readonly terms: OfferTerms,
    private readonly sdp: CallMedia,
    private readonly session: CallSession,
    private readonly requests: CallDialogRequests,
  ) {}

  /**
   * A re-INVITE offering `direction` (hold passthrough: sendonly, then sendrecv); the answer is taken.
   * `refused`: the far end refused it (or answered it unusably) and the session goes on as before.
   * `method` UPDATE (PJSIP_SEND_SESSION_REFRESH(update)) carries the same offer in an UPDATE (RFC 3311).
   */
  reinvite(direction: MediaDirection, refused: () => void = () => undefined, method: 'INVITE' | 'UPDATE' = 'INVITE'): boolean {
    if (!this.call.stream || this.call.ended || this.call.dialog?.state !== 'confirmed') return false;
    this.#cancelReinviteLater();
    const exchange = this.sdp.exchange;
    // Never two offers at once (RFC 3261 §14.1): while one is open (our refresh, the far end's offer
    // not answered yet) this one waits, as Asterisk delays a re-INVITE until the transaction ends.
    if (exchange.open !== 'none') {
      this.#reinviteLater = setTimeout(() => {
        this.#reinviteLater = undefined;
        if (!this.reinvite(direction, refused, method)) refused();
      }, OFFER_WAIT_MS);
      this.#reinviteLater.unref();
      return true;
    }
    const sdp = this.sdp.offer(true, { direction });
    const again = (): void => void this.reinvite(direction, refused, method);
    const onFinal = (response: SipResponse): void => {
      if (response.status >= 300) return this.#failed(failedOffer(response), 're-INVITE', again, refused);
      exchange.closed();
      if (this.call.ended || this.sdp.takeAnswer(response.body, direction)) return;
      // A 2xx without a usable answer moves nothing: as a refusal, the offer is void.
      this.services.log.info({ status: response.status }, 'SIP: the 2xx to our re-INVITE carried no usable answer; media unchanged');
      this.sdp.withdrawOffer();
      refused();
    };
    const sent = this.requests.send(method, [...this.terms.dialogHeaders(), ...this.session.supported()], sdp, 'application/sdp', onFinal, () =>
      this.#failed(failedOffer(undefined), 're-INVITE', again, refused),
    );
    if (sent) this.#opened();
    else this.sdp.withdrawOffer();
    return sent;
  }

  /** We are the refresher (RFC 4028 §7.4): an UPDATE, or a re-INVITE with our current SDP, keeps the session alive. */
  refresh(): void {
    this.#cancelRefreshLater();
    const dialog = this.call.dialog;
    const hop = dialog && this.requests.hop(dialog);
    const sdp = this.sdp.localSdp;
    if (!dialog || !hop || dialog.state !== 'confirmed' || this.call.ended || !sdp) return;
    const exchange = this.sdp.exchange;
    // A re-INVITE must not cross another offer of the session (RFC 3261 §14.1): as pjsip, try again shortly.
    if (!this.session.refreshesByUpdate && exchange.open !== 'none') return this.#refreshAfter(OFFER_WAIT_MS);
    let offered = false;
    const headers: Array<[string, string]> = [...this.terms.dialogHeaders(), ['User-Agent', this.services.userAgent]];
    // Through the endpoint's outbound_auth: a challenged refresh goes again with credentials (dialog-auth.ts).
    const sent = this.session.sendRefresh(this.requests.sender(dialog), dialog, hop, headers, sdp, {
      answered: (body) => {
        this.#intervalRaised = false;
        if (offered) exchange.closed();
        if (body && !this.call.ended) this.sdp.takeAnswer(body);
      },
      failed: (response, askedInterval) => this.#refreshFailed(response, askedInterval, offered),
    });
    // Only the re-INVITE carries an offer; an UPDATE without SDP leaves the exchange as it is.
    offered = sent === 'INVITE';
    if (offered) this.#opened();
  }

  #refreshFailed(response: SipResponse | undefined, askedInterval: number, offered: boolean): void {
    const failure = failedOffer(response, this.#intervalRaised ? undefined : askedInterval);
    const status = response?.status;
    if (failure.kind === 'interval-too-small' && !this.call.ended) {
      if (offered) this.sdp.exchange.closed();
      this.#intervalRaised = true;
      this.session.raiseMinSe(failure.minSe);
      return this.refresh();
    }
    this.#intervalRaised = false;
    if (failure.kind === 'refused' && status === 503 && !this.call.ended) {
      if (offered) this.sdp.exchange.closed();
      return this.#refreshAfter(REFRESH_RETRY_AFTER_503_MS);
    }
    if (failure.kind === 'refused' && status === 502) return this.#failed({ kind: 'dialog-gone', status }, 'session refresh', () => this.refresh(), () => undefined, offered);
    this.#failed(failure, 'session refresh', () => this.refresh(), () => undefined, offered);
  }

  /**
   * What a refusal of our offer (`what`) does (see the file's head); `resend` sends it again after
   * glare, `refused` is told when the session goes on as before. `offered`: it carried an offer (an
   * UPDATE refresh without SDP did not).
   */
  #failed(failure: OfferFailure, what: string, resend: () => void, refused: () => void, offered = true): void {
    const exchange = this.sdp.exchange;
    if (this.call.ended) return offered ? exchange.closed() : undefined;
    if (failure.kind === 'glare') return exchange.retryAfterGlare(this.terms.ownsCallId, resend);
    if (offered) {
      exchange.closed();
      this.sdp.withdrawOffer();
    }
    if (failure.kind === 'dialog-gone') {
      const why = failure.status === 408 ? `our ${what} got 408 or no response` : `our ${what} got ${failure.status}`;
      return this.terms.ended(causeForStatus(failure.status), why);
    }
    this.services.log.info({ status: failure.kind === 'refused' ? failure.status : undefined }, `SIP: our ${what} was refused; the session goes on as before it`);
    refused();
  }

  #refreshAfter(ms: number): void {
    this.#cancelRefreshLater();
    this.#refreshLater = setTimeout(() => {
      this.#refreshLater = undefined;
      this.refresh();
    }, ms);
    this.#refreshLater.unref();
  }

  #cancelRefreshLater(): void {
    if (this.#refreshLater) clearTimeout(this.#refreshLater);
    this.#refreshLater = undefined;
  }

  /** A newer offer of ours replaces any retry still waiting after a 491. */
  #opened(): void {
    this.sdp.exchange.cancelRetry();
    this.sdp.exchange.oursSent();
  }

  #cancelReinviteLater(): void {
    if (this.#reinviteLater) clearTimeout(this.#reinviteLater);
    this.#reinviteLater = undefined;
  }

  /** The call ended: a retry, refresh or re-INVITE still waiting is not sent. */
  close(): void {
    this.sdp.exchange.cancelRetry();
    this.#cancelRefreshLater();
    this.#cancelReinviteLater();
  }
}
