/**
 * SIP dialogs (RFC 3261 §12): the state shared by two user agents after an INVITE — Call-ID, tags,
 * CSeq numbers, route set and remote target — and the requests built inside it (BYE, re-INVITE,
 * INFO, MESSAGE, ACK for a 2xx). Pure data: no transport, no timers. DialogTable is a bounded map.
 */
import { SipRequest, type SipMessage, type SipResponse } from './message.ts';
import type { Destination, TransportProtocol } from './transport.ts';
import { formatUri, parseNameAddr, type SipUri, type Uri } from './uri.ts';

export type DialogState = 'early' | 'confirmed' | 'terminated';

export interface DialogInit {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** The local party's header value (From for the UAC, To for the UAS), tag included. */
  localParty: string;
  remoteParty: string;
  localSeq: number;
  remoteSeq?: number;
  remoteTarget: Uri;
  /** Route set in the order the requests of this side must carry it. */
  routeSet: string[];
  secure: boolean;
  state: DialogState;
}

/** RFC 3261 §12.1.1: a CSeq for new dialogs; less than 2**31, leaving room to grow. */
function initialSeq(): number {
  return 1 + Math.floor(Math.random() * 0x7fff);
}

function contactUri(message: SipMessage): Uri | undefined {
  const contacts = message.contacts();
  if (contacts === 'wildcard' || contacts.length === 0) return undefined;
  return contacts[0].uri;
}

/** What both sides take alike from the dialog-creating request and the response (§12.1.1, §12.1.2). */
interface CreatingExchange {
  readonly callId: string;
  /** The request's CSeq number. */
  readonly cseq: number;
  /** The request's From and the response's To, tags included. */
  readonly from: string;
  readonly to: string;
  /** A sips Request-URI makes the dialog secure. */
  readonly secure: boolean;
  /** A 1xx makes an early dialog, a 2xx a confirmed one. */
  readonly state: DialogState;
}

/** Undefined when the exchange lacks what any dialog needs. */
function creatingExchange(request: SipRequest, response: SipResponse): CreatingExchange | undefined {
  const callId = request.callId();
  const cseq = request.cseq();
  const from = request.get('from');
  const to = response.get('to');
  if (!callId || !cseq || !from || !to) return undefined;
  return { callId, cseq: cseq.seq, from, to, secure: request.uri.kind === 'sip' && request.uri.scheme === 'sips', state: response.status >= 200 ? 'confirmed' : 'early' };
}

export class Dialog implements DialogInit {
  callId: string;
  localTag: string;
  remoteTag: string;
  localParty: string;
  remoteParty: string;
  localSeq: number;
  remoteSeq?: number;
  remoteTarget: Uri;
  routeSet: string[];
  secure: boolean;
  state: DialogState;

  constructor(init: DialogInit) {
    this.callId = init.callId;
    this.localTag = init.localTag;
    this.remoteTag = init.remoteTag;
    this.localParty = init.localParty;
    this.remoteParty = init.remoteParty;
    this.localSeq = init.localSeq;
    if (init.remoteSeq !== undefined) this.remoteSeq = init.remoteSeq;
    this.remoteTarget = init.remoteTarget;
    this.routeSet = init.routeSet;
    this.secure = init.secure;
    this.state = init.state;
  }

  /** Dialog id: Call-ID, local tag, remote tag. */
  get id(): string {
    return dialogKey(this.callId, this.localTag, this.remoteTag);
  }

  /**
   * UAS side (§12.1.1): from the dialog-creating request and the response we send (1xx with a To
   * tag → early, 2xx → confirmed). Returns undefined when the request lacks what a dialog needs.
   */
  static asUas(request: SipRequest, response: SipResponse): Dialog | undefined {
    const exchange = creatingExchange(request, response);
    const remoteTag = request.fromTag();
    const localTag = response.toTag();
    const target = contactUri(request);
    if (!exchange || !remoteTag || !localTag || !target) return undefined;
    const { callId, cseq, from, to, secure, state } = exchange;
    return new Dialog({ callId, localTag, remoteTag, localParty: to, remoteParty: from, localSeq: initialSeq(), remoteSeq: cseq, remoteTarget: target, routeSet: request.values('record-route'), secure, state });
  }

