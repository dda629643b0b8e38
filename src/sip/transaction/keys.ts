// How transactions are matched (RFC 3261 §17.1.3, §17.2.3) and the requests the layer builds
// itself (ACK for 3xx–6xx, CANCEL).
import { MAGIC_COOKIE, SipRequest, splitList, type SipMessage, type SipResponse } from '../message.ts';

export function clientKey(branch: string, method: string): string {
  return `${branch}|${method === 'ACK' ? 'INVITE' : method}`;
}

/** §17.2.3: branch + sent-by + method (ACK matches INVITE); RFC 2543 requests by their dialog and CSeq. */
export function serverKey(request: SipRequest, method = request.method): string {
  const via = request.topVia();
  const m = method === 'ACK' ? 'INVITE' : method;
  if (via?.branch?.startsWith(MAGIC_COOKIE)) return `${via.branch}|${via.host}:${via.port ?? ''}|${m}`;
  const cseq = request.cseq();
  const topVia = splitList(request.get('via') ?? '')[0] ?? '';
  return `2543|${request.uriText}|${request.fromTag() ?? ''}|${request.callId() ?? ''}|${cseq?.seq ?? ''}|${topVia}|${m}`;
}

/** Matches an ACK with the 2xx it acknowledges: Call-ID, From tag, CSeq number. */
export function ackKey(message: SipMessage): string {
  return `${message.callId() ?? ''}|${message.fromTag() ?? ''}|${message.cseq()?.seq ?? ''}`;
}

/** ACK for a 3xx–6xx (§17.1.1.3). */
export function buildAckForNon2xx(request: SipRequest, response: SipResponse): SipRequest {
  const ack = new SipRequest('ACK', request.uri);
  ack.uriText = request.uriText;
  const topVia = splitList(request.get('via') ?? '')[0];
  if (topVia) ack.add('Via', topVia);
  for (const name of ['from', 'call-id']) {
    const v = request.get(name);
    if (v !== undefined) ack.add(canonical(name), v);
  }
  const to = response.get('to');
  if (to !== undefined) ack.add('To', to);
  ack.add('CSeq', `${request.cseq()?.seq ?? 1} ACK`);
  for (const route of request.getAll('route')) ack.add('Route', route);
  // The INVITE's (a configured max_forwards, else 70).
  ack.add('Max-Forwards', request.get('max-forwards') ?? '70');
  return ack;
}

/** CANCEL for a request (§9.1). */
export function buildCancel(request: SipRequest): SipRequest {
  const cancel = new SipRequest('CANCEL', request.uri);
  cancel.uriText = request.uriText;
  const topVia = splitList(request.get('via') ?? '')[0];
  if (topVia) cancel.add('Via', topVia);
  for (const name of ['from', 'to', 'call-id']) {
    const v = request.get(name);
    if (v !== undefined) cancel.add(canonical(name), v);
  }
  cancel.add('CSeq', `${request.cseq()?.seq ?? 1} CANCEL`);
  for (const route of request.getAll('route')) cancel.add('Route', route);
  cancel.add('Max-Forwards', '70');
  return cancel;
}

function canonical(name: string): string {
  return name === 'call-id' ? 'Call-ID' : name[0].toUpperCase() + name.slice(1);
}
