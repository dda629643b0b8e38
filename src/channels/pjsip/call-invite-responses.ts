// The callee's responses to an outbound SIP call's INVITE, read as chan_pjsip reads them: a 1xx is
// PRACKed when reliable and drives the channel (180 ringing, 183 or a 180 with SDP progress, 181 the
// redirecting party), every 2xx is ACKed and the first one answers the call, a 401/407 is answered
// with the endpoint's outbound_auth, a 3xx is followed or left to Dial() as the channel's call
// forward (redirect-targets.ts), anything else fails the call. Kept apart from call.ts, which places,
// answers and ends the INVITE session: this file only takes what the far end answered to our
// INVITE; whether the call was answered and how it ends stay the call's (InviteTerms).
import type { Channel } from '../../core/channels/channel.ts';
import { Dialog } from '../../sip/dialog.ts';
import { hasOptionTag } from '../../sip/extensions.ts';
import type { SipRequest, SipResponse } from '../../sip/message.ts';
import { sessionDescriptionOf } from '../../sip/multipart.ts';
import { rewriteContactToSource } from '../../sip/nat.ts';
import type { ClientHandlers } from '../../sip/transaction/index.ts';
import type { Source } from '../../sip/transport.ts';
import type { SipUri } from '../../sip/uri.ts';
import type { CallDialogRequests } from './call-dialog-requests.ts';
import type { CallMedia } from './call-media.ts';
import type { CallSession } from './call-session.ts';
import type { CallEnvironment, CallMediaOptions, OutboundSide } from './call-types.ts';
import { causeForStatus, causeFromReason } from './causes.ts';
import { redirectingOfResponse } from './diversion.ts';
import { type SessionHeaders, sessionHeadersOf } from './headers.ts';
import type { OutboundInvite } from './outbound-invite.ts';
import { InviteRedirects } from './redirect-targets.ts';

/** What the responses read and write of their call (SipCall is one): the dialog a 2xx confirms. */
export interface InvitingCall {
  dialog: Dialog | undefined;
  readonly channel: Channel;
  readonly ended: boolean;
}

/** What the call tells the responses once: its answered state is its own (an inbound call answers too). */
export interface InviteTerms {
  isAnswered(): boolean;
  /** The first 2xx came: the call is answered. */
  answered(): void;
  /** The INVITE failed (refused, no response, a transport error): the channel ends with `cause`, unless answered. */
  failed(cause: number, techCause?: number): void;
  /** A 1xx or the first 2xx may assert who answers (connected-line.ts). */
  identity?(response: SipResponse): void;
}

/** The parts of the call the responses move: its SDP, its session extensions, its requests in the dialog. */
export interface InviteParts {
  readonly sdp: CallMedia;
  readonly session: CallSession;
  readonly requests: CallDialogRequests;
}

export class InviteResponses {
  /** Once a 3xx came: the targets of the INVITE (redirect-targets.ts). */
  #redirects: InviteRedirects | undefined;
  /** The headers of the 200 OK that answered our INVITE (PJSIP_RESPONSE_HEADER). */
  #headers: SessionHeaders | undefined;

  constructor(
    private readonly services: Pick<CallEnvironment, 'layer' | 'log' | 'userAgent'>,
    private readonly call: InvitingCall,
    private readonly terms: InviteTerms,
    private readonly parts: InviteParts,
    private readonly side: OutboundSide,
    /** Our INVITE, its transaction, challenges and early dialogs (outbound-invite.ts). */
    private readonly invite: OutboundInvite,
    private readonly options: Pick<CallMediaOptions, 'rewriteContact' | 'redirectMethod' | 'ignore183WithoutSdp'>,
    private readonly endpointId: string,
  ) {}

  /** The headers of the 200 OK that answered our INVITE, once one did. */
  get headers(): SessionHeaders | undefined {
    return this.#headers;
  }

  /** Sends our INVITE; its responses come here. */
  send(request: SipRequest): void {
    this.invite.send(request, this.#handlers);
  }

  readonly #handlers: ClientHandlers = {
    onResponse: (response, _tx, source) => this.#response(response, source),
    onTimeout: () => this.terms.failed(18),
    onTransportError: () => this.terms.failed(27),
  };

