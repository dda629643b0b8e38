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
import { isForeignFlow } from '../foreign-flow.ts';
import { SipRequest, createResponse, formatVia, newBranch, newTag, type SipMessage, type SipResponse } from '../message.ts';
import type { Destination, SipSender, Source, TcpConnection } from '../transport.ts';
import { ClientTransaction, type ClientHandlers, type ClientTransactionHost } from './client.ts';
import { ackKey, clientKey, serverKey } from './keys.ts';
import { ServerTransaction } from './server.ts';
import { DEFAULT_TIMERS, type Retransmission2xx, type TimerSettings, type Transaction } from './transaction.ts';

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

interface Pending2xx extends Retransmission2xx {
  handlers: { onAck?(ack: SipRequest): void; onTimeout?(): void };
}

export class TransactionLayer implements ClientTransactionHost {
  readonly timers: TimerSettings;
  readonly maxTransactions: number;
  private readonly retryAfter: number;
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly servers = new Map<string, ServerTransaction>();
  private readonly pending2xx = new Map<string, Pending2xx>();
  readonly tu: TransactionUser;

  constructor(
    readonly transport: SipSender,
    tu: TransactionUser,
    options: TransactionLayerOptions = {},
  ) {
    this.tu = tu;
    this.timers = { ...DEFAULT_TIMERS, ...options.timers };
    this.maxTransactions = options.maxTransactions ?? 10_000;
    this.retryAfter = options.retryAfter ?? 5;
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
    if (!request.has('via')) this.addVia(request, destination.transport, destination.listener, destination.connection);
    const via = request.topVia();
    if (!via?.branch) throw new Error('request without a Via branch');
    const key = clientKey(via.branch, request.method);
    if (this.clients.has(key)) throw new Error('a client transaction with this branch exists');
    this.#setMaxForwards(request);
    const tx = new ClientTransaction(this, key, request, destination, handlers);
    this.clients.set(key, tx);
    tx.start();
    return tx;
  }

  /** Sends an ACK for a 2xx (or any request outside a transaction). */
  async sendAck(ack: SipRequest, destination: Destination): Promise<void> {
    if (!ack.has('via')) this.addVia(ack, destination.transport, destination.listener, destination.connection);
    this.#setMaxForwards(ack);
    await this.transport.send(ack, destination);
  }

  /**
   * Max-Forwards of every request sent (pjsip.conf global `max_forwards`): when set it replaces
   * whatever the request was written with, as Asterisk adds it as a global request header;
   * undefined: 70 where the request names none.
   */
  maxForwards: number | undefined;

  /** Whether the Via of each request asks for rport (RFC 3581); pjsip.conf system `disable_rport=yes` turns it off. */
  rport = true;

  #setMaxForwards(request: SipRequest): void {
    if (this.maxForwards !== undefined) request.set('Max-Forwards', String(this.maxForwards));
    else if (!request.has('max-forwards')) request.set('Max-Forwards', '70');
  }

  /**
   * Adds a top Via for this host with a new branch and an rport request. Over another server's
   * connection (foreign-flow.ts) the Via names that server's address: the peer sees one peer on it.
   */
  addVia(request: SipRequest, transport: Destination['transport'], listener?: string, connection?: TcpConnection): void {
    const local = isForeignFlow(connection) ? connection.advertised : this.transport.localAddress(transport, listener);
    request.prepend('Via', formatVia({ protocol: 'SIP/2.0', transport, host: local.host, port: local.port, params: new Map<string, string | null>(this.rport ? [['branch', newBranch()], ['rport', null]] : [['branch', newBranch()]]) }));
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
    // As a transaction's timers: the ACK that arrived during a stall of this process is read first.
    const tick = (): void => void setImmediate(() => timer !== undefined && retransmit());
    const retransmit = (): void => {
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

  /** A message from the transport (its onMessage handler; see openSipStack in ../stack.ts). */
  receive(message: SipMessage, source: Source): void {
    if (message.isRequest()) this.receiveRequest(message, source);
    else this.receiveResponse(message as SipResponse, source);
  }

  private receiveResponse(response: SipResponse, source: Source): void {
    const via = response.topVia();
    const cseq = response.cseq();
    const tx = via?.branch && cseq ? this.clients.get(clientKey(via.branch, cseq.method)) : undefined;
    if (tx) tx.receive(response, source);
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
      // §9.2: the 200 to the CANCEL carries the To tag of the INVITE's responses (the 487's), so
      // the canceller sees one dialog; the INVITE's tag is chosen now when nothing was sent yet.
      if (invite) tx.toTag = invite.ensureTag();
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

  /** A TCP connection closed: transactions bound to it fail (the transport's onConnectionClosed). */
  connectionClosed(connection: TcpConnection): void {
    for (const tx of [...this.clients.values()]) {
      if ((tx.connection ?? tx.destination.connection) === connection && (tx.state === 'calling' || tx.state === 'trying' || tx.state === 'proceeding')) tx.transportError(new Error('connection closed'));
    }
  }
}
