// REFER (RFC 3515) for the SIP technology, both ways:
// - out of a call, sent (ARI `refer`/`referToEndpoint`): the REFER's implicit subscription gets
//   NOTIFYs from the far end; ReferSubscriptions remembers their Call-IDs (bounded, for a while)
//   so that those NOTIFYs are answered 200 instead of 481.
// - on a call, received: the transfer is the application's (as Asterisk with
//   PJSIP_TRANSFER_HANDLING(ari-only)): ChannelTransfer is raised and the REFER accepted with 202;
//   ARI transfer_progress turns into NOTIFYs with the sipfrag status (100, 200, 503, 603; the
//   "100 Trying" held back until the first, as refer-progress.ts) and a ChannelTransfer carrying
//   the state.
import type { Channel } from '../../core/channels/channel.ts';
import type { TransferProgressState, TransferRequest } from '../../core/channels/technology.ts';
import type { SipRequest } from '../../sip/message.ts';
import { parseNameAddr, type SipUri } from '../../sip/uri.ts';
import type { ReferProgress } from './refer-progress.ts';

/** Outgoing REFER subscriptions remembered at most, and for how long. */
const MAX_SUBSCRIPTIONS = 1024;
const SUBSCRIPTION_MS = 180_000;

export class ReferSubscriptions {
  readonly #expiry = new Map<string, number>();

  add(callId: string): void {
    this.#sweep();
    if (this.#expiry.size >= MAX_SUBSCRIPTIONS) {
      const oldest = this.#expiry.keys().next().value;
      if (oldest !== undefined) this.#expiry.delete(oldest);
    }
    this.#expiry.set(callId, Date.now() + SUBSCRIPTION_MS);
  }

  /** Whether a NOTIFY with this Call-ID belongs to a REFER we sent; a terminated one is forgotten. */
  notify(callId: string, subscriptionState: string | undefined): boolean {
    const expiresAt = this.#expiry.get(callId);
    if (expiresAt === undefined || expiresAt < Date.now()) return false;
    if (/^\s*terminated/i.test(subscriptionState ?? '')) this.#expiry.delete(callId);
    return true;
  }

  forget(callId: string): void {
    this.#expiry.delete(callId);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [callId, expiresAt] of this.#expiry) {
      if (expiresAt >= now) break; // insertion order is expiry order
      this.#expiry.delete(callId);
    }
  }
}

/** The Refer-To of a REFER: its URI and, for an attended transfer, the Replaces parts. */
export interface ParsedReferTo {
  readonly uri: SipUri;
  readonly destination: string;
  readonly replaces?: ReplacesValue;
}

/** Parses Refer-To (`r`); undefined when absent or not a SIP URI. */
export function parseReferTo(request: SipRequest): ParsedReferTo | undefined {
  const value = request.get('refer-to') ?? request.get('r');
  if (value === undefined || value.length > 2048) return undefined;
  const trimmed = value.trim();
  const parsed = parseNameAddr(trimmed.startsWith('<') || trimmed.includes('"') ? trimmed : `<${trimmed}>`);
  if (!parsed || parsed.uri.kind !== 'sip') return undefined;
  const uri = parsed.uri;
  let replaces: ParsedReferTo['replaces'];
  const raw = [...uri.headers].find(([name]) => name.toLowerCase() === 'replaces')?.[1];
  if (raw !== undefined) {
    let text: string;
    try {
      text = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    replaces = parseReplaces(text);
    // A Replaces that is no Replaces header: 400, as res_pjsip_refer (not a blind transfer).
    if (!replaces) return undefined;
  }
  // The user part, without user options (`200;phone-context=…`), as Asterisk matches it.
  const destination = (uri.user ?? '').split(';')[0] ?? '';
  return { uri, destination, ...(replaces ? { replaces } : {}) };
}

/** What a Replaces header (RFC 3891) names: a dialog, and whether only an early one may be replaced. */
export interface ReplacesValue {
  readonly callId: string;
  readonly toTag?: string;
  readonly fromTag?: string;
  readonly earlyOnly?: boolean;
}

/** `call-id;to-tag=…;from-tag=…[;early-only]`; undefined without a Call-ID or beyond 1024 bytes. */
export function parseReplaces(text: string): ReplacesValue | undefined {
  if (text.length > 1024) return undefined;
  const [callId, ...params] = text.split(';');
  if (!callId || callId.trim() === '') return undefined;
  const param = (name: string) => params.find((item) => item.trim().toLowerCase().startsWith(`${name}=`))?.split('=')[1]?.trim();
  const toTag = param('to-tag');
  const fromTag = param('from-tag');
  const earlyOnly = params.some((item) => item.trim().toLowerCase() === 'early-only');
  return { callId: callId.trim(), ...(toTag ? { toTag } : {}), ...(fromTag ? { fromTag } : {}), ...(earlyOnly ? { earlyOnly } : {}) };
}

/**
 * A Replaces as pjsip prints the header's value (SIPREPLACESHDR): the Call-ID, `to-tag`, `from-tag`,
 * then `early-only`; a tag the REFER did not give is left out.
 */
export function formatReplaces(replaces: ReplacesValue): string {
  let text = replaces.callId;
  if (replaces.toTag !== undefined) text += `;to-tag=${replaces.toTag}`;
  if (replaces.fromTag !== undefined) text += `;from-tag=${replaces.fromTag}`;
  return replaces.earlyOnly ? `${text};early-only` : text;
}

/**
 * The sipfrag status each transfer_progress state reports, and whether the subscription ends: as
 * res_pjsip_refer's ari-only frame hook (progress 100, success 200, unavailable 503, failed 603).
 */
export const SIPFRAG: Readonly<Record<TransferProgressState, { status: number; final: boolean }>> = {
  channel_progress: { status: 100, final: false },
  channel_answered: { status: 200, final: true },
  channel_unavailable: { status: 503, final: true },
  channel_declined: { status: 603, final: true },
};

/** A transfer received on a call, handled by the application. */
export class IncomingTransfer {
  done = false;

  constructor(
    readonly channel: Channel,
    readonly request: Omit<TransferRequest, 'state'>,
    /** The REFER's subscription; undefined when it said `Refer-Sub: false` (no NOTIFYs). */
    readonly progress: ReferProgress | undefined,
  ) {}
}
