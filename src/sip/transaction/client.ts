// The client side of a transaction (RFC 3261 §17.1): sends the request, retransmits it on UDP
// (Timers A/E), gives up on Timers B/F/C, ACKs 3xx–6xx to INVITE itself and sends CANCEL (§9.1).
import type { SipMessage, SipRequest, SipResponse } from '../message.ts';
import type { Destination, Source, TcpConnection } from '../transport.ts';
import { buildAckForNon2xx, buildCancel } from './keys.ts';
import { Transaction, type ClientTransactionLike, type TransactionHost } from './transaction.ts';

export interface ClientHandlers {
  /** Every response the TU should see: provisional, final, and 2xx retransmissions for INVITE. */
  /** With where the response came from (rewrite_contact points the dialog there). */
  onResponse?(response: SipResponse, tx: ClientTransaction, source?: Source): void;
  /** Timer B or F (or C) fired: no final response. */
  onTimeout?(tx: ClientTransaction): void;
  onTransportError?(error: Error, tx: ClientTransaction): void;
  onTerminated?(tx: ClientTransaction): void;
}

/**
 * What a client transaction needs of its layer beyond what every transaction does: a way to send the
 * CANCEL it starts. Declared here, not in transaction.ts, because it names the handlers above.
 */
export interface ClientTransactionHost extends TransactionHost {
  sendRequest(request: SipRequest, destination: Destination, handlers?: ClientHandlers): ClientTransactionLike;
}

export class ClientTransaction extends Transaction {
  lastResponse?: SipResponse;
  private ackRequest?: SipRequest;
  private interval: number;
  private cancelWanted?: ClientHandlers;
  /** What the CANCEL carries besides §9.1's headers. */
  private cancelHeaders: ReadonlyArray<readonly [string, string]> = [];
  cancelTransaction?: ClientTransactionLike;

  constructor(
    private readonly host: ClientTransactionHost,
    key: string,
    request: SipRequest,
    readonly destination: Destination,
    readonly handlers: ClientHandlers,
  ) {
    super(host, key, request, destination.transport !== 'UDP');
    this.state = request.method === 'INVITE' ? 'calling' : 'trying';
    this.interval = host.timers.t1;
  }

  get isInvite(): boolean {
    return this.request.method === 'INVITE';
  }

  /** Starts the transaction: sends the request and arms the timers. */
  start(): void {
    const { t1, timerB = 64 * t1 } = this.layer.timers;
    this.transmit(this.request);
    if (this.isInvite) {
      if (!this.reliable) this.startTimer('A', t1, () => this.retransmitA());
      this.startTimer('B', timerB, () => this.timeout());
    } else {
      if (!this.reliable) this.startTimer('E', t1, () => this.retransmitE());
      this.startTimer('F', timerB, () => this.timeout());
    }
  }

  private retransmitA(): void {
    if (this.state !== 'calling') return;
    this.transmit(this.request);
    this.interval *= 2;
    this.startTimer('A', this.interval, () => this.retransmitA());
  }

  private retransmitE(): void {
    if (this.state !== 'trying' && this.state !== 'proceeding') return;
    this.transmit(this.request);
    const { t2 } = this.layer.timers;
    this.interval = this.state === 'proceeding' ? t2 : Math.min(this.interval * 2, t2);
    this.startTimer('E', this.interval, () => this.retransmitE());
  }

  private timeout(): void {
    this.safe(() => this.handlers.onTimeout?.(this));
    this.terminate();
  }

  /** The TCP connection the request went out on (a close fails the transaction). */
  connection?: TcpConnection;

  private transmit(message: SipMessage): void {
    this.layer.transport.send(message, this.destination).then(
      (connection) => {
        if (connection) this.connection = connection;
      },
      (err: Error) => this.transportError(err),
    );
  }

  transportError(err: Error): void {
    if (this.state === 'terminated') return;
    this.safe(() => this.handlers.onTransportError?.(err, this));
    this.terminate();
  }

  /** A response matched to this transaction. */
  /** Where the response being handled came from (given to onResponse). */
  #responseSource: Source | undefined;

  receive(response: SipResponse, source?: Source): void {
    this.#responseSource = source;
    const status = response.status;
    const { t2, t4, timerD, timerC } = this.layer.timers;
    if (this.isInvite) {
      switch (this.state) {
        case 'calling':
        case 'proceeding':
          if (status < 200) {
            this.state = 'proceeding';
            this.stopTimer('A');
            this.stopTimer('B');
            this.startTimer('C', timerC, () => this.timeout());
            this.lastResponse = response;
            this.deliver(response);
            if (this.cancelWanted) this.sendCancel();
          } else if (status < 300) {
            this.state = 'accepted';
            this.clearAll();
            this.lastResponse = response;
            this.startTimer('M', 64 * this.layer.timers.t1, () => this.terminate());
            this.deliver(response);
          } else {
            this.state = 'completed';
            this.clearAll();
            this.lastResponse = response;
            this.ackRequest = buildAckForNon2xx(this.request, response);
            this.transmit(this.ackRequest);
            this.startTimer('D', this.reliable ? 0 : timerD, () => this.terminate());
            this.deliver(response);
          }
          return;
        case 'accepted':
          if (status >= 200 && status < 300) this.deliver(response);
          return;
        case 'completed':
          if (status >= 300 && this.ackRequest) this.transmit(this.ackRequest);
          return;
        default:
          return;
      }
    }
    switch (this.state) {
      case 'trying':
      case 'proceeding':
        this.lastResponse = response;
        if (status < 200) {
          this.state = 'proceeding';
          this.deliver(response);
        } else {
          this.state = 'completed';
          this.clearAll();
          this.startTimer('K', this.reliable ? 0 : t4, () => this.terminate());
          this.deliver(response);
        }
        return;
      default:
        void t2;
        return;
    }
  }

  /**
   * Sends a CANCEL for this INVITE (§9.1), now if a provisional response arrived, else once one
   * does; `headers` are added to it (a Reason, RFC 3326).
   */
  cancel(handlers: ClientHandlers = {}, headers: ReadonlyArray<readonly [string, string]> = []): void {
    if (!this.isInvite || this.cancelWanted || this.cancelTransaction) return;
    this.cancelHeaders = headers;
    if (this.state === 'proceeding') {
      this.cancelWanted = handlers;
      this.sendCancel();
    } else if (this.state === 'calling') this.cancelWanted = handlers;
  }

  private sendCancel(): void {
    const handlers = this.cancelWanted ?? {};
    this.cancelWanted = undefined;
    if (this.cancelTransaction) return;
    try {
      const cancel = buildCancel(this.request);
      for (const [name, value] of this.cancelHeaders) cancel.add(name, value);
      this.cancelTransaction = this.host.sendRequest(cancel, this.destination, handlers);
    } catch (err) {
      this.safe(() => handlers.onTransportError?.(err as Error, this));
    }
  }

  private clearAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private deliver(response: SipResponse): void {
    this.safe(() => this.handlers.onResponse?.(response, this, this.#responseSource));
  }

  private safe(fn: () => void): void {
    try {
      fn();
    } catch {
      /* a throwing TU must not break the transaction machinery */
    }
  }

  protected terminated(): void {
    this.safe(() => this.handlers.onTerminated?.(this));
  }
}
