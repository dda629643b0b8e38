// The endpoint options of res_pjsip that shape the SDP body as a whole and the RTP socket behind it:
// the o= user and s= line (sdp_owner, sdp_session), how many streams of a kind are accepted
// (max_audio_streams, max_video_streams), whether the sending codec may differ from the received one
// (asymmetric_rtp_codec), where the socket binds (bind_rtp_to_media_address), and the two Patchbay
// parses but does not act on (media_use_received_transport, rtp_ipv6). Kept beside declarations.ts
// so the endpoint's other rows stay as they were.
import { bool, custom, int } from './options.ts';
import { parseBool, shown } from './values.ts';

export interface MediaEndpointOptions {
  /** o= user name of our SDP (`-` as Asterisk). */
  readonly sdpOwner: string;
  /** s= line of our SDP. */
  readonly sdpSession: string;
  /** Audio m= lines accepted in an offer (Patchbay carries one: more are declined with port 0 whatever it says). */
  readonly maxAudioStreams: number;
  /** Video m= lines accepted (Patchbay carries no video: every one is declined with port 0). */
  readonly maxVideoStreams: number;
  /** Whether the codec sent may differ from the one received (Patchbay always sends the answer's first). */
  readonly asymmetricRtpCodec: boolean;
  /** The call's RTP socket binds to `media_address` rather than the SIP bind address. */
  readonly bindRtpToMediaAddress: boolean;
  readonly mediaUseReceivedTransport: boolean;
  readonly rtpIpv6: boolean;
}

/** Patchbay's s= is its own name, as its User-Agent is (Asterisk writes `Asterisk`). */
export const DEFAULT_SDP_SESSION = 'Patchbay';

export const MEDIA_DEFAULTS: MediaEndpointOptions = {
  sdpOwner: '-',
  sdpSession: DEFAULT_SDP_SESSION,
  maxAudioStreams: 1,
  maxVideoStreams: 1,
  asymmetricRtpCodec: false,
  bindRtpToMediaAddress: false,
  mediaUseReceivedTransport: false,
  rtpIpv6: false,
};

/** An SDP o= user or s= text: bounded, no control characters (they would break the body). */
const MAX_SDP_TEXT = 128;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

const sdpText = (field: 'sdpOwner' | 'sdpSession', fallback: string, spaces: boolean, doc: string) =>
  custom<{ sdpOwner: string; sdpSession: string }>({ default: fallback, doc }, (draft, value, report) => {
    const text = value.trim();
    if (text.length > MAX_SDP_TEXT || CONTROL.test(text)) return report.fail(`${shown(value)} is not SDP text (at most ${MAX_SDP_TEXT} printable characters)`);
    if (!spaces && /\s/.test(text)) return report.fail(`${shown(value)} has a space: the o= user name is one word (RFC 8866 §5.2)`);
    draft[field] = text === '' ? fallback : text;
  });

/** A stream count, with a warning when it asks for more streams than Patchbay carries. */
const streamCount = (field: 'maxAudioStreams' | 'maxVideoStreams', carried: number, doc: string) =>
  custom<{ maxAudioStreams: number; maxVideoStreams: number }>({ default: '1', doc }, (draft, value, report) => {
    const text = value.trim();
    if (!/^\d{1,10}$/.test(text) || Number(text) > 0xffffffff) return report.fail(`${shown(value)} is not a count (0 to 4294967295)`);
    const count = Number(text);
    draft[field] = count;
    if (count > carried) {
      const kind = field === 'maxAudioStreams' ? 'audio' : 'video';
      report.warn(`${field === 'maxAudioStreams' ? 'max_audio_streams' : 'max_video_streams'}=${count}: Patchbay carries ${carried === 0 ? 'no' : carried} ${kind} stream${carried === 1 ? '' : 's'}; further ${kind} lines of an offer are declined with port 0`);
    }
  });

export const MEDIA_ENDPOINT_OPTIONS = {
  sdp_owner: sdpText('sdpOwner', '-', false, 'User name of the `o=` line of our SDP (one word).'),
  sdp_session: sdpText(
    'sdpSession',
    DEFAULT_SDP_SESSION,
    true,
    'The `s=` line of our SDP. Patchbay\'s default is `Patchbay` (Asterisk\'s `Asterisk`), as its User-Agent.',
  ),
  asymmetric_rtp_codec: custom<{ asymmetricRtpCodec: boolean }>(
    {
      default: 'no',
      doc: '`no`: the call sends one codec, the answer\'s first, whatever the far end sends of the others the answer lists (decoded all the same). `yes` (send another codec than received) is named at start-up as not implemented.',
    },
    (draft, value, report) => {
      const parsed = parseBool(value);
      if (!parsed.ok) return report.fail(parsed.error);
      draft.asymmetricRtpCodec = parsed.value;
      if (parsed.value) report.warn('asymmetric_rtp_codec=yes is not implemented by Patchbay: its calls send the codec the offer/answer put first, transcoding what the other party sends');
    },
  ),
  max_audio_streams: streamCount(
    'maxAudioStreams',
    1,
    'Audio streams accepted from an offer: the first usable audio line is answered, every other declined with port 0 (RFC 3264 §6). Patchbay carries one audio stream: a value above 1 is named at start-up and acts as 1.',
  ),
  max_video_streams: streamCount(
    'maxVideoStreams',
    0,
    'Video streams accepted from an offer. Patchbay carries no video: every video line is declined with port 0 whatever the value; a value above 0 is named at start-up.',
  ),
  bind_rtp_to_media_address: bool('bindRtpToMediaAddress', {
    default: 'no',
    doc: 'The RTP and RTCP sockets of the endpoint\'s calls bind to its `media_address` instead of the SIP bind address, so media leaves from the address the SDP names. It must be an address of this host: otherwise no socket binds and the endpoint\'s calls fail, as in Asterisk.',
  }),
  media_use_received_transport: bool('mediaUseReceivedTransport', {
    default: 'no',
    implemented: false,
    doc: 'Answer with the offer\'s RTP profile whatever media_encryption says. Not implemented: the answer\'s profile is the one the media really runs (RTP/AVP, RTP/SAVP with SDES, the DTLS ones for WebRTC).',
  }),
  rtp_ipv6: bool('rtpIpv6', {
    default: 'no',
    implemented: false,
    doc: 'RTP on IPv6 when no media_address is set. Not implemented: the RTP sockets bind to the SIP bind address (IPv6 when that is, or when `media_address` is IPv6 with bind_rtp_to_media_address).',
  }),
};
