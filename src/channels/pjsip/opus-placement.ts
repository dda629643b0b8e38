// Whether a SIP call's stream may end up coding Opus, decided when the stream opens (before the
// offer/answer completes). Media workers code Opus with libopus's WebAssembly build, the main thread
// with the native addon (src/media/workers/pool.ts says why), so with media.worker_opus off a call
// that may agree on Opus keeps its stream on the main thread — and only such a call: an endpoint
// that merely allows Opus is not enough when the caller's offer is already here and lists no Opus.
import { readSdp } from '../../sip/sdp/index.ts';

/** What the placement needs to know of a call. */
export interface OpusPlacementCall {
  /** The endpoint's codecs (allow). */
  readonly codecs: readonly string[];
  /** An inbound call's INVITE body (empty for a late offer); undefined for an outbound call, which offers first. */
  readonly inboundOffer: Uint8Array | undefined;
}

/**
 * False only when Opus cannot be agreed: the endpoint does not allow it, or an inbound offer is
 * here and none of its audio lines maps a payload type to Opus. An outbound call (our offer lists
 * every allowed codec), a late offer, or an offer we cannot read (the answer will refuse it anyway)
 * may agree on Opus. A later re-INVITE may still bring Opus in: a worker codes it then, as a worker
 * codes any codec, only at the WebAssembly cost.
 */
export function mayAgreeOnOpus(call: OpusPlacementCall): boolean {
  if (!call.codecs.includes('opus')) return false;
  const offer = call.inboundOffer;
  if (offer === undefined || offer.length === 0) return true;
  const read = readSdp(offer);
  if (!read.ok) return true;
  return read.session.media.some((media) => media.type === 'audio' && [...media.rtpmap.values()].some((map) => map.encoding.toUpperCase() === 'OPUS'));
}
