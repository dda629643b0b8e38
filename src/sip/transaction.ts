/**
 * RFC 3261 §17 transactions, with RFC 6026's Accepted state for INVITE 2xx, over a SipTransport.
 *
 * - Client: sendRequest(request, destination, handlers) → ClientTransaction. Timers A/B/D (INVITE)
 *   and E/F/K (non-INVITE); retransmissions only on UDP. ACK for 3xx–6xx is built and sent here;
 *   2xx (and their retransmissions, during Timer M) go to handlers.onResponse for the TU to ACK.
 *   cancel(tx) sends a CANCEL once a provisional response has arrived (§9.1).
 * - Server: every new request reaches tu.onRequest(request, tx) with a ServerTransaction; the TU
 *   answers with tx.respond(). Retransmitted requests are absorbed (the last response is resent);
 *   timers G/H/I (INVITE) and J (non-INVITE). A 2xx to INVITE is retransmitted (T1 doubling up to
 *   T2) until its ACK arrives or 64*T1 passes (retransmit2xx, also usable on its own). CANCEL is
 *   answered 200 and the INVITE 487 unless the TU handles tx.onCancel differently. ACKs that match
 *   no transaction (ACK for 2xx) reach tu.onAck.
 * - Bounded: at most maxTransactions live transactions (new requests beyond → 503 statelessly,
 *   new client transactions → an error); every timer is cleared when its transaction ends.
 */
import { MAGIC_COOKIE, REASON_PHRASES, SipRequest, createResponse, formatVia, newBranch, newTag, splitList, type SipMessage, type SipResponse } from './message.ts';
import { responseDestination, type Destination, type SipTransport, type Source, type TcpConnection } from './transport.ts';

export interface TimerSettings {
  /** RTT estimate (default 500 ms). */
  t1: number;
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses (default 4 s). */
  t2: number;
  /** Maximum time a message stays in the network (default 5 s). */
  t4: number;
  /** Timer D, wait time for response retransmits on UDP (default 32 s). */
  timerD: number;
  /** Delay before an INVITE server transaction sends 100 Trying by itself (default 200 ms). */
  trying: number;
  /** Longest an INVITE client transaction stays in Proceeding without a final response (default 180 s, like Timer C). */
  timerC: number;
}

export const DEFAULT_TIMERS: TimerSettings = { t1: 500, t2: 4000, t4: 5000, timerD: 32000, trying: 200, timerC: 180_000 };

export type TransactionState = 'calling' | 'trying' | 'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated';

export interface ClientHandlers {
  /** Every response the TU should see: provisional, final, and 2xx retransmissions for INVITE. */
  onResponse?(response: SipResponse, tx: ClientTransaction): void;
  /** Timer B or F (or C) fired: no final response. */
  onTimeout?(tx: ClientTransaction): void;
  onTransportError?(error: Error, tx: ClientTransaction): void;
  onTerminated?(tx: ClientTransaction): void;
}

export interface TransactionUser {
  /** A new request (never ACK) with its server transaction; answer with tx.respond(). */
  onRequest(request: SipRequest, tx: ServerTransaction): void;
  /** An ACK matching no INVITE server transaction in Completed state (ACK for a 2xx, or stray). */
  onAck?(ack: SipRequest, source: Source): void;
  /** A response matching no client transaction (e.g. a 2xx retransmitted after Timer M). */
  onStrayResponse?(response: SipResponse, source: Source): void;
  /** A request refused before the TU saw it (503 beyond the limit …): one log line's worth. */
  onDrop?(reason: string, source: Source): void;
}

export interface TransactionLayerOptions {
  timers?: Partial<TimerSettings>;
  /** Live transactions (client + server + 2xx retransmissions) at most (default 10,000). */
  maxTransactions?: number;
  /** Seconds in Retry-After of the 503 sent beyond the limit (default 5). */
  retryAfter?: number;
}

let nextId = 1;

abstract class Transaction {
  readonly id = nextId++;
  state: TransactionState = 'trying';
  protected timers = new Map<string, NodeJS.Timeout>();
  constructor(
    protected readonly layer: TransactionLayer,
    readonly key: string,
    readonly request: SipRequest,
    readonly reliable: boolean,
  ) {}

