// The SIP extensions of one call, as its endpoint's `100rel` and `timers` say: reliable provisional
// responses both ways (RFC 3262: send 1xx reliably when the caller requires it, PRACK a trunk's
// reliable 1xx) and the session timer (RFC 4028: what our INVITE asks for and our 2xx grants, the
// refresh when we are the refresher, the end of a session nobody refreshed). The call (call.ts)
// asks this object for header lines and hands it PRACKs and refreshes; sending a refresh and ending
// the call stay the call's, through `handlers`.
import { Dialog } from '../../sip/dialog.ts';
import { TAG_100REL, unsupportedRequirements } from '../../sip/extensions.ts';
import type { SipRequest, SipResponse } from '../../sip/message.ts';
import { ReliableProvisionalReceiver, ReliableProvisionalSender, uasReliability } from '../../sip/reliable-provisional.ts';
import {
  SessionTimer,
  uacSessionTimer,
  uacTimerHeaders,
  uasSessionTimer,
  uasTimerHeaders,
  type Refresher,
  type SessionTimerTerms,
  type UasTimerDecision,
} from '../../sip/session-timer.ts';
import type { ServerTransaction, TransactionLayer } from '../../sip/transaction/index.ts';
import type { Destination } from '../../sip/transport.ts';
import { supportedValue, understoodTags, withSupportedTag, type SessionExtensionOptions } from './session-extensions.ts';
import { RtpTimeout, type RtpActivity, type RtpSilence } from './rtp-timeout.ts';
import { ownedUtf8 } from '../../util/owned-buffer.ts';

type Headers = Array<[string, string]>;

/** How the extensions are off when an endpoint says nothing (calls built without an endpoint, tests). */
export const NO_SESSION_EXTENSIONS: SessionExtensionOptions = { reliableProvisionals: 'no', sessionTimers: { mode: 'no', minSe: 90, sessionExpires: 1800 } };

export class CallSession {
  #sender: ReliableProvisionalSender | undefined;
  readonly #receiver = new ReliableProvisionalReceiver();
  readonly #timer: SessionTimer;
  /** What our 2xx to the first INVITE grants (UAS). */
  #granted: UasTimerDecision = { kind: 'none' };
  /** The terms in force: what the next refresh asks for. */
  #terms: SessionTimerTerms | undefined;
  /** The early dialog of a reliable 1xx we PRACKed (UAC), and the INVITE it belongs to (a challenged INVITE is sent again). */
  #early: Dialog | undefined;
  #earlyInvite: SipRequest | undefined;
  /** The far end's Allow lists UPDATE: our refreshes are UPDATEs without SDP, as pjsip sends them, not re-INVITEs. */
  #peerAllowsUpdate = false;
  /** The Min-SE of the far end's last 422 to a refresh of ours (0: none): our refreshes ask for no less. */
  #peerMinSe = 0;

  readonly #options: SessionExtensionOptions;
  /** The endpoint's rtp_timeout: like the session timer, it runs from the answer until the call ends. */
  readonly #rtpTimeout: RtpTimeout | undefined;

  /**
   * `endpoint`: the endpoint's `100rel` and `timers` options; both off when it has none (a call made without an endpoint);
   * its `rtp_timeout` and `rtp_timeout_hold` apply when `handlers.rtp` reads the call's media.
   */
  constructor(
    endpoint: Partial<SessionExtensionOptions> & { readonly rtpTimeout?: number; readonly rtpTimeoutHold?: number },
    handlers: { refresh(): void; expire(): void; rtp?: RtpActivity & { silent(seconds: number, when: RtpSilence): void } },
  ) {
    const { reliableProvisionals, sessionTimers } = endpoint;
    this.#options = reliableProvisionals && sessionTimers ? { reliableProvisionals, sessionTimers } : NO_SESSION_EXTENSIONS;
    this.#timer = new SessionTimer(handlers);
    const rtp = handlers.rtp;
    const active = endpoint.rtpTimeout ?? 0;
    const hold = endpoint.rtpTimeoutHold ?? 0;
    if (rtp && (active > 0 || hold > 0)) this.#rtpTimeout = new RtpTimeout(active, rtp, (seconds, when) => rtp.silent(seconds, when), hold);
  }

