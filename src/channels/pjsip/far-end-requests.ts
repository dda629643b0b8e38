// The requests the far end sends inside a SIP call's dialog, answered: BYE ends the call; a
// re-INVITE or UPDATE is an offer answered (hold and unhold among them), an offer-less re-INVITE
// gets our offer and its ACK the answer, an UPDATE without SDP refreshes the session only; INFO may
// carry a digit; PRACK acknowledges our reliable 1xx; OPTIONS is answered; REFER goes to the
// transfer code (refer.ts); anything else is refused. Kept apart from call.ts, which places,
// answers and ends the INVITE session, and from call-offers.ts, which makes our own offers: this
// file answers the far end's. The caller checked that the request belongs to the call's dialog.
import type { Channel } from '../../core/channels/channel.ts';
import type { Dialog } from '../../sip/dialog.ts';
import type { SipRequest } from '../../sip/message.ts';
import { sessionDescriptionOf } from '../../sip/multipart.ts';
import { rewriteContactToSource } from '../../sip/nat.ts';
import { refuseNonSdpBody, refuseUnserved } from '../../sip/request-checks.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import type { CallMedia } from './call-media.ts';
import type { CallSession } from './call-session.ts';
import { ALLOW, type CallEnvironment } from './call-types.ts';
import { causeFromReason } from './causes.ts';
import { dtmfFromInfo } from './dtmf-info.ts';
import type { CallHold } from './hold.ts';

/** What the answers read of their call at each request (SipCall is one). */
export interface RequestedCall {
  readonly dialog: Dialog | undefined;
  readonly channel: Channel;
  readonly ended: boolean;
  /** REFER in the dialog (refer.ts); unset: 405. */
  readonly onRefer: ((request: SipRequest, tx: ServerTransaction) => void) | undefined;
}

/** What the call tells the answers once. */
export interface FarEndTerms {
  /** rewrite_contact: a target refresh from behind NAT keeps the dialog at the address it came from. */
  readonly rewriteContact: boolean;
  /** Our Contact, for the 2xx to a re-INVITE. */
  contact(): string;
  /** The far end hung up (BYE, its Reason's cause; undefined without one): a BYE of ours held back is not sent, the call is over and the channel ends. */
  hungUp(cause: number | undefined): void;
}

/** The parts of the call the answers move: its SDP, its session extensions, its hold. */
export interface FarEndParts {
  readonly sdp: CallMedia;
  readonly session: CallSession;
  readonly hold: CallHold;
}

export class FarEndRequests {
  constructor(
    private readonly services: Pick<CallEnvironment, 'log'>,
    private readonly call: RequestedCall,
    private readonly terms: FarEndTerms,
    private readonly parts: FarEndParts,
  ) {}

  /**
   * A request inside the call's dialog (BYE, re-INVITE, INFO, ...), answered on `tx`. One the
   * endpoint's ACL refused (`aclRefused`) is answered all the same, as Asterisk's dialog layer does,
   * but with the NAT handling of Asterisk's artificial endpoint: its Contact is not rewritten.
   */
  answer(request: SipRequest, tx: ServerTransaction, aclRefused = false): void {
    // A target refresh from behind NAT (re-INVITE, UPDATE) keeps the dialog at the source address.
    if (this.terms.rewriteContact && !aclRefused) rewriteContactToSource(request, tx.source);
    const dialog = this.call.dialog;
    if (dialog && dialog.receiveRequest(request) === 'lower') {
      tx.reply(500, 'Server Internal Error');
      return;
    }
    // Ended, the call only lingers for the BYE it holds back: the far end's BYE is all it takes.
    if (this.call.ended && request.method !== 'BYE') return void tx.reply(481, 'Call/Transaction Does Not Exist');
    switch (request.method) {
      case 'BYE':
        tx.reply(200);
        return this.terms.hungUp(causeFromReason(request.get('reason'), 0) || undefined);
      case 'INVITE':
      case 'UPDATE': {
        const refusal = refuseNonSdpBody(request);
        if (refusal) return void tx.reply(refusal.status, refusal.reason, refusal.headers);
        return this.#offered(request, tx);
      }
      case 'INFO': {
        // Any INFO is accepted (keep-alives, media control); DTMF ones raise the digit.
        tx.reply(200);
        const dtmf = dtmfFromInfo(request.get('content-type'), request.body);
        const channel = this.call.channel;
        if (dtmf && !this.call.ended && !channel.hangingUp) channel.receiveDigit(dtmf.digit, dtmf.durationMs);
        return;
      }
      case 'PRACK':
        return this.parts.session.prack(request, tx);
      case 'OPTIONS':
        tx.reply(200, undefined, [['Allow', ALLOW], ...this.parts.session.supported()]);
        return;
      case 'REFER':
        if (this.call.onRefer) return this.call.onRefer(request, tx);
        tx.reply(405, undefined, [['Allow', ALLOW]]);
        return;
      default: {
        // SUBSCRIBE 489 (no event package, in a call's dialog either), unknown methods 501, others 405.
        const refusal = refuseUnserved(request, ALLOW);
        tx.reply(refusal.status, refusal.reason, refusal.headers);
      }
    }
  }

  /**
   * A re-INVITE: a session refresh, hold, a new address, or no offer at all (RFC 3261 §14.2): then
   * our 2xx carries a fresh offer with a new o= version, and the ACK brings the answer. An UPDATE
   * without SDP refreshes the session only; its offer (RFC 3311 §5.2) is answered as a re-INVITE's.
   */
  #offered(request: SipRequest, tx: ServerTransaction): void {
    const { sdp, session, hold } = this.parts;
    const refresh = session.refreshRequest(request);
    const offer = sessionDescriptionOf(request);
    if (!refresh.ok) return void tx.reply(refresh.status, undefined, refresh.headers);
    // A re-INVITE, or an UPDATE's offer, crossing an open exchange (ours: glare) is refused.
    const busy = request.method === 'INVITE' || offer.length > 0 ? sdp.exchange.refusal() : undefined;
    if (busy) return void tx.reply(busy.status, busy.reason, busy.headers);
    if (request.method === 'UPDATE' && offer.length === 0) {
      tx.reply(200, undefined, [['Allow', ALLOW], ...refresh.headers]);
      return refresh.refreshed();
    }
    if (offer.length > 0) {
      const answer = sdp.answer(offer, true);
      if (!answer.ok) return void tx.reply(answer.status);
    } else {
      sdp.offer(true);
      sdp.exchange.oursSent();
      tx.onAck = (ack) => {
        sdp.exchange.closed();
        if (sdp.takeAnswer(sessionDescriptionOf(ack))) return;
        this.services.log.info({ channel: this.call.channel.name }, 'SIP: the ACK did not answer our offer; media unchanged');
        sdp.withdrawOffer();
      };
    }
    tx.reply(200, undefined, [['Contact', this.terms.contact()], ['Allow', ALLOW], ...refresh.headers], sdp.localSdp, 'application/sdp');
    refresh.refreshed();
    // Hold or unhold from the far end (the media of its offer, after our answer went out).
    const media = sdp.negotiated;
    if (offer.length > 0 && media) hold.farEndOffered(media);
    // Its new media (an address, a codec) may change where direct media sends the other leg's far end.
    if (offer.length > 0) this.call.channel.mediaPathChanged();
  }
}