  /** UAC side (§12.1.2): from the request we sent and a 1xx (with To tag) or 2xx received. */
  static asUac(request: SipRequest, response: SipResponse): Dialog | undefined {
    const exchange = creatingExchange(request, response);
    const localTag = request.fromTag();
    const remoteTag = response.toTag();
    const target = contactUri(response);
    if (!exchange || !localTag || !remoteTag || !target) return undefined;
    const { callId, cseq, from, to, secure, state } = exchange;
    return new Dialog({ callId, localTag, remoteTag, localParty: from, remoteParty: to, localSeq: cseq, remoteTarget: target, routeSet: response.values('record-route').reverse(), secure, state });
  }

  /**
   * A response within the dialog (UAC): a 2xx confirms an early dialog and, like a target-refresh
   * 1xx/2xx, updates the remote target (the route set is fixed once confirmed, §12.2.1.2).
   */
  updateFromResponse(response: SipResponse): void {
    const target = contactUri(response);
    if (this.state === 'early') {
      if (response.status >= 200 && response.status < 300) {
        this.state = 'confirmed';
        const rr = response.values('record-route');
        if (rr.length > 0) this.routeSet = rr.reverse();
      }
    }
    if (target && response.status < 300) this.remoteTarget = target;
  }

  /**
   * Checks the CSeq of a request received in the dialog (§12.2.2): 'lower' means answer 500; a
   * target-refresh request (re-INVITE, UPDATE) moves the remote target.
   */
  receiveRequest(request: SipRequest): 'ok' | 'lower' | 'invalid' {
    const cseq = request.cseq();
    if (!cseq) return 'invalid';
    if (request.method !== 'ACK' && request.method !== 'CANCEL') {
      if (this.remoteSeq !== undefined && cseq.seq <= this.remoteSeq) {
        // an equal number is a retransmission the transaction layer absorbs; lower is out of order
        if (cseq.seq < this.remoteSeq) return 'lower';
      }
      this.remoteSeq = cseq.seq;
    }
    if (request.method === 'INVITE' || request.method === 'UPDATE') {
      const target = contactUri(request);
      if (target) this.remoteTarget = target;
    }
    return 'ok';
  }

  /**
   * Builds a request in the dialog (§12.2.1.1): CSeq incremented, Request-URI and Route from the
   * remote target and the route set (loose or strict routing), From/To with tags. No Via: the
   * transaction layer adds one. ACK and CANCEL do not take a new CSeq (use createAck for ACK).
   */
  createRequest(method: string, options: { body?: Buffer | string; contentType?: string; headers?: Array<[string, string]> } = {}): SipRequest {
    if (method === 'ACK') throw new Error('use createAck() for ACK');
    if (this.localSeq >= 0x7fffffff) throw new Error('CSeq space exhausted');
    this.localSeq++;
    const request = this.build(method, this.localSeq);
    for (const [n, v] of options.headers ?? []) request.add(n, v);
    if (options.body !== undefined) {
      request.body = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body;
      if (options.contentType) request.set('Content-Type', options.contentType);
    }
    return request;
  }

  /** ACK for a 2xx to the INVITE with this CSeq number (§13.2.2.4): a new transaction-less request. */
  createAck(inviteSeq: number, options: { body?: Buffer | string; contentType?: string } = {}): SipRequest {
    const ack = this.build('ACK', inviteSeq);
    // no Via: TransactionLayer.sendAck adds one with a fresh branch (an ACK for 2xx is its own transaction)
    if (options.body !== undefined) {
      ack.body = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body;
      if (options.contentType) ack.set('Content-Type', options.contentType);
    }
    return ack;
  }

  private build(method: string, seq: number): SipRequest {
    const routes = [...this.routeSet];
    let requestUri: Uri = this.remoteTarget;
    if (routes.length > 0) {
      const first = parseNameAddr(routes[0]);
      const loose = first?.uri.kind === 'sip' && first.uri.params.has('lr');
      if (!loose && first) {
        // strict routing: the first route becomes the Request-URI, the remote target the last route
        requestUri = stripForRequestUri(first.uri);
        routes.shift();
        routes.push(`<${formatUri(this.remoteTarget)}>`);
      }
    }
    const request = new SipRequest(method, stripForRequestUri(requestUri));
    for (const r of routes) request.add('Route', r);
    request.add('Max-Forwards', '70');
    request.add('From', this.localParty);
    request.add('To', this.remoteParty);
    request.add('Call-ID', this.callId);
    request.add('CSeq', `${seq} ${method}`);
    return request;
  }

