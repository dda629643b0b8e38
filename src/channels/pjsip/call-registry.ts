// The live SIP calls, found by dialog (RFC 3261 §12): Call-ID, local tag and remote tag, an early
// dialog by Call-ID and the remote tag of a provisional response (SipCall.matches). One Call-ID may
// carry several calls of ours: when Patchbay calls itself (an endpoint whose contact is its own
// address) the outbound leg and the inbound one share the Call-ID with the tags swapped, and a
// forking proxy may bring a call we placed back to us. So calls are grouped by Call-ID and told
// apart by their tags, never by the Call-ID alone.
// Loops are still refused where RFC 3261 §8.2.2.2 says: a new INVITE (no To tag) with the Call-ID,
// From tag and CSeq of an INVITE we are serving is the same request reaching us twice (a merged
// request, through a forking proxy or a loop), answered 482.
import type { Dialog } from '../../sip/dialog.ts';
import type { SipRequest } from '../../sip/message.ts';
import type { ReplacesValue } from './refer.ts';

/** What the registry reads of a call (SipCall's members). */
export interface RegisteredCall {
  readonly callId: string;
  readonly dialog: Dialog | undefined;
  readonly ended: boolean;
  /** The INVITE that created an inbound call; undefined for an outbound one. */
  readonly inboundInvite: SipRequest | undefined;
  /** Whether a request with a To tag is of this call's dialog or one of its early dialogs. */
  matches(request: SipRequest): boolean;
}

/**
 * Calls sharing one Call-ID, at most: a self-call makes two, a proxy forking back to us a few more;
 * beyond that it is a loop or a flood, and a peer's Call-ID must not make each lookup a long scan.
 */
export const MAX_CALLS_PER_CALL_ID = 16;

export class CallRegistry<Call extends RegisteredCall> {
  readonly #byCallId = new Map<string, Call[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Every live call, each once. */
  *values(): IterableIterator<Call> {
    for (const legs of this.#byCallId.values()) yield* legs;
  }

  /** The calls with this Call-ID (none: an empty list). */
  withCallId(callId: string): readonly Call[] {
    return this.#byCallId.get(callId) ?? [];
  }

  /** Adds a call; false when its Call-ID already has MAX_CALLS_PER_CALL_ID calls (then it is not added). */
  add(call: Call): boolean {
    const legs = this.#byCallId.get(call.callId);
    if (!legs) this.#byCallId.set(call.callId, [call]);
    else if (legs.includes(call)) return true;
    else if (legs.length >= MAX_CALLS_PER_CALL_ID) return false;
    else legs.push(call);
    this.#size += 1;
    return true;
  }

  /** Forgets this call (not another one with its Call-ID). */
  delete(call: Call): void {
    const legs = this.#byCallId.get(call.callId);
    const index = legs ? legs.indexOf(call) : -1;
    if (!legs || index < 0) return;
    legs.splice(index, 1);
    this.#size -= 1;
    if (legs.length === 0) this.#byCallId.delete(call.callId);
  }

  clear(): void {
    this.#byCallId.clear();
    this.#size = 0;
  }

  /** The call whose dialog (confirmed or early) a request with a To tag belongs to. */
  inDialog(request: SipRequest): Call | undefined {
    return this.withCallId(request.callId() ?? '').find((call) => call.matches(request));
  }

  /**
   * Whether an INVITE without a To tag is a loop to answer 482: a merged request (§8.2.2.2), that
   * is one of our inbound calls was created by an INVITE with the same Call-ID, From tag and CSeq
   * number (retransmissions never get here, the transaction layer absorbs them, so this is the
   * request arriving by a second path); or its Call-ID has as many calls as it may.
   */
  isLoop(request: SipRequest): boolean {
    const fromTag = request.fromTag();
    const seq = request.cseq()?.seq;
    const legs = this.withCallId(request.callId() ?? '');
    return legs.length >= MAX_CALLS_PER_CALL_ID || legs.some((call) => {
      const invite = call.inboundInvite;
      return invite !== undefined && invite.fromTag() === fromTag && invite.cseq()?.seq === seq;
    });
  }

  /**
   * The call a Replaces value names (RFC 3891 §3): its Call-ID, our tag as to-tag and the far end's
   * as from-tag, in a dialog that exists (an early one for an inbound call we answered nothing to
   * yet has no dialog to name). A tag the value leaves out is not compared.
   */
  replaced(replaces: ReplacesValue): Call | undefined {
    return this.withCallId(replaces.callId).find((call) => {
      const dialog = call.dialog;
      if (!dialog || call.ended) return false;
      if (replaces.toTag !== undefined && replaces.toTag !== dialog.localTag) return false;
      return replaces.fromTag === undefined || replaces.fromTag === dialog.remoteTag;
    });
  }
}
