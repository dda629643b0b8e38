/**
 * What a user agent answers to requests it cannot serve (RFC 3261 §8.2.1–§8.2.3, RFC 6665 §7.2.2),
 * as pure decisions for the layers above: an unknown method is 501, a known one not allowed here
 * 405; an INVITE body that is not SDP is 415 with Accept; a SUBSCRIBE for an event package nobody
 * serves is 489.
 */
import type { SipRequest } from './message.ts';
import { sdpPartOf } from './multipart.ts';

/** Methods the SIP RFCs define (3261, 3262, 3265/6665, 3311, 3428, 3515, 3903, 6086). */
const KNOWN_METHODS = new Set(['INVITE', 'ACK', 'CANCEL', 'BYE', 'OPTIONS', 'REGISTER', 'PRACK', 'SUBSCRIBE', 'NOTIFY', 'PUBLISH', 'INFO', 'REFER', 'MESSAGE', 'UPDATE']);

/** A refusal: the status and the headers that explain it. */
export interface Refusal {
  readonly status: number;
  readonly reason?: string;
  readonly headers: Array<[string, string]>;
}

/**
 * §8.2.1: a method the UAS does not recognise at all is 501 Not Implemented; one it knows but
 * does not allow here is 405 with Allow (the list of what is).
 */
export function refuseMethod(method: string, allow: string): Refusal {
  return KNOWN_METHODS.has(method) ? { status: 405, headers: [['Allow', allow]] } : { status: 501, headers: [['Allow', allow]] };
}

/** The only session description Patchbay reads. */
export const SDP_CONTENT_TYPE = 'application/sdp';

/**
 * §8.2.3 for a body that should hold SDP (INVITE, re-INVITE, ACK of a late offer): undefined when
 * the body is empty, `application/sdp` with identity encoding, or a multipart/mixed or
 * multipart/alternative with an SDP part (multipart.ts); otherwise 415 naming what is
 * accepted (Accept, or Accept-Encoding for a compressed body). A body without Content-Type is
 * not taken for SDP either.
 */
export function refuseNonSdpBody(request: SipRequest): Refusal | undefined {
  if (request.body.length === 0) return undefined;
  const encoding = (request.get('content-encoding') ?? '').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') return { status: 415, headers: [['Accept-Encoding', 'identity']] };
  const type = (request.contentType() ?? '').split(';')[0].trim().toLowerCase();
  if (type === SDP_CONTENT_TYPE) return undefined;
  // A multipart/mixed or multipart/alternative body with an SDP part is taken (as Asterisk's stack takes it).
  if (sdpPartOf(request.contentType(), request.body) !== undefined) return undefined;
  return { status: 415, headers: [['Accept', SDP_CONTENT_TYPE]] };
}

/**
 * A request the user agent does not serve where it arrived: SUBSCRIBE gets 489 (refuseSubscription),
 * any other method refuseMethod's 405 or 501.
 */
export function refuseUnserved(request: SipRequest, allow: string, served: readonly string[] = []): Refusal {
  if (request.method === 'SUBSCRIBE') {
    const refusal = refuseSubscription(request, served);
    if (refusal) return refusal;
  }
  return refuseMethod(request.method, allow);
}

/**
 * RFC 6665 §7.2.2: a SUBSCRIBE for an event package the notifier does not serve is 489 Bad
 * Event. `served` lists the packages that are (the technology's); a SUBSCRIBE without Event is for
 * none. Allow-Events lists the served ones when there are any.
 */
export function refuseSubscription(request: SipRequest, served: readonly string[] = []): Refusal | undefined {
  const event = (request.get('event') ?? '').split(';')[0].trim().toLowerCase();
  if (event !== '' && served.includes(event)) return undefined;
  return { status: 489, reason: 'Bad Event', headers: served.length > 0 ? [['Allow-Events', served.join(', ')]] : [] };
}