  get method(): string {
    return this.request.method;
  }

  protected startTimer(name: string, ms: number, fire: () => void): void {
    this.stopTimer(name);
    const timer = setTimeout(() => {
      this.timers.delete(name);
      if (this.state !== 'terminated') fire();
    }, ms);
    timer.unref?.();
    this.timers.set(name, timer);
  }

  protected stopTimer(name: string): void {
    const t = this.timers.get(name);
    if (t) {
      clearTimeout(t);
      this.timers.delete(name);
    }
  }

  /** Names of running timers (for tests). */
  get runningTimers(): string[] {
    return [...this.timers.keys()];
  }

  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.layer.remove(this);
    this.terminated();
  }

  protected abstract terminated(): void;
}

export class ClientTransaction extends Transaction {
  lastResponse?: SipResponse;
  private ackRequest?: SipRequest;
  private interval: number;
  private cancelWanted?: ClientHandlers;
  cancelTransaction?: ClientTransaction;

  constructor(
    layer: TransactionLayer,
    key: string,
    request: SipRequest,
    readonly destination: Destination,
    readonly handlers: ClientHandlers,
  ) {
    super(layer, key, request, destination.transport !== 'UDP');
    this.state = request.method === 'INVITE' ? 'calling' : 'trying';
    this.interval = layer.timers.t1;
  }

  get isInvite(): boolean {
    return this.request.method === 'INVITE';
  }

