// The endpoint options of a call's RTP stream beyond its address and encryption, as
// res_pjsip_sdp_rtp reads them: the silence allowed while the call is held (rtp_timeout_hold), the
// keepalive on an idle stream (rtp_keepalive), and how our SDP answer is shaped
// (preferred_codec_only, use_ptime). Kept beside declarations.ts so the endpoint's other options
// stay as they were.
import { bool, custom, int } from './options.ts';
import { parseBool } from './values.ts';

export interface RtpEndpointOptions {
  /** Seconds without RTP while the far end holds the call before hanging up; 0 = never. */
  readonly rtpTimeoutHold: number;
  /** Seconds of nothing sent on the stream before a keepalive packet goes; 0 = none. */
  readonly rtpKeepalive: number;
  /** Our SDP answer names only the first codec of `allow` the offer has (plus telephone-event): incoming_call_offer_pref local_first. */
  readonly preferredCodecOnly: boolean;
  /** Our SDP answer carries the offer's a=ptime rather than our own 20 (the packets we send stay 20 ms). */
  readonly usePtime: boolean;
}

export const RTP_DEFAULTS: RtpEndpointOptions = {
  rtpTimeoutHold: 0,
  rtpKeepalive: 0,
  preferredCodecOnly: false,
  usePtime: false,
};

export const RTP_ENDPOINT_OPTIONS = {
  rtp_timeout_hold: int('rtpTimeoutHold', 0, 86_400, {
    default: '0',
    doc: 'Hang up an answered call after this many seconds without RTP from the far end while it holds the call (sendonly or inactive); cause 44, as `rtp_timeout`. 0: a held call is never hung up for silence.',
  }),
  preferred_codec_only: bool('preferredCodecOnly', {
    default: 'no',
    doc: 'The answer to an incoming offer names only the first codec of `allow` the offer has (with telephone-event), as incoming_call_offer_pref `local_first`, which it sets; an endpoint that also sets another incoming_call_offer_pref (or codec_prefs_incoming_offer) is refused, as Asterisk refuses it.',
  }),
  use_ptime: custom<{ usePtime: boolean }>(
    {
      default: 'no',
      doc: 'The answer to an offer with `a=ptime` carries the offer\'s ptime; `no`: our own (20), as Asterisk writes its framing. Patchbay sends 20 ms packets either way (it receives any ptime): with `yes` that is named at start-up.',
    },
    (draft, value, report) => {
      const parsed = parseBool(value);
      if (!parsed.ok) return report.fail(parsed.error);
      draft.usePtime = parsed.value;
      if (parsed.value) report.warn('use_ptime=yes: the answer carries the offer\'s a=ptime, but Patchbay\'s packets stay 20 ms (re-packetising to the offer\'s ptime is not implemented)');
    },
  ),
  rtp_keepalive: int('rtpKeepalive', 0, 86_400, {
    default: '0',
    doc: 'When nothing was sent on a call\'s RTP stream for this many seconds (silence, a hold), one comfort-noise packet (payload type 13, level -127 dBov) goes to the far end, as res_rtp_asterisk\'s keepalive. 0: none.',
  }),
};

/**
 * preferred_codec_only, as res_pjsip applies it when the endpoint is loaded: the answer's codecs
 * become local_first; beside another incoming preference the endpoint is refused (the message), for
 * Asterisk accepts it only beside its default (`local`, every common codec). Patchbay's default
 * (`remote`) stands for Asterisk's here: an Asterisk configuration that sets none must load.
 */
export function preferredCodecOnlyConflict(endpoint: {
  readonly preferredCodecOnly: boolean;
  readonly incomingCallOfferPref: string;
  readonly codecPrefsIncomingOffer?: { readonly prefer: string; readonly operation: string; readonly keep: string };
}): string | undefined {
  if (!endpoint.preferredCodecOnly) return undefined;
  const prefs = endpoint.codecPrefsIncomingOffer;
  const prefsDefault = prefs === undefined || (prefs.prefer === 'local' && prefs.operation === 'intersect' && prefs.keep === 'all');
  if (prefsDefault && (endpoint.incomingCallOfferPref === 'remote' || endpoint.incomingCallOfferPref === 'local')) return undefined;
  return 'preferred_codec_only cannot be set with another incoming_call_offer_pref or codec_prefs_incoming_offer than local (Asterisk refuses the endpoint)';
}
