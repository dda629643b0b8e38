// Reliable provisional responses (RFC 3262). As UAS: a 1xx sent reliably carries `Require: 100rel`
// and an `RSeq`, is retransmitted (T1 doubling, over UDP) until its PRACK arrives and given up after
// 64*T1; one is outstanding at a time (the next waits), and a 2xx waits until all are acknowledged
// (§3). As UAC: which reliable 1xx to PRACK (each RSeq once, in order, §4) and the RAck that says so.
import { hasOptionTag, TAG_100REL } from './extensions.ts';
import type { SipRequest, SipResponse } from './message.ts';
import type { ServerTransaction } from './transaction/index.ts';

/** Asterisk's `100rel`: no, yes (when the peer requires it), peer_supported (when it supports it), required. */
export type ReliableProvisionalMode = 'no' | 'yes' | 'peer_supported' | 'required';

export type ReliableProvisionalDecision =
  /** 420 Bad Extension with `Unsupported: 100rel`: the caller requires it and the endpoint does not do it. */
  | { readonly kind: 'bad-extension' }
  /** 421 Extension Required with `Require: 100rel`: the endpoint requires it and the caller does not support it. */
  | { readonly kind: 'extension-required' }
  | { readonly kind: 'reliable' }
  | { readonly kind: 'unreliable' };

/** Whether an INVITE's provisional responses go reliably, under the endpoint's `100rel`. */
export function uasReliability(invite: SipRequest, mode: ReliableProvisionalMode): ReliableProvisionalDecision {
  const required = hasOptionTag(invite, 'require', TAG_100REL);
  const supported = required || hasOptionTag(invite, 'supported', TAG_100REL);
  if (mode === 'no') return required ? { kind: 'bad-extension' } : { kind: 'unreliable' };
  if (mode === 'required') return supported ? { kind: 'reliable' } : { kind: 'extension-required' };
  if (mode === 'peer_supported') return supported ? { kind: 'reliable' } : { kind: 'unreliable' };
  return required ? { kind: 'reliable' } : { kind: 'unreliable' };
}

/** RSeq and CSeq numbers stay below 2**31 (RFC 3262 §3). */
const MAX_RSEQ = 0x7fffffff;
/** Provisionals waiting behind an unacknowledged one, at most (later ones replace the last). */
const MAX_QUEUED = 4;

export interface ReliableTimers {
  readonly t1: number;
}

/** The UAS side for one INVITE server transaction. */
export class ReliableProvisionalSender {
  #rseq = 1 + Math.floor(Math.random() * 0x7fff);
  #outstanding: { response: SipResponse; rseq: number; timer: NodeJS.Timeout | undefined; giveUp: NodeJS.Timeout } | undefined;
  readonly #queue: SipResponse[] = [];
  #closed = false;
  /** Every reliable provisional sent so far was acknowledged: a waiting 2xx may go. */
  onAcknowledged: (() => void) | undefined;
  /** A reliable provisional was never PRACKed within 64*T1: the INVITE is to be refused (5xx, §3). */
  onTimeout: (() => void) | undefined;

  constructor(
    private readonly tx: ServerTransaction,
    private readonly timers: ReliableTimers,
  ) {}

  /** Whether a reliable provisional waits for its PRACK (a 2xx must wait too). */
  get pending(): boolean {
    return this.#outstanding !== undefined || this.#queue.length > 0;
  }

  /** Sends `response` (a 101–199) reliably, or after the outstanding one is acknowledged. */
  send(response: SipResponse): void {
    if (this.#closed || response.status <= 100 || response.status >= 200) return;
    if (this.#outstanding) {
      if (this.#queue.length >= MAX_QUEUED) this.#queue.pop();
      this.#queue.push(response);
      return;
    }
    if (this.#rseq >= MAX_RSEQ) return;
    const rseq = this.#rseq++;
    response.set('Require', TAG_100REL);
    response.set('RSeq', String(rseq));
    this.tx.respond(response);
    const t1 = this.timers.t1;
    const giveUp = setTimeout(() => {
      this.close();
      this.onTimeout?.();
    }, 64 * t1);
    giveUp.unref();
    this.#outstanding = { response, rseq, timer: undefined, giveUp };
    // Over a reliable transport the response is not lost: only UDP retransmits (RFC 3262 §3, as RFC 3261 §17.2.1).
    if (this.tx.source.transport === 'UDP') this.#retransmit(t1);
  }

  #retransmit(interval: number): void {
    const outstanding = this.#outstanding;
    if (!outstanding) return;
    outstanding.timer = setTimeout(() => {
      if (this.#outstanding !== outstanding || this.#closed) return;
      this.tx.respond(outstanding.response);
      this.#retransmit(interval * 2);
    }, interval);
    outstanding.timer.unref();
  }

  /**
   * A PRACK arrived: true when its RAck (`rseq cseq method`) acknowledges the outstanding response (answer
   * it 200), false otherwise (answer 481, §7.2 of RFC 3262's PRACK handling).
   */
  acknowledge(prack: SipRequest): boolean {
    const outstanding = this.#outstanding;
    const rack = /^\s*(\d{1,10})\s+(\d{1,10})\s+([A-Za-z]{1,32})\s*$/.exec(prack.get('rack') ?? '');
    const cseq = this.tx.request.cseq();
    if (!outstanding || !rack || !cseq) return false;
    if (Number(rack[1]) !== outstanding.rseq || Number(rack[2]) !== cseq.seq || rack[3].toUpperCase() !== 'INVITE') return false;
    clearTimeout(outstanding.timer);
    clearTimeout(outstanding.giveUp);
    this.#outstanding = undefined;
    const next = this.#queue.shift();
    if (next) this.send(next);
    else this.onAcknowledged?.();
    return true;
  }

  /** Stops retransmitting (a final response was sent, or the call ended). */
  close(): void {
    this.#closed = true;
    if (this.#outstanding) {
      clearTimeout(this.#outstanding.timer);
      clearTimeout(this.#outstanding.giveUp);
    }
    this.#outstanding = undefined;
    this.#queue.length = 0;
  }
}

/** The UAC side: which reliable provisionals of one INVITE to PRACK. */
export class ReliableProvisionalReceiver {
  #lastRseq: number | undefined;

  /**
   * The RAck value to PRACK `response` with, or undefined: not a reliable provisional, a
   * retransmission of one already PRACKed, or one out of order (RSeq not the next), which are discarded.
   */
  rackFor(response: SipResponse): string | undefined {
    if (response.status <= 100 || response.status >= 200 || !hasOptionTag(response, 'require', TAG_100REL)) return undefined;
    const rseqText = /^\s*(\d{1,10})\s*$/.exec(response.get('rseq') ?? '')?.[1];
    const cseq = response.cseq();
    if (rseqText === undefined || !cseq || cseq.method !== 'INVITE') return undefined;
    const rseq = Number(rseqText);
    if (rseq < 1 || rseq > MAX_RSEQ) return undefined;
    if (this.#lastRseq !== undefined && rseq !== this.#lastRseq + 1) return undefined;
    this.#lastRseq = rseq;
    return `${rseq} ${cseq.seq} INVITE`;
  }
}
