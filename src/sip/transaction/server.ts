// The server side of a transaction (RFC 3261 §17.2): absorbs retransmitted requests, resends the
// last response, retransmits INVITE responses (Timer G, and 2xx until their ACK), Timers H/I/J.
import { REASON_PHRASES, createResponse, newTag, type SipRequest, type SipResponse } from '../message.ts';
import { responseDestination, type Source } from '../transport.ts';
import { Transaction, type Retransmission2xx, type TransactionHost } from './transaction.ts';
import { ownedUtf8 } from '../../util/owned-buffer.ts';

export class ServerTransaction extends Transaction {
  /**
   * The last response sent, while the transaction may still send it again: let go once an INVITE's
   * 2xx was ACKed (RFC 6026's Accepted state only absorbs retransmitted INVITEs; nothing is resent)
   * and when the transaction ends. A call keeps its INVITE's transaction for its whole life (for the
   * source and the To tag), so a 200 OK held here would be held for as long as the call.
   */
  lastResponse?: SipResponse;
  /** To tag used in the responses, reused for the 487 sent on CANCEL. */
  toTag?: string;
  private interval: number;
  private retransmission?: Retransmission2xx;

  /** The INVITE was CANCELled; respond within the call or a 487 is sent for you. */
  onCancel?: (cancel: SipRequest) => void;
  /** The ACK for this transaction's 2xx arrived. */
  onAck?: (ack: SipRequest) => void;
  /** Timer H fired (no ACK for a 3xx–6xx), or no ACK for a 2xx within 64*T1. */
  onTimeout?: () => void;
  onTransportError?: (error: Error) => void;
  onTerminated?: () => void;

  constructor(
    layer: TransactionHost,
    key: string,
    request: SipRequest,
    readonly source: Source,
  ) {
    super(layer, key, request, source.transport !== 'UDP');
    this.state = request.method === 'INVITE' ? 'proceeding' : 'trying';
    this.interval = layer.timers.t1;
    if (request.method === 'INVITE' && layer.timers.trying >= 0) {
      this.startTimer('trying', layer.timers.trying, () => {
        if (!this.lastResponse) this.respond(createResponse(this.request, 100));
      });
    }
  }

  get isInvite(): boolean {
    return this.request.method === 'INVITE';
  }

  /** Builds a response to this transaction's request (the To tag kept across responses). */
  createResponse(status: number, reason?: string): SipResponse {
    return createResponse(this.request, status, reason ?? REASON_PHRASES[status], { toTag: status > 100 ? this.ensureTag() : undefined, copyRecordRoute: true });
  }

  /** The To tag of this transaction's responses, chosen now if none was sent yet. */
  ensureTag(): string {
    if (this.toTag === undefined) this.toTag = this.request.toTag() ?? newTag();
    return this.toTag;
  }

  /** Sends a response; ignored once a final response was sent (except further 2xx to INVITE). */
  respond(response: SipResponse): void {
    const status = response.status;
    if (this.state === 'terminated' || this.state === 'completed' || this.state === 'confirmed') return;
    if (this.state === 'accepted' && !(status >= 200 && status < 300)) return;
    const tag = response.toTag();
    if (tag && status > 100) this.toTag = tag;
    this.stopTimer('trying');
    this.lastResponse = response;
    const { t1, t2 } = this.layer.timers;
    this.transmit(response);
    if (this.isInvite) {
      if (status < 200) return;
      if (status < 300) {
        if (this.state === 'accepted') return;
        this.state = 'accepted';
        this.startTimer('L', 64 * t1, () => this.terminate());
        this.retransmission = this.layer.retransmit2xx(response, this.source, {
          // These closures must not name `response`: V8 gives all closures of this call one
          // context, so Timer L's would keep the 2xx for 64*T1 after its ACK.
          onAck: (ack) => {
            const onAck = this.onAck;
            this.released2xx();
            onAck?.(ack);
          },
          onTimeout: () => {
            const onTimeout = this.onTimeout;
            this.released2xx();
            onTimeout?.();
          },
        });
        return;
      }
      this.state = 'completed';
      if (!this.reliable) this.startTimer('G', t1, () => this.retransmitG());
      this.startTimer('H', 64 * t1, () => {
        try {
          this.onTimeout?.();
        } finally {
          this.terminate();
        }
      });
      void t2;
      return;
    }
    if (status < 200) {
      this.state = 'proceeding';
      return;
    }
    this.state = 'completed';
    this.startTimer('J', this.reliable ? 0 : 64 * t1, () => this.terminate());
  }

