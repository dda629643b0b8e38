// ARI refer: a REFER sent out of any call (RFC 3515), and the NOTIFYs of its implicit subscription.
import { InvalidError, NotFoundError, UnavailableError } from '../../core/errors.ts';
import type { MessageDestination, ReferRequest } from '../../core/messages.ts';
import { newCallId, newTag, SipRequest } from '../../sip/message.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import { parseUri, type SipUri } from '../../sip/uri.ts';
import type { PjsipEndpoint } from './config/index.ts';
import type { Dialer } from './dialer.ts';
import { ReferSubscriptions } from './refer.ts';
import { formatContactUri, isSipsUri, nameAddr, plainSipUri } from './addresses.ts';
import { localContact, MAX_MESSAGE_VARIABLES, USER_AGENT, type PjsipRuntime } from './runtime.ts';

/** Headers an ARI refer's variables may not set: Asterisk's list, plus the REFER's own Refer-To and Event. */
const REFER_BLOCKED_HEADERS = new Set(['to', 'from', 'via', 'route', 'contact', 'call-id', 'cseq', 'allow', 'content-length', 'content-type', 'request-uri', 'refer-to', 'event']);
/** Longest display name put into Refer-To. */
const MAX_DISPLAY_NAME = 128;

export class ReferSender {
  readonly #runtime: PjsipRuntime;
  readonly #dialer: Dialer;
  /** REFERs we sent, whose NOTIFYs are answered 200. */
  readonly #subscriptions = new ReferSubscriptions();

  constructor(runtime: PjsipRuntime, dialer: Dialer) {
    this.#runtime = runtime;
    this.#dialer = dialer;
  }

  /** Answers 200 to a NOTIFY of a REFER we sent (its implicit subscription); false when it is not one. */
  answerNotify(request: SipRequest, tx: ServerTransaction): boolean {
    const callId = request.callId() ?? '';
    if (request.method !== 'NOTIFY' || !this.#subscriptions.notify(callId, request.get('subscription-state'))) return false;
    this.#runtime.log?.debug({ callId, sipfrag: request.body.toString('utf8').split('\r\n')[0]?.slice(0, 100) }, 'REFER progress');
    tx.reply(200);
    return true;
  }

  /**
   * ARI refer: a REFER out of any call to `pjsip:<endpoint>` (its contact) or
   * `pjsip:<endpoint>/<uri>`, asking it to call `refer_to`: a SIP URI as given, or an endpoint of
   * this server — with `to_self`, this server's URI for that endpoint (the far end calls us),
   * otherwise the endpoint's contact. NotFoundError: no such endpoint (404); InvalidError: a
   * refer_to that is neither (400). Anything later (no contact, a refusal) is a log line, since
   * ARI has answered 202 by then, as in Asterisk.
   */
  send(refer: ReferRequest, destination: MessageDestination): void {
    const runtime = this.#runtime;
    const layer = runtime.layer;
    if (!layer) throw new UnavailableError('SIP is not running');
    if (!runtime.config.endpoints.has(destination.resource)) throw new NotFoundError('Endpoint not found');
    const referToUri = this.#referTarget(refer.referTo, refer.toSelf);
    let resolved: { endpoint: PjsipEndpoint; uri: SipUri };
    try {
      resolved = this.#dialer.resolve(destination.address);
    } catch (error) {
      if (error instanceof NotFoundError) throw error;
      runtime.log?.info({ to: refer.to, err: error }, 'REFER not sent: no contact for the endpoint');
      return;
    }
    const target = this.#dialer.destinationOf(resolved.uri);
    if (!target) {
      runtime.log?.info({ to: refer.to }, 'REFER not sent: the contact has no host');
      return;
    }
    const uri = resolved.uri;
    const fromUser = refer.from.replace(/^.*sips?:/, '').replace(/@.*$/, '').replace(/[^A-Za-z0-9._+-]/g, '') || 'patchbay';
    const displayName = Object.entries(refer.variables).find(([name]) => name.toLowerCase() === 'display_name')?.[1];
    const callId = newCallId();
    const request = new SipRequest('REFER', uri, [
      ['Max-Forwards', '70'],
      ['From', nameAddr(plainSipUri(fromUser, runtime.publicHost), [['tag', newTag()]])],
      ['To', nameAddr(formatContactUri(uri))],
      ['Call-ID', callId],
      ['CSeq', '1 REFER'],
      ['Contact', nameAddr(localContact(runtime, fromUser, target.transport, target.listener, isSipsUri(uri)))],
      ['Refer-To', nameAddr(referToUri, [], displayName ? cleanDisplayName(displayName) : undefined)],
      ['Event', 'refer'],
      ['User-Agent', runtime.config.global.userAgent || USER_AGENT],
    ]);
    let count = 0;
    for (const [name, value] of Object.entries(refer.variables)) {
      if (name.toLowerCase() === 'display_name' || REFER_BLOCKED_HEADERS.has(name.toLowerCase())) continue;
      if (count >= MAX_MESSAGE_VARIABLES || !/^[A-Za-z0-9-]{1,64}$/.test(name) || /[\r\n]/.test(value) || value.length > 1024) continue;
      request.set(name, value);
      count++;
    }
    this.#subscriptions.add(callId);
    layer.sendRequest(request, target, {
      onResponse: (response) => {
        if (response.status < 300) return;
        this.#subscriptions.forget(callId);
        runtime.log?.info({ status: response.status, to: refer.to }, 'SIP REFER refused');
      },
      onTimeout: () => {
        this.#subscriptions.forget(callId);
        runtime.log?.info({ to: refer.to }, 'SIP REFER timed out');
      },
    });
  }

  /** refer_to as a URI: a sip:/sips: URI as given, else an endpoint (`pjsip:alice`, `alice`). */
  #referTarget(referTo: string, toSelf: boolean): string {
    const text = referTo.trim().replace(/^<|>$/g, '');
    if (/^sips?:/i.test(text)) {
      const parsed = parseUri(text);
      if (!parsed || parsed.kind !== 'sip' || /[\r\n<>]/.test(text)) throw new InvalidError(`refer_to is not a valid SIP URI: ${referTo}`);
      return formatContactUri(parsed);
    }
    const name = text.replace(/^pjsip:/i, '').split('/')[0] ?? '';
    const endpoint = this.#runtime.config.endpoints.get(name);
    if (!endpoint) throw new InvalidError(`refer_to is neither a SIP URI nor an endpoint: ${referTo}`);
    if (toSelf) return formatContactUri(plainSipUri(endpoint.id, this.#runtime.publicHost, this.#runtime.port));
    const contact = this.#dialer.contactOf(endpoint);
    if (!contact) throw new InvalidError(`refer_to endpoint ${endpoint.id} has no contact`);
    return formatContactUri(contact);
  }
}

/** A display name from an ARI variable, without control characters and bounded; quoting is formatNameAddr's. */
function cleanDisplayName(name: string): string {
  // eslint-disable-next-line no-control-regex
  return name.replace(/[\x00-\x1f\x7f]/g, '').slice(0, MAX_DISPLAY_NAME);
}
