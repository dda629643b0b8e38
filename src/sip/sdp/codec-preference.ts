// How two codec lists become the one written in an SDP, as Asterisk's endpoint options describe it
// (incoming_call_offer_pref / outgoing_call_offer_pref and their codec_prefs_* successors): whose
// order wins, whether codecs only one side has are kept, and whether only the first survives.
import { isSdpCodec, type SdpCodec } from './offer-answer.ts';

export interface CodecPreference {
  /**
   * Whose order wins. `remote` is the other side's list: the offer we answer, or, for an offer we
   * make, the codecs of the channel that asked for the call; `local` is the endpoint's `allow`.
   */
  readonly prefer: 'remote' | 'local';
  /** `intersect`: only codecs both lists have; `union`: every local codec too (offers only: an answer cannot add codecs). */
  readonly operation: 'intersect' | 'union';
  /** `first`: only the most preferred codec is kept. */
  readonly keep: 'all' | 'first';
}

/** Answering an offer: the offer's order, every common codec (codec_prefs_incoming_offer's default, `prefer: pending`). */
export const DEFAULT_ANSWER_PREFERENCE: CodecPreference = { prefer: 'remote', operation: 'intersect', keep: 'all' };
/** Making an offer: every local codec, the calling channel's codecs first (outgoing_call_offer_pref's default, `remote_merge`). */
export const DEFAULT_OFFER_PREFERENCE: CodecPreference = { prefer: 'remote', operation: 'union', keep: 'all' };

/**
 * The codecs to offer: `local` (the endpoint's allow) combined with `remote` (what the calling side
 * has) as `preference` says. Remote codecs the endpoint does not allow are never offered. With no
 * remote codecs (a call not made on behalf of a channel), or none in common with an `intersect`, the
 * local list is offered: the media engine transcodes, so a call can always be offered.
 */
export function offerCodecs(local: readonly SdpCodec[], remote: readonly string[], preference: CodecPreference): SdpCodec[] {
  const ours = [...new Set(local)];
  const theirs = [...new Set(remote.filter((name): name is SdpCodec => isSdpCodec(name) && ours.includes(name)))];
  let list: SdpCodec[];
  if (theirs.length === 0) list = ours;
  else if (preference.operation === 'intersect') list = preference.prefer === 'local' ? ours.filter((codec) => theirs.includes(codec)) : theirs;
  else list = preference.prefer === 'local' ? ours : [...theirs, ...ours.filter((codec) => !theirs.includes(codec))];
  return preference.keep === 'first' ? list.slice(0, 1) : list;
}
