// The offers a SIP call makes in its confirmed dialog: a hold passthrough re-INVITE and the session
// refresh (an UPDATE without SDP, or a re-INVITE with our SDP, sent by call-session.ts). Kept apart
// from call.ts, which answers the far end's offers: here each offer of ours is marked open in the
// call's OfferExchange while it waits for its answer, so a crossing offer from the far end is
// refused 491, and a 491 to ours (the far end saw the glare first) sends it again after the
// RFC 3261 §14.1 wait instead of giving up.
import type { Dialog } from '../../sip/dialog.ts';
import type { MediaDirection } from '../../sip/sdp/index.ts';
import type { CallMedia } from './call-media.ts';
import type { CallSession } from './call-session.ts';
import type { CallDialogRequests } from './call-dialog-requests.ts';
import type { CallEnvironment } from './call-types.ts';

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
  /** The session is over on our side (a refresh timed out or was refused 408/481). */
  expired(): void;
}

export class CallOffers {
  constructor(
    private readonly services: Pick<CallEnvironment, 'layer' | 'log' | 'userAgent'>,
    private readonly call: OfferingCall,
    private readonly terms: OfferTerms,
    private readonly sdp: CallMedia,
    private readonly session: CallSession,
    private readonly requests: CallDialogRequests,
  ) {}

  /** A re-INVITE offering `direction` (hold passthrough: sendonly, then sendrecv); the answer is taken. */
  reinvite(direction: MediaDirection): boolean {
    if (!this.call.stream || this.call.ended) return false;
    const sdp = this.sdp.offer(true, { direction });
    const exchange = this.sdp.exchange;
    const sent = this.requests.send('INVITE', [...this.terms.dialogHeaders(), ...this.session.supported()], sdp, 'application/sdp', (response) => {
      if (response.status === 491 && !this.call.ended) return exchange.retryAfterGlare(this.terms.ownsCallId, () => this.reinvite(direction));
      exchange.closed();
      if (response.status < 300 && !this.call.ended) this.sdp.takeAnswer(response.body, direction);
    }, () => exchange.closed());
    if (sent) this.#opened();
    return sent;
  }

  /** We are the refresher (RFC 4028 §7.4): an UPDATE, or a re-INVITE with our current SDP, keeps the session alive. */
  refresh(): void {
    const dialog = this.call.dialog;
    const hop = dialog && this.requests.hop(dialog);
    const sdp = this.sdp.localSdp;
    if (!dialog || !hop || dialog.state !== 'confirmed' || this.call.ended || !sdp) return;
    const exchange = this.sdp.exchange;
    let offered = false;
    const headers: Array<[string, string]> = [...this.terms.dialogHeaders(), ['User-Agent', this.services.userAgent]];
    const sent = this.session.sendRefresh(this.services.layer, dialog, hop, headers, sdp, {
      answered: (body) => {
        if (offered) exchange.closed();
        if (!this.call.ended) this.sdp.takeAnswer(body);
      },
      failed: () => this.terms.expired(),
      refused: (status) => this.#refreshRefused(status, offered),
    });
    // Only the re-INVITE carries an offer; an UPDATE without SDP leaves the exchange as it is.
    offered = sent === 'INVITE';
    if (offered) this.#opened();
  }

  #refreshRefused(status: number, offered: boolean): void {
    if (status === 491 && !this.call.ended) return this.sdp.exchange.retryAfterGlare(this.terms.ownsCallId, () => this.refresh());
    if (offered) this.sdp.exchange.closed();
    this.services.log.debug({ status }, 'SIP: session refresh refused');
  }

  /** A newer offer of ours replaces any retry still waiting after a 491. */
  #opened(): void {
    this.sdp.exchange.cancelRetry();
    this.sdp.exchange.oursSent();
  }

  /** The call ended: a retry still waiting is not sent. */
  close(): void {
    this.sdp.exchange.cancelRetry();
  }
}