  /** `Supported` for every INVITE and response of the call. */
  supported(): Headers {
    const value = supportedValue(this.#options);
    return value === undefined ? [] : [['Supported', value]];
  }

  // ---- as UAS (the call came in) ----------------------------------------------------------------

  /**
   * Reads the INVITE: whether its 1xx go reliably, and what the 2xx will grant (refusals were made
   * before). `events`: every reliable 1xx was acknowledged (a waiting 2xx may go), or one never was.
   */
  receiveInvite(invite: SipRequest, tx: ServerTransaction, t1: number, events: { acknowledged(): void; notAcknowledged(): void }): void {
    if (uasReliability(invite, this.#options.reliableProvisionals).kind === 'reliable') {
      const sender = new ReliableProvisionalSender(tx, { t1 });
      sender.onAcknowledged = () => events.acknowledged();
      sender.onTimeout = () => events.notAcknowledged();
      this.#sender = sender;
    }
    this.#granted = uasSessionTimer(invite, this.#options.sessionTimers);
    this.#noteAllow(invite);
  }

  /** Whether this INVITE's 1xx go reliably (100rel agreed). */
  get reliableProvisionals(): boolean {
    return this.#sender !== undefined;
  }

  /** Whether a reliable 1xx waits for its PRACK (the 2xx must wait too). */
  get provisionalPending(): boolean {
    return this.#sender?.pending === true;
  }

  /**
   * A response to the INVITE with `headers` and our `sdp`: with Supported (and the granted session
   * timer on a 2xx), naming `alsoSupported` too when given; a provisional one reliably when agreed.
   */
  respond(tx: ServerTransaction, status: number, headers: Headers, sdp: string | undefined, alsoSupported?: string): void {
    const response = tx.createResponse(status);
    const own = status >= 200 ? this.answerHeaders() : this.supported();
    for (const [name, value] of [...headers, ...(alsoSupported ? withSupportedTag(own, alsoSupported) : own)]) response.add(name, value);
    if (sdp) {
      // Its own bytes, not a pool slice: the transaction keeps the answer until it ends (owned-buffer.ts).
      response.body = ownedUtf8(sdp);
      response.set('Content-Type', 'application/sdp');
    }
    if (status >= 200) tx.respond(response);
    else if (this.#sender) this.#sender.send(response);
    else tx.respond(response);
  }

  /** A PRACK: 200 when it acknowledges our reliable 1xx, 481 otherwise (RFC 3262 §3). */
  prack(request: SipRequest, tx: ServerTransaction): void {
    if (this.#sender?.acknowledge(request)) tx.reply(200, undefined, this.supported());
    else tx.reply(481, 'Call/Transaction Does Not Exist');
  }

  /** Header lines of the 2xx to the first INVITE: Supported and the granted session timer. */
  answerHeaders(): Headers {
    return [...this.supported(), ...(this.#granted.kind === 'timer' ? uasTimerHeaders(this.#granted) : [])];
  }

  /** The 2xx to the first INVITE went: the session timer runs from now. */
  answered(): void {
    this.#sender?.close();
    this.#rtpTimeout?.start();
    this.#start(this.#granted.kind === 'timer' ? this.#granted.terms : undefined, 'uas');
  }

  /**
   * A re-INVITE or UPDATE from the far end (a refresh, or a new offer): the header lines of its 2xx,
   * or a refusal (420 for an extension it requires that we lack, 422 with Min-SE). Call refreshed()
   * once the 2xx is sent.
   */
  refreshRequest(request: SipRequest): { ok: true; headers: Headers; refreshed: () => void } | { ok: false; status: 420 | 422; headers: Headers } {
    const unsupported = unsupportedRequirements(request, understoodTags(this.#options));
    if (unsupported.length > 0) return { ok: false, status: 420, headers: [['Unsupported', unsupported.join(', ')]] };
    const decision = uasSessionTimer(request, this.#options.sessionTimers);
    if (request.method === 'INVITE') this.#noteAllow(request);
    if (decision.kind === 'too-small') return { ok: false, status: 422, headers: [['Min-SE', String(decision.minSe)]] };
    const headers = [...this.supported(), ...(decision.kind === 'timer' ? uasTimerHeaders(decision) : [])];
    // A peer whose re-INVITE says nothing of timers keeps the timer it has (a hold from a phone that
    // never asked for one turns off nothing); one that asks gets its new terms.
    const terms = decision.kind === 'timer' ? decision.terms : this.#terms;
    return { ok: true, headers, refreshed: () => this.#start(terms, decision.kind === 'timer' ? 'uas' : this.#role()) };
  }

  // ---- as UAC (we placed the call) --------------------------------------------------------------

  /** Header lines of our INVITE: Supported, Require: 100rel (100rel=required), Session-Expires and Min-SE. */
  inviteHeaders(): Headers {
    const headers = this.supported();
    if (this.#options.reliableProvisionals === 'required') headers.push(['Require', TAG_100REL]);
    headers.push(...uacTimerHeaders(this.#options.sessionTimers));
    return headers;
  }

  /**
   * PRACKs a provisional response to our `invite` when it is a new reliable one and 100rel is on, in
   * the early dialog it makes (kept: the 2xx from the same far end confirms it, and its CSeq counted
   * the PRACK). A PRACK the transport refuses at once is left to the far end's retransmissions.
   */
  prack1xx(layer: TransactionLayer, invite: SipRequest, response: SipResponse, hopOf: (dialog: Dialog) => Destination | undefined, userAgent: string): void {
    const rack = this.#options.reliableProvisionals === 'no' ? undefined : this.#receiver.rackFor(response);
    if (!rack) return;
    if (this.#earlyInvite !== invite || this.#early?.remoteTag !== response.toTag()) {
      this.#early = Dialog.asUac(invite, response);
      this.#earlyInvite = invite;
    }
    const dialog = this.#early;
    if (!dialog) return;
    dialog.updateFromResponse(response);
    const hop = hopOf(dialog);
    if (!hop) return;
    try {
      layer.sendRequest(dialog.createRequest('PRACK', { headers: [['RAck', rack], ['User-Agent', userAgent]] }), hop, {});
    } catch {
      // Unacknowledged, the far end gives the INVITE up after 64*T1 (RFC 3262 §3), as for a lost PRACK.
    }
  }

  /** The early dialog a 2xx confirms (the one of a PRACKed 1xx from the same far end), updated by it. */
  earlyDialog(response: SipResponse): Dialog | undefined {
    const early = this.#early?.remoteTag === response.toTag() ? this.#early : undefined;
    early?.updateFromResponse(response);
    return early;
  }

  /** The 2xx to our INVITE (or to our refresh): the session timer it grants runs from now. */
  acceptedByFarEnd(response: SipResponse): void {
    if (response.cseq()?.method === 'INVITE') this.#noteAllow(response);
    this.#rtpTimeout?.start();
    this.#start(uacSessionTimer(response, this.#options.sessionTimers, this.#terms?.interval), 'uac');
  }

  /** Whether our refresh is an UPDATE without SDP (the far end allows UPDATE), which offers nothing. */
  get refreshesByUpdate(): boolean {
    return this.#peerAllowsUpdate;
  }

  /**
   * The far end refused a refresh 422 with this Min-SE (RFC 4028 §6): later refreshes ask for at
   * least that interval, and say so in their own Min-SE, as pjsip raises its setting.
   */
  raiseMinSe(minSe: number): void {
    this.#peerMinSe = Math.max(this.#peerMinSe, minSe);
  }

  /**
   * Sends the refresh (we are the refresher, RFC 4028 §7.4), asking to stay refresher: an UPDATE
   * without a body when the far end allows UPDATE, else a re-INVITE with our current SDP, unchanged
   * (its 2xx is ACKed, each retransmission too, and its answer goes to `answered`; an UPDATE's 2xx
   * goes there without a body). The 2xx restarts
   * the timer. A final refusal, or none at all (`response` undefined: no answer, or the transport
   * failed), goes to `failed` with the interval it asked for; the call decides what it means
   * (call-offers.ts). Returns the method sent, if it went.
   */
  sendRefresh(
    layer: Pick<TransactionLayer, 'sendRequest' | 'sendAck'>,
    dialog: Dialog,
    hop: Destination,
    headers: Headers,
    sdp: string,
    outcome: { answered(body: Buffer | undefined): void; failed(response: SipResponse | undefined, askedInterval: number): void },
  ): 'UPDATE' | 'INVITE' | undefined {
    const interval = Math.max(this.#terms?.interval ?? this.#options.sessionTimers.sessionExpires, this.#peerMinSe);
    const settings = { ...this.#options.sessionTimers, minSe: Math.max(this.#options.sessionTimers.minSe, this.#peerMinSe) };
    const byUpdate = this.#peerAllowsUpdate;
    const request = dialog.createRequest(byUpdate ? 'UPDATE' : 'INVITE', {
      headers: [...headers, ...this.supported(), ...uacTimerHeaders(settings, interval, 'uac')],
      ...(byUpdate ? {} : { body: sdp, contentType: 'application/sdp' }),
    });
    let finished = false;
    const noResponse = (): void => {
      if (finished) return;
      finished = true;
      outcome.failed(undefined, interval);
    };
    try {
      layer.sendRequest(request, hop, {
        onResponse: (response, tx) => {
          if (response.status < 200) return;
          if (response.status >= 300) {
            if (finished) return;
            finished = true;
            return outcome.failed(response, interval);
          }
          if (!byUpdate) void layer.sendAck(dialog.createAck(tx.request.cseq()?.seq ?? dialog.localSeq), hop).catch(() => undefined);
          if (finished) return;
          finished = true;
          outcome.answered(byUpdate ? undefined : response.body);
          this.acceptedByFarEnd(response);
        },
        onTimeout: noResponse,
        onTransportError: noResponse,
      });
    } catch {
      // The transport refused it at once: the expiry timer ends the session if nothing else refreshes it.
      return undefined;
    }
    return byUpdate ? 'UPDATE' : 'INVITE';
  }

  close(): void {
    this.#sender?.close();
    this.#timer.stop();
    this.#rtpTimeout?.stop();
  }

  #noteAllow(message: SipRequest | SipResponse): void {
    if (message.has('allow')) this.#peerAllowsUpdate = message.values('allow').some((method) => method.trim().toUpperCase() === 'UPDATE');
  }

  #start(terms: SessionTimerTerms | undefined, role: Refresher): void {
    this.#terms = terms;
    this.#timer.start(terms, role);
  }

  /** The role under which the terms in force make us refresher or not (unchanged by a request that says nothing). */
  #role(): Refresher {
    const terms = this.#terms;
    if (!terms) return 'uas';
    return this.#timer.refreshing === (terms.refresher === 'uas') ? 'uas' : 'uac';
  }
}