  /** Starts the transaction: sends the request and arms the timers. */
  start(): void {
    const { t1 } = this.layer.timers;
    this.transmit(this.request);
    if (this.isInvite) {
      if (!this.reliable) this.startTimer('A', t1, () => this.retransmitA());
      this.startTimer('B', 64 * t1, () => this.timeout());
    } else {
      if (!this.reliable) this.startTimer('E', t1, () => this.retransmitE());
      this.startTimer('F', 64 * t1, () => this.timeout());
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
  receive(response: SipResponse): void {
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

  /** Sends a CANCEL for this INVITE (§9.1), now if a provisional response arrived, else once one does. */
  cancel(handlers: ClientHandlers = {}): void {
    if (!this.isInvite || this.cancelWanted || this.cancelTransaction) return;
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
      this.cancelTransaction = this.layer.sendRequest(buildCancel(this.request), this.destination, handlers);
    } catch (err) {
      this.safe(() => handlers.onTransportError?.(err as Error, this));
    }
  }

  private clearAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private deliver(response: SipResponse): void {
    this.safe(() => this.handlers.onResponse?.(response, this));
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

export class ServerTransaction extends Transaction {
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
    layer: TransactionLayer,
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

  private ensureTag(): string {
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
          onAck: (ack) => this.onAck?.(ack),
          onTimeout: () => this.onTimeout?.(),
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
      response.body = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      if (contentType) response.set('Content-Type', contentType);
    }
    this.respond(response);
    return response;
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
  }

  /** Stops the 2xx retransmission (the UAS core got the ACK some other way, or gave up). */
  stop2xx(): void {
    this.retransmission?.stop();
  }
}

/** A 2xx to INVITE being retransmitted until its ACK (§13.3.1.4). */
export interface Retransmission2xx {
  readonly key: string;
  stop(): void;
}

interface Pending2xx extends Retransmission2xx {
  handlers: { onAck?(ack: SipRequest): void; onTimeout?(): void };
}

export class TransactionLayer {
  readonly timers: TimerSettings;
  readonly maxTransactions: number;
  private readonly retryAfter: number;
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly servers = new Map<string, ServerTransaction>();
  private readonly pending2xx = new Map<string, Pending2xx>();
  tu: TransactionUser;

  constructor(
    readonly transport: SipTransport,
    tu: TransactionUser,
    options: TransactionLayerOptions = {},
  ) {
    this.tu = tu;
    this.timers = { ...DEFAULT_TIMERS, ...options.timers };
    this.maxTransactions = options.maxTransactions ?? 10_000;
    this.retryAfter = options.retryAfter ?? 5;
    const previous = transport.handlers;
    transport.handlers = {
      ...previous,
      onMessage: (message, source) => this.receive(message, source),
      onConnectionClosed: (connection) => {
        this.connectionClosed(connection);
        previous.onConnectionClosed?.(connection);
      },
    };
  }

  /** Live transactions and 2xx retransmissions. */
  get size(): number {
    return this.clients.size + this.servers.size + this.pending2xx.size;
  }

  get counts(): { clients: number; servers: number; pending2xx: number } {
    return { clients: this.clients.size, servers: this.servers.size, pending2xx: this.pending2xx.size };
  }

  /**
   * Starts a client transaction. A request without a Via gets one (with a fresh branch and rport);
   * throws when the limit of live transactions is reached.
   */
  sendRequest(request: SipRequest, destination: Destination, handlers: ClientHandlers = {}): ClientTransaction {
    if (request.method === 'ACK') throw new Error('ACK is not sent in a transaction; use sendAck()');
    if (this.size >= this.maxTransactions && !this.evictOne()) throw new Error('too many transactions');
    if (!request.has('via')) this.addVia(request, destination.transport);
    const via = request.topVia();
    if (!via?.branch) throw new Error('request without a Via branch');
    const key = clientKey(via.branch, request.method);
    if (this.clients.has(key)) throw new Error('a client transaction with this branch exists');
    if (!request.has('max-forwards')) request.set('Max-Forwards', '70');
    const tx = new ClientTransaction(this, key, request, destination, handlers);
    this.clients.set(key, tx);
    tx.start();
    return tx;
  }

  /** Sends an ACK for a 2xx (or any request outside a transaction). */
  async sendAck(ack: SipRequest, destination: Destination): Promise<void> {
    if (!ack.has('via')) this.addVia(ack, destination.transport);
    if (!ack.has('max-forwards')) ack.set('Max-Forwards', '70');
    await this.transport.send(ack, destination);
  }

  /** Adds a top Via for this host with a new branch and an rport request. */
  addVia(request: SipRequest, transport: Destination['transport']): void {
    const local = this.transport.localAddress(transport);
    request.prepend('Via', formatVia({ protocol: 'SIP/2.0', transport, host: local.host, port: local.port, params: new Map<string, string | null>([['branch', newBranch()], ['rport', null]]) }));
  }

  /** Answers a request without a transaction (e.g. 503 beyond the limit). */
  respondStateless(request: SipRequest, status: number, source: Source, headers: Array<[string, string]> = []): void {
    const response = createResponse(request, status, undefined, { toTag: newTag() });
    for (const [n, v] of headers) response.add(n, v);
    this.transport.sendResponse(response, source).catch(() => undefined);
  }

  /**
   * Retransmits a 2xx to INVITE over UDP with T1 doubling up to T2 until its ACK arrives (matched
   * by Call-ID, From tag and CSeq number) or 64*T1 passes (then onTimeout). Over TCP nothing is
   * retransmitted but the ACK is still awaited.
   */
  retransmit2xx(response: SipResponse, source: Source, handlers: { onAck?(ack: SipRequest): void; onTimeout?(): void } = {}): Retransmission2xx {
    const key = ackKey(response);
    this.pending2xx.get(key)?.stop();
    const { t1, t2 } = this.timers;
    let interval = t1;
    let timer: NodeJS.Timeout | undefined;
    const reliable = source.transport !== 'UDP';
    const started = Date.now();
    const stop = (): void => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (this.pending2xx.get(key) === entry) this.pending2xx.delete(key);
    };
    const entry: Pending2xx = { key, stop, handlers };
    const tick = (): void => {
      if (Date.now() - started >= 64 * t1 - 1) {
        stop();
        try {
          handlers.onTimeout?.();
        } catch {
          /* ignore */
        }
        return;
      }
      if (!reliable) this.transport.sendResponse(response, source).catch(() => undefined);
      const remaining = 64 * t1 - (Date.now() - started);
      const next = reliable ? remaining : Math.min(interval, Math.max(remaining, 0));
      interval = Math.min(interval * 2, t2);
      timer = setTimeout(tick, next);
      timer.unref?.();
    };
    this.pending2xx.set(key, entry);
    timer = setTimeout(tick, reliable ? 64 * t1 : t1);
    timer.unref?.();
    return entry;
  }

  /**
   * At the limit, ends the oldest transaction that only lingers to absorb retransmissions
   * (Completed, Confirmed, Accepted) so that sustained load is not refused for their sake; looks
   * at a bounded number of the oldest entries. False when none was found (then the caller refuses).
   */
  private evictOne(): boolean {
    const lingering = (tx: Transaction): boolean => tx.state === 'completed' || tx.state === 'confirmed' || tx.state === 'accepted';
    let looked = 0;
    for (const table of [this.servers, this.clients] as Array<Map<string, Transaction>>) {
      for (const tx of table.values()) {
        if (++looked > 256) break;
        if (lingering(tx)) {
          this.evicted++;
          tx.terminate();
          return true;
        }
      }
    }
    return false;
  }

  /** Transactions ended early by evictOne (a figure for logs and tests). */
  evicted = 0;

  /** Stops every timer and forgets every transaction. */
  close(): void {
    for (const tx of [...this.clients.values(), ...this.servers.values()]) tx.terminate();
    for (const p of [...this.pending2xx.values()]) p.stop();
  }

  /** Live transaction lookup (tests, CANCEL). */
  findServer(key: string): ServerTransaction | undefined {
    return this.servers.get(key);
  }

  remove(tx: Transaction): void {
    if (tx instanceof ClientTransaction) {
      if (this.clients.get(tx.key) === tx) this.clients.delete(tx.key);
    } else if (this.servers.get(tx.key) === tx) this.servers.delete(tx.key);
  }

  // ---- incoming

  private receive(message: SipMessage, source: Source): void {
    if (message.isRequest()) this.receiveRequest(message, source);
    else this.receiveResponse(message as SipResponse, source);
  }

  private receiveResponse(response: SipResponse, source: Source): void {
    const via = response.topVia();
    const cseq = response.cseq();
    const tx = via?.branch && cseq ? this.clients.get(clientKey(via.branch, cseq.method)) : undefined;
    if (tx) tx.receive(response);
    else this.tu.onStrayResponse?.(response, source);
  }

  private receiveRequest(request: SipRequest, source: Source): void {
    const key = serverKey(request);
    if (request.method === 'ACK') {
      const tx = this.servers.get(key);
      if (tx && (tx.state === 'completed' || tx.state === 'confirmed')) {
        tx.receive(request);
        return;
      }
      const pending = this.pending2xx.get(ackKey(request));
      if (pending) {
        pending.stop();
        try {
          pending.handlers.onAck?.(request);
        } catch {
          /* ignore */
        }
      }
      this.tu.onAck?.(request, source);
      return;
    }
    const existing = this.servers.get(key);
    if (existing) {
      existing.receive(request);
      return;
    }
    if (this.size >= this.maxTransactions && !this.evictOne()) {
      this.respondStateless(request, 503, source, [['Retry-After', String(this.retryAfter)]]);
      this.tu.onDrop?.('too many transactions: 503', source);
      return;
    }
    const tx = new ServerTransaction(this, key, request, source);
    this.servers.set(key, tx);
    if (request.method === 'CANCEL') {
      const invite = this.servers.get(serverKey(request, 'INVITE'));
      if (invite && invite.state === 'proceeding') {
        tx.respond(tx.createResponse(200));
        invite.cancelled(request);
      } else if (invite) tx.respond(tx.createResponse(200));
      else tx.respond(tx.createResponse(481));
      return;
    }
    try {
      this.tu.onRequest(request, tx);
    } catch (err) {
      if (!tx.lastResponse || tx.lastResponse.status < 200) tx.respond(tx.createResponse(500));
      this.tu.onDrop?.(`transaction user error: ${(err as Error).message}`, source);
    }
  }

  private connectionClosed(connection: TcpConnection): void {
    for (const tx of [...this.clients.values()]) {
      if ((tx.connection ?? tx.destination.connection) === connection && (tx.state === 'calling' || tx.state === 'trying' || tx.state === 'proceeding')) tx.transportError(new Error('connection closed'));
    }
  }
}

// ---- keys and request builders

function clientKey(branch: string, method: string): string {
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
function ackKey(message: SipMessage): string {
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
  ack.add('Max-Forwards', '70');
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