  /** Convenience: respond with a status (and optional headers/body). */
  reply(status: number, reason?: string, headers: Array<[string, string]> = [], body?: Buffer | string, contentType?: string): SipResponse {
    const response = this.createResponse(status, reason);
    for (const [n, v] of headers) response.add(n, v);
    if (body !== undefined) {
      response.body = typeof body === 'string' ? ownedUtf8(body) : body;
      if (contentType) response.set('Content-Type', contentType);
    }
    this.respond(response);
    return response;
  }

  /**
   * The 2xx is no longer retransmitted (ACKed, or 64*T1 passed): the Accepted state has nothing more
   * to send, so neither the response nor the retransmission's closures need stay with the
   * transaction for the rest of Timer L (or of the call that holds it).
   */
  private released2xx(): void {
    this.retransmission = undefined;
    // In Accepted (or after it) the last response is a 2xx: nothing resends it any more.
    this.lastResponse = undefined;
    // Timer L and the 2xx's own 64*T1 end together: an ended transaction kept its 2xx handlers
    // for this moment only (see terminated()).
    if (this.state === 'terminated') this.onAck = this.onTimeout = undefined;
  }

  private retransmitG(): void {
    if (this.state !== 'completed' || !this.lastResponse) return;
    this.transmit(this.lastResponse);
    this.interval = Math.min(this.interval * 2, this.layer.timers.t2);
    this.startTimer('G', this.interval, () => this.retransmitG());
  }

  /** A retransmission of the request (or an ACK for a non-2xx final response). */
  receive(request: SipRequest): void {
    if (request.method === 'ACK') {
      if (this.state === 'completed') {
        this.state = 'confirmed';
        this.stopTimer('G');
        this.stopTimer('H');
        this.startTimer('I', this.reliable ? 0 : this.layer.timers.t4, () => this.terminate());
      }
      return;
    }
    if ((this.state === 'proceeding' || this.state === 'completed') && this.lastResponse) this.transmit(this.lastResponse);
  }

  /** CANCEL matched this INVITE: tell the TU, then 487 if it did not answer. */
  cancelled(cancel: SipRequest): void {
    if (this.state !== 'proceeding') return;
    try {
      this.onCancel?.(cancel);
    } catch {
      /* keep going: the 487 still goes out */
    }
    if (this.state === 'proceeding') this.respond(this.createResponse(487));
  }

  private transmit(response: SipResponse): void {
    this.layer.transport.sendResponse(response, this.source).catch((err: Error) => this.transportError(err));
  }

  transportError(err: Error): void {
    if (this.state === 'terminated') return;
    try {
      this.onTransportError?.(err);
    } finally {
      this.terminate();
    }
  }

  protected terminated(): void {
    try {
      this.onTerminated?.();
    } catch {
      /* ignore */
    }
    // An ended transaction answers nothing more; what it held would otherwise live as long as
    // whoever still holds the transaction (a call holds its INVITE's). Its source, To tag and
    // request stay: a call reads them. A 2xx still awaiting its ACK (Timer L ends with it, not
    // before it) keeps the response and the ACK/timeout handlers until released2xx.
    this.onCancel = this.onTransportError = this.onTerminated = undefined;
    if (this.retransmission) return;
    this.lastResponse = undefined;
    this.onAck = this.onTimeout = undefined;
  }

  /** Stops the 2xx retransmission (the UAS core got the ACK some other way, or gave up). */
  stop2xx(): void {
    const retransmission = this.retransmission;
    if (!retransmission) return;
    retransmission.stop();
    if (this.state === 'accepted' || this.state === 'terminated') this.released2xx();
  }
}