  #response(response: SipResponse, source: Source | undefined): void {
    const status = response.status;
    const { channel } = this.call;
    const { sdp, session, requests } = this.parts;
    // Behind NAT the Contact of the callee's 1xx/2xx (our remote target) is where they came from.
    if (this.options.rewriteContact && source && status < 300) rewriteContactToSource(response, source);
    if (status < 200) {
      this.invite.provisional(response);
      if (status > 100) this.terms.identity?.(response);
      // A reliable 1xx (Require: 100rel, RSeq) is PRACKed in its early dialog (RFC 3262 §4).
      const invite = this.invite.request;
      if (invite) session.prack1xx(this.services.layer, invite, response, (early) => requests.hop(early), this.services.userAgent);
      // A 181 says who the call was forwarded from and to (its Diversion): the channel's party, and
      // Dial() passes it on to its caller (res_pjsip_diversion queues the redirecting update).
      if (status === 181) this.#noteRedirecting(response, true);
      // As pjsip, the SDP of any 1xx of an early dialog is an answer (early-answers.ts decides
      // whether a later one replaces the one in force).
      const withSdp = carriesSdp(response);
      if (withSdp && response.toTag() !== undefined) sdp.takeInviteAnswer(response, isReliable(response));
      // As chan_pjsip: a 180 with SDP is progress (early media) and the channel Ringing, one without
      // is ringing; a 183 is progress with or without SDP (without, none with the endpoint's
      // ignore_183_without_sdp); 181 and 182 are no indication.
      const early = (status === 183 && (withSdp || this.options.ignore183WithoutSdp !== true)) || (status === 180 && withSdp);
      if (status === 180 && early && channel.state !== 'Up') channel.setState('Ringing');
      if (early) channel.remoteIndication('progress');
      else if (status === 180) channel.remoteIndication('ringing');
      return;
    }
    if (status < 300) {
      // Every 2xx (also a retransmitted one) is ACKed; the first one answers the call. The early
      // dialog of a PRACKed 1xx from the same far end goes on (its CSeq counted the PRACK).
      const invite = this.invite.request;
      const dialog = this.call.dialog ?? session.earlyDialog(response) ?? (invite ? Dialog.asUac(invite, response) : undefined);
      if (!dialog) return;
      if (!this.call.dialog) {
        this.call.dialog = dialog;
        dialog.state = 'confirmed';
      }
      const seq = response.cseq()?.seq ?? 1;
      const ack = dialog.createAck(seq);
      const hop = requests.hop(dialog);
      if (hop) void this.services.layer.sendAck(ack, hop).catch(() => undefined);
      if (this.terms.isAnswered()) return;
      // Who answered, before the answer itself (res_pjsip_caller_id's response supplement runs first).
      this.terms.identity?.(response);
      this.terms.answered();
      // As res_pjsip_header_funcs: the headers of a 200 (not another 2xx) are kept.
      if (status === 200) this.#headers = sessionHeadersOf(response.headers);
      sdp.takeInviteAnswer(response, false);
      // A 2xx ends our INVITE's offer/answer whether or not it carried the answer.
      sdp.exchange.closed();
      if (this.call.ended || channel.hangingUp) {
        requests.bye(16);
        return;
      }
      session.acceptedByFarEnd(response);
      channel.remoteIndication('answer');
      return;
    }
    if ((status === 401 || status === 407) && this.#retryWithCredentials(response)) return;
    if (status < 600 && this.#redirected(response)) return;
    // chan_pjsip: the refusal's status is the channel's tech_cause, its cause the status mapped (or the Reason's).
    this.terms.failed(causeFromReason(response.get('reason'), causeForStatus(status)), status);
  }

  /**
   * A 401/407 to our INVITE is answered with the endpoint's outbound_auth in a new INVITE; false when
   * it cannot be, and the call fails with the challenge's status.
   */
  #retryWithCredentials(response: SipResponse): boolean {
    if (this.terms.isAnswered() || this.call.ended || this.call.channel.hangingUp) return false;
    const outcome = this.invite.answerChallenge(response, this.#handlers);
    if (outcome && !outcome.ok) this.services.log.info({ channel: this.call.channel.name, status: response.status, reason: outcome.reason }, 'SIP: INVITE challenge not answered');
    return outcome?.ok ?? false;
  }

  /**
   * A 3xx to our INVITE (true when followed on this call, redirect_method=uri_pjsip), or a 4xx/5xx
   * from a target a redirect named (the next one is tried, as pjsip recurses): see redirect-targets.ts.
   * Not followed, a 3xx leaves the channel its call forward, which Dial() follows.
   */
  #redirected(response: SipResponse): boolean {
    if (this.terms.isAnswered() || this.call.ended || this.call.channel.hangingUp) return false;
    const { target, redirectDestination } = this.side;
    const resend = (to: SipUri): boolean => {
      const destination = redirectDestination?.(to);
      return destination !== undefined && this.invite.redirect(to, destination, this.#handlers);
    };
    if (response.status >= 400) return this.#redirects?.retry(resend) ?? false;
    this.#redirects ??= new InviteRedirects(target, this.options.redirectMethod ?? 'user', this.endpointId);
    this.#noteRedirecting(response);
    const outcome = this.#redirects.redirected(response, resend);
    if (outcome !== true) this.call.channel.callForward = outcome;
    return outcome === true;
  }

  /** A 302 or 181 says who the call was forwarded from and to: the channel's redirecting party (diversion.ts); `told`: listeners hear of it. */
  #noteRedirecting(response: SipResponse, told = false): void {
    const redirecting = redirectingOfResponse(response, this.call.channel.redirecting, this.side.identity.self);
    if (redirecting && told) this.call.channel.remoteRedirecting(redirecting);
    else if (redirecting) this.call.channel.redirecting = redirecting;
  }
}

/** Whether a response carries an SDP (its body, or a multipart body's part), as pjsip finds one. */
function carriesSdp(response: SipResponse): boolean {
  return sessionDescriptionOf(response).length > 0 && /^\s*(?:application\/sdp|multipart\/)/i.test(response.contentType() ?? '');
}

/** A 1xx sent reliably (RFC 3262): Require: 100rel with an RSeq, as pjsip_100rel_is_reliable reads it. */
function isReliable(response: SipResponse): boolean {
  return hasOptionTag(response, 'require', '100rel') && response.get('rseq') !== undefined;
}
