// What every RFC 3261 §17 transaction shares: its state, its named timers, and what it needs of the
// layer that owns it (TransactionHost), so the client and server transactions depend on this file
// only and the layer on them — no file circle.
import type { SipRequest, SipResponse } from '../message.ts';
import type { SipSender, Source } from '../transport.ts';

export interface TimerSettings {
  /** RTT estimate (default 500 ms). */
  t1: number;
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses (default 4 s). */
  t2: number;
  /** Maximum time a message stays in the network (default 5 s). */
  t4: number;
  /** Timer D, wait time for response retransmits on UDP (default 32 s). */
  timerD: number;
  /**
   * Delay before an INVITE server transaction sends 100 Trying by itself when its TU sent nothing
   * (default 200 ms, RFC 3261 §17.2.1; -1: never). chan_pjsip's TU sends it at once for a new call.
   */
  trying: number;
  /** Longest an INVITE client transaction stays in Proceeding without a final response (default 180 s, like Timer C). */
  timerC: number;
  /** Timer B and F: how long a client transaction waits for a final response (default 64*T1; pjsip.conf system `timer_b`). */
  timerB?: number;
}

export const DEFAULT_TIMERS: TimerSettings = { t1: 500, t2: 4000, t4: 5000, timerD: 32000, trying: 200, timerC: 180_000 };

export type TransactionState = 'calling' | 'trying' | 'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated';



/** What a transaction needs of the layer that owns it. */
export interface TransactionHost {
  readonly timers: TimerSettings;
  readonly transport: SipSender;
  /** Forgets an ended transaction. */
  remove(tx: Transaction): void;
  retransmit2xx(response: SipResponse, source: Source, handlers?: { onAck?(ack: SipRequest): void; onTimeout?(): void }): Retransmission2xx;
}

/** The part of a client transaction another transaction sees (a CANCEL it started). */
export interface ClientTransactionLike {
  readonly state: TransactionState;
  terminate(): void;
}

/** A 2xx to INVITE being retransmitted until its ACK (§13.3.1.4). */
export interface Retransmission2xx {
  readonly key: string;
  stop(): void;
}

let nextId = 1;

export abstract class Transaction {
  readonly id = nextId++;
  state: TransactionState = 'trying';
  protected timers = new Map<string, NodeJS.Timeout>();
  constructor(
    protected readonly layer: TransactionHost,
    readonly key: string,
    readonly request: SipRequest,
    readonly reliable: boolean,
  ) {}

  get method(): string {
    return this.request.method;
  }

  protected startTimer(name: string, ms: number, fire: () => void): void {
    this.stopTimer(name);
    // Node runs due timers before it reads the sockets: after a stall of this process the response
    // that ends a retransmission (or beats a timeout) may sit unread, and firing at once would send
    // a needless retransmission (a peer then sees a NOTIFY twice). The timer fires after the reads.
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (this.timers.get(name) !== timer) return; // stopped or re-armed by what was read
        this.timers.delete(name);
        if (this.state !== 'terminated') fire();
      });
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
