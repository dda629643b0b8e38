// The endpoint options of a call's RTP stream beyond its address and encryption, as
// res_pjsip_sdp_rtp reads them: the silence allowed while the call is held (rtp_timeout_hold), the
// keepalive on an idle stream (rtp_keepalive), and how our SDP answer is shaped
// (preferred_codec_only, use_ptime). Kept beside declarations.ts so the endpoint's other options
// stay as they were.
import { bool, int } from './options.ts';

export interface RtpEndpointOptions {
  /** Seconds without RTP while the far end holds the call before hanging up; 0 = never. */
  readonly rtpTimeoutHold: number;
  /** Seconds of nothing sent on the stream before a keepalive packet goes; 0 = none. */
  readonly rtpKeepalive: number;
  /** Our SDP answer names only the first codec we would choose (plus telephone-event). */
  readonly preferredCodecOnly: boolean;
  /** Our SDP answer carries the offer's a=ptime, and our packets that many milliseconds. */
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
  rtp_keepalive: int('rtpKeepalive', 0, 86_400, {
    default: '0',
    doc: 'When nothing was sent on a call\'s RTP stream for this many seconds (silence, a hold), one comfort-noise packet (payload type 13, level -127 dBov) goes to the far end, as res_rtp_asterisk\'s keepalive. 0: none.',
  }),
};
