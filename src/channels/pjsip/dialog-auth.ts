// The endpoint's outbound_auth answers to the 401/407 challenges of the requests a call sends inside
// its dialog (re-INVITE, UPDATE, BYE, INFO, NOTIFY), as res_pjsip_session does for chan_pjsip: the
// challenged request goes again once, in the same dialog with the dialog's next CSeq, carrying the
// credentials (RequestChallenges: one Authorization or Proxy-Authorization per realm, a new nonce
// count per challenge). What the caller's handlers see is the final response of the last try; so
// a second challenge from a realm we answered (our credentials refused), a challenge none of the
// credentials fits, or an endpoint without outbound_auth reach them as the request's failure, and
// the call takes it as any other refusal (call-offers.ts: a re-INVITE refused leaves the session as
// it was; a BYE ends the dialog whatever comes back).
//
// Bounded as Asterisk bounds a session (its authentication_challenge_count against
// MAX_RX_CHALLENGES): the challenges answered in one call, its INVITE's included, stay under
// MAX_CHALLENGES, so a far end that keeps challenging (stale nonces, request after request) cannot
// keep us sending.
import type { DigestCredentials } from '../../sip/auth/digest-client.ts';
import { MAX_CHALLENGES, RequestChallenges } from '../../sip/auth/request-challenges.ts';
import type { Dialog } from '../../sip/dialog.ts';
import type { SipRequest, SipResponse } from '../../sip/message.ts';
import type { ClientHandlers, ClientTransaction, TransactionLayer } from '../../sip/transaction/index.ts';
import type { Destination } from '../../sip/transport.ts';
import type { CallEnvironment } from './call-types.ts';

/** Highest CSeq a dialog may use (RFC 3261 §8.1.1.5: below 2**31). */
const MAX_SEQ = 0x7fffffff;

/** What sending in a dialog needs of the transaction layer (call-dialog-requests.ts's InDialogSender). */
type InDialogSender = Pick<TransactionLayer, 'sendRequest' | 'sendAck'>;

export class DialogAuth {
  /** Challenges of this call's requests in its dialog answered so far. */
  #answered = 0;

  constructor(
    private readonly services: Pick<CallEnvironment, 'log'>,
    /** The endpoint's outbound_auth credentials; empty: a challenge is the request's failure. */
    private readonly credentials: readonly DigestCredentials[],
    /** Challenges to the call's INVITE answered already (they count against the same bound). */
    private readonly inviteChallenges: () => number,
  ) {}

  /**
   * A sender of requests in `dialog` whose challenges are answered (the ACK of a 2xx is the
   * caller's, from the CSeq of the response it gets, which is the last try's).
   */
  sender(layer: InDialogSender, dialog: Dialog): InDialogSender {
    return {
      sendRequest: (request, destination, handlers) => this.send(layer, dialog, request, destination, handlers ?? {}),
      sendAck: (ack, destination) => layer.sendAck(ack, destination),
    };
  }

  /** Sends `request` in `dialog`; a 401/407 to it is answered in a new transaction rather than reported. */
  send(layer: Pick<InDialogSender, 'sendRequest'>, dialog: Dialog, request: SipRequest, destination: Destination, handlers: ClientHandlers): ClientTransaction {
    let challenges: RequestChallenges | undefined;
    let last = request;
    const wrapped: ClientHandlers = {
      ...handlers,
      onResponse: (response, tx, source) => {
        if (tx.request === last && this.#challenged(response)) {
          challenges ??= new RequestChallenges(this.credentials);
          const retry = this.#retry(challenges, dialog, last, response);
          if (retry) {
            last = retry;
            try {
              layer.sendRequest(retry, destination, wrapped);
              return;
            } catch (error) {
              // The transport refused the retry at once: the challenge is the request's answer.
              this.services.log.debug({ err: error, method: retry.method }, 'authenticated retry not sent');
            }
          }
        }
        handlers.onResponse?.(response, tx, source);
      },
      // Only the last try ends the request for the caller: a challenged one is over but answered.
      onTerminated: (tx) => {
        if (tx.request === last) handlers.onTerminated?.(tx);
      },
    };
    return layer.sendRequest(request, destination, wrapped);
  }

  #challenged(response: SipResponse): boolean {
    return (response.status === 401 || response.status === 407) && this.credentials.length > 0;
  }

  /** The retry answering `response`, or undefined when the challenge is the request's final answer. */
  #retry(challenges: RequestChallenges, dialog: Dialog, sent: SipRequest, response: SipResponse): SipRequest | undefined {
    const method = sent.method;
    if (this.#answered + this.inviteChallenges() >= MAX_CHALLENGES - 1) {
      this.services.log.info({ method, status: response.status }, 'SIP: too many challenges in this call; the request fails');
      return undefined;
    }
    if (dialog.localSeq >= MAX_SEQ) return undefined;
    const outcome = challenges.retry(sent, response, dialog.localSeq + 1);
    if (!outcome.ok) {
      this.services.log.info({ method, status: response.status, reason: outcome.reason }, 'SIP: challenge to our request in the dialog not answered; the request fails');
      return undefined;
    }
    dialog.localSeq++;
    this.#answered++;
    return outcome.request;
  }
}
