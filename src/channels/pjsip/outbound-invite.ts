// The INVITE of an outbound call (UAC) as a request: how it is written, the transaction that carries
// it, the endpoint's outbound_auth answers to its 401/407 challenges, and the early dialogs (forks)
// its 1xx responses open. call.ts decides what the responses mean for the call and its channel.
import type { DigestCredentials } from '../../sip/auth/digest-client.ts';
import { RequestChallenges, type ChallengeOutcome } from '../../sip/auth/request-challenges.ts';
import { belongsToDialog } from '../../sip/dialog.ts';
import { SipRequest, type SipResponse } from '../../sip/message.ts';
import type { ClientHandlers, ClientTransaction, TransactionLayer } from '../../sip/transaction/index.ts';
import type { Destination } from '../../sip/transport.ts';
import type { Uri } from '../../sip/uri.ts';
import { nameAddr } from './addresses.ts';
import { ownedUtf8 } from '../../util/owned-buffer.ts';

/** To tags of an outbound call's early dialogs (forks) remembered, at most: a peer cannot grow the set. */
const MAX_EARLY_TAGS = 16;

/** What the first INVITE carries besides its SDP offer. */
export interface InviteContent {
  readonly target: Uri;
  /** The outbound proxy's Route, when set. */
  readonly route: string | undefined;
  readonly from: string;
  readonly callId: string;
  readonly contact: string;
  readonly allow: string;
  readonly userAgent: string;
  /** Caller identity headers (caller-identity.ts), then the dialplan's (PJSIP_HEADER) and the session's (100rel, timers). */
  readonly headers: Iterable<readonly [string, string]>;
  readonly offer: string;
}

export function inviteRequest(content: InviteContent): SipRequest {
  const { target, route } = content;
  const request = new SipRequest('INVITE', target, [
    ...(route ? [['Route', route] as [string, string]] : []),
    ['Max-Forwards', '70'],
    ['From', content.from],
    ['To', nameAddr(target)],
    ['Call-ID', content.callId],
    ['CSeq', '1 INVITE'],
    ['Contact', content.contact],
    ['Allow', content.allow],
    ['User-Agent', content.userAgent],
  ]);
  for (const [name, value] of content.headers) request.add(name, value);
  // Its own bytes, not a pool slice: the INVITE is kept as long as its call (owned-buffer.ts).
  request.body = ownedUtf8(content.offer);
  request.set('Content-Type', 'application/sdp');
  return request;
}

/** Headers of an INVITE not carried into the one following a redirect: the new transaction's and the old target's answers. */
const NOT_REDIRECTED = new Set(['via', 'v', 'cseq', 'authorization', 'proxy-authorization']);

export class OutboundInvite {
  #request: SipRequest | undefined;
  #destination: Destination;
  #transaction: ClientTransaction | undefined;
  /** The challenges answered so far, created at the first. */
  #challenges: RequestChallenges | undefined;
  /** The remote tags of the 1xx responses: requests in those early dialogs are the call's. */
  readonly #earlyTags = new Set<string>();

  constructor(
    private readonly layer: Pick<TransactionLayer, 'sendRequest'>,
    destination: Destination,
    private readonly credentials: readonly DigestCredentials[],
  ) {
    this.#destination = destination;
  }

  /** The INVITE last sent (the first, or one answering a challenge). */
  get request(): SipRequest | undefined {
    return this.#request;
  }

  get transaction(): ClientTransaction | undefined {
    return this.#transaction;
  }

  send(request: SipRequest, handlers: ClientHandlers): void {
    this.#request = request;
    this.#transaction = this.layer.sendRequest(request, this.#destination, handlers);
  }

  /**
   * A 3xx followed (redirect_method=uri_pjsip): the INVITE again to `target`, at `destination`, in a
   * new transaction, as pjsip restarts its session: the same Call-ID, From tag and To, the next CSeq,
   * without the old target's credentials (a challenge from the new one is answered afresh) and
   * without the early dialogs of the target that redirected.
   */
  redirect(target: Uri, destination: Destination, handlers: ClientHandlers): boolean {
    const sent = this.#request;
    const seq = (sent?.cseq()?.seq ?? 1) + 1;
    if (!sent || seq > 2 ** 31 - 1) return false;
    const request = new SipRequest('INVITE', target);
    for (const header of sent.headers) {
      if (NOT_REDIRECTED.has(header.name.toLowerCase())) continue;
      request.add(header.name, header.value);
      if (header.name.toLowerCase() === 'call-id' || header.name.toLowerCase() === 'i') request.add('CSeq', `${seq} INVITE`);
    }
    if (!request.has('cseq')) request.add('CSeq', `${seq} INVITE`);
    request.body = sent.body;
    this.#challenges = undefined;
    this.#earlyTags.clear();
    this.#destination = destination;
    this.send(request, handlers);
    return true;
  }

  /**
   * A 401/407 is answered with the credentials in a new INVITE (CSeq + 1, same Call-ID and tag),
   * sent with `handlers`; the outcome says why not when it cannot be (no credentials for the realm,
   * or the realm refused them once already).
   */
  answerChallenge(response: SipResponse, handlers: ClientHandlers): ChallengeOutcome | undefined {
    if (!this.#request) return undefined;
    this.#challenges ??= new RequestChallenges(this.credentials);
    const outcome = this.#challenges.retry(this.#request, response);
    if (outcome.ok) this.send(outcome.request, handlers);
    return outcome;
  }

  /** Challenges to the INVITE answered (the call's requests in its dialog count them against the same bound). */
  get challengesAnswered(): number {
    return this.#challenges?.retries ?? 0;
  }

  /** A 1xx with a To tag opened an early dialog (a fork). */
  provisional(response: SipResponse): void {
    const remoteTag = response.toTag();
    if (response.status > 100 && remoteTag !== undefined && this.#earlyTags.size < MAX_EARLY_TAGS) this.#earlyTags.add(remoteTag);
  }

  /** Whether a request is in one of the early dialogs (RFC 3261 §12.2.2: Call-ID, our tag in To, a 1xx's in From). */
  inEarlyDialog(request: SipRequest, callId: string): boolean {
    const localTag = this.#request?.fromTag();
    const remoteTag = request.fromTag();
    return localTag !== undefined && remoteTag !== undefined && this.#earlyTags.has(remoteTag) && belongsToDialog(request, callId, localTag, remoteTag);
  }
}