  /**
   * Where a request of this dialog goes (no DNS SRV): the first loose route, else the remote
   * target, with the transport from its `transport` parameter (default given).
   */
  nextHop(defaultTransport: TransportProtocol = 'UDP'): Destination | undefined {
    let uri: Uri | undefined = this.remoteTarget;
    if (this.routeSet.length > 0) uri = parseNameAddr(this.routeSet[0])?.uri;
    if (!uri || uri.kind !== 'sip') return undefined;
    return uriDestination(uri, defaultTransport);
  }
}

/**
 * Where a request for `uri` goes (RFC 3263 without DNS): its `maddr` or host (an IPv6 reference
 * without brackets), its port or the transport's default, its `transport` parameter or
 * `defaultTransport`. A `sips:` URI goes over TLS whatever else it says (RFC 3261 §19.1.2, §26.2.2;
 * `;transport=tcp` on it is the deprecated way of saying TLS over TCP).
 */
export function uriDestination(uri: SipUri, defaultTransport: TransportProtocol = 'UDP'): Destination | undefined {
  const host = (uri.params.get('maddr') ?? uri.host).replace(/^\[|\]$/g, '');
  if (!host) return undefined;
  const t = (uri.params.get('transport') ?? '').toUpperCase();
  const named: TransportProtocol | undefined = t === 'TCP' || t === 'UDP' || t === 'TLS' || t === 'WS' || t === 'WSS' ? t : undefined;
  const transport: TransportProtocol = uri.scheme === 'sips' ? 'TLS' : (named ?? defaultTransport);
  return { transport, host, port: uri.port ?? (transport === 'TLS' ? 5061 : 5060) };
}

/** A Request-URI may not carry method or header components from a Contact (§19.1.1 table). */
function stripForRequestUri(uri: Uri): Uri {
  if (uri.kind !== 'sip') return uri;
  const copy: SipUri = { ...uri, params: new Map(uri.params), headers: new Map() };
  copy.params.delete('method');
  return copy;
}

export function dialogKey(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}\u0000${localTag}\u0000${remoteTag}`;
}

/** The dialog key a received request belongs to (our tag is in To, theirs in From). */
export function keyOfIncoming(request: SipRequest): string | undefined {
  const callId = request.callId();
  const to = request.toTag();
  const from = request.fromTag();
  return callId && to && from ? dialogKey(callId, to, from) : undefined;
}

/**
 * Whether a received request belongs to the dialog known by these identifiers (§12.2.2): the same
 * Call-ID, our tag in To and the peer's in From. Tags compare exactly, as pjsip compares them. A
 * request that shares only the Call-ID (a forged or stale BYE) is not the dialog's: 481.
 */
export function belongsToDialog(request: SipRequest, callId: string, localTag: string, remoteTag: string): boolean {
  return request.callId() === callId && request.toTag() === localTag && request.fromTag() === remoteTag;
}

/** A bounded dialog table. */
export class DialogTable {
  private readonly dialogs = new Map<string, Dialog>();
  constructor(readonly maxDialogs = 10_000) {}

  get size(): number {
    return this.dialogs.size;
  }

  /** Adds a dialog; false when the table is full. */
  add(dialog: Dialog): boolean {
    if (!this.dialogs.has(dialog.id) && this.dialogs.size >= this.maxDialogs) return false;
    this.dialogs.set(dialog.id, dialog);
    return true;
  }

  get(key: string | undefined): Dialog | undefined {
    return key === undefined ? undefined : this.dialogs.get(key);
  }

  /** The dialog an incoming in-dialog request belongs to. */
  match(request: SipRequest): Dialog | undefined {
    return this.get(keyOfIncoming(request));
  }

  delete(dialog: Dialog): void {
    dialog.state = 'terminated';
    if (this.dialogs.get(dialog.id) === dialog) this.dialogs.delete(dialog.id);
  }

  values(): IterableIterator<Dialog> {
    return this.dialogs.values();
  }
}

