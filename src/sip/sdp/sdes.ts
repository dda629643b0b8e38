// Which media encryption an offer/answer ends with, as chan_pjsip decides it (res_pjsip_sdp_rtp's
// check of the offered transport against the endpoint's media_encryption):
//   - an endpoint without SDES refuses RTP/SAVP (488) and ignores a=crypto on RTP/AVP (an
//     optimistic offer: the call goes on in the clear);
//   - media_encryption=sdes refuses plain RTP/AVP without a=crypto, takes the first offered line
//     whose suite it has, and answers in the offer's own profile (RTP/SAVP, or RTP/AVP for an
//     optimistic offer); no usable line refuses the stream;
//   - media_encryption_optimistic offers RTP/AVP with a=crypto and falls back to plain RTP when the
//     other side has no (usable) crypto.
// DTLS-SRTP (UDP/TLS/RTP/SAVP, media_encryption=dtls) is the WebRTC work's: a UDP/TLS line is
// refused here until it hooks in beside SDES.
import type { SrtpMasterKey } from '../../media/srtp/suites.ts';
import { cryptoLine, type SdpCryptoLine } from './crypto.ts';
import type { RemoteMedia } from './session.ts';

/** Our side of SDES (the endpoint's media_encryption=sdes). */
export interface LocalSdes {
  /** Our master key per suite, preferred first: an offer lists them as tags 1, 2, … */
  readonly keys: readonly SrtpMasterKey[];
  /** media_encryption_optimistic: offer RTP/AVP with a=crypto, and accept plain RTP. */
  readonly optimistic: boolean;
}

/** The SRTP keys a completed offer/answer agreed. */
export interface NegotiatedSrtp {
  /** Ours: what we protect with. */
  readonly local: SrtpMasterKey;
  /** The far end's: what we check and decrypt with. */
  readonly remote: SrtpMasterKey;
  readonly tag: number;
}

/** What our m= line says about encryption. */
export interface MediaSecurity {
  readonly protocol: string;
  readonly crypto?: SdpCryptoLine[];
}

export type SdesOutcome =
  | { readonly ok: true; readonly security: MediaSecurity; readonly srtp?: NegotiatedSrtp }
  | { readonly ok: false; readonly reason: string };

const PLAIN: MediaSecurity = { protocol: 'RTP/AVP' };

/** Profiles the stream can be carried in (the SRTP ones decided by the functions below). */
export function isRtpAudioProfile(protocol: string): boolean {
  return /^RTP\/S?AVP$/i.test(protocol);
}

const isSavp = (protocol: string): boolean => /^RTP\/SAVP$/i.test(protocol);

/** Our offer's profile and a=crypto lines. */
export function offerSecurity(sdes: LocalSdes | undefined): MediaSecurity {
  if (!sdes || sdes.keys.length === 0) return PLAIN;
  return { protocol: sdes.optimistic ? 'RTP/AVP' : 'RTP/SAVP', crypto: sdes.keys.map((key, index) => cryptoLine(index + 1, key)) };
}

/** Answering `media` (an offered audio line with codecs in common). */
export function answerSecurity(media: RemoteMedia, sdes: LocalSdes | undefined): SdesOutcome {
  const savp = isSavp(media.protocol);
  if (!sdes || sdes.keys.length === 0) {
    if (savp) return { ok: false, reason: 'RTP/SAVP offered to an endpoint without media_encryption' };
    return { ok: true, security: PLAIN };
  }
  if (!savp && !media.cryptoOffered) {
    if (sdes.optimistic) return { ok: true, security: PLAIN };
    return { ok: false, reason: 'plain RTP/AVP offered to an endpoint with media_encryption=sdes' };
  }
  for (const offered of media.crypto) {
    const local = sdes.keys.find((key) => key.suite === offered.key.suite);
    if (!local) continue;
    return {
      ok: true,
      // The offer's own profile: RTP/SAVP, or RTP/AVP for an optimistic offer (chan_pjsip keeps the received transport).
      security: { protocol: savp ? 'RTP/SAVP' : 'RTP/AVP', crypto: [cryptoLine(offered.tag, local)] },
      srtp: { local, remote: offered.key, tag: offered.tag },
    };
  }
  if (sdes.optimistic) return { ok: true, security: PLAIN };
  return { ok: false, reason: 'no a=crypto line with a supported suite and key' };
}

/** Reading the answer `media` to our offer made with `sdes`. */
export function acceptSecurity(media: RemoteMedia, sdes: LocalSdes | undefined): { ok: true; srtp?: NegotiatedSrtp } | { ok: false; reason: string } {
  const savp = isSavp(media.protocol);
  if (!sdes || sdes.keys.length === 0) return savp ? { ok: false, reason: 'RTP/SAVP answer to a plain offer' } : { ok: true };
  // The answer names the tag of the line it took; its suite must be that line's.
  for (const answered of media.crypto) {
    const local = sdes.keys[answered.tag - 1];
    if (local && local.suite === answered.key.suite) return { ok: true, srtp: { local, remote: answered.key, tag: answered.tag } };
  }
  if (sdes.optimistic && !savp) return { ok: true };
  return { ok: false, reason: 'the answer has no a=crypto line for one we offered' };
}
