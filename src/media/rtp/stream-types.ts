// What an RTP stream (stream.ts) is configured with and reports to: the parameters offer/answer
// agreed, the technology's media options, the events it raises, the media clock it ticks on, and
// the totals every stream of a technology adds to. Apart from stream.ts so that the media workers'
// protocol and remote streams can name them without the socket code.
import type dgram from 'node:dgram';
import type { Frame } from '../frame.ts';
import type { CoderOptions } from '../stream-coder.ts';
import type { MediaProtection } from './protection.ts';

export type StreamDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** What offer/answer agreed, as the stream needs it. */
export interface StreamParameters {
  /** `ulaw`, `alaw`, `g722` or `opus`. */
  readonly codec: string;
  /** What shapes the frame codecs' encoders (Opus: the far end's fmtp). */
  readonly coderOptions?: CoderOptions;
  readonly payloadType: number;
  /** Every codec the answer lists, with the far end's payload type: it may send any of them (RFC 3264 §6.1), so each is decoded. */
  readonly receiveCodecs?: ReadonlyArray<{ readonly codec: string; readonly payloadType: number }>;
  readonly telephoneEventPt?: number;
  /** The clock of telephone-events: 8000 (the default), or 48000 beside Opus. */
  readonly telephoneEventRate?: number;
  readonly remoteAddress?: string;
  readonly remotePort: number;
  /** Where RTCP goes (a=rtcp, else remotePort + 1; remotePort with rtcp-mux). */
  readonly remoteRtcpPort?: number;
  /** RTCP shares the RTP port (RFC 5761). */
  readonly rtcpMux?: boolean;
  readonly direction: StreamDirection;
  /** DTMF as tones in the audio: detected in what is received, generated for digits sent. */
  readonly inbandDtmf?: boolean;
  /**
   * Milliseconds media may be sent to the SDP's address before anything (RTP or RTCP) has come back
   * from it; then sending waits for the far end's first packet. Set when that address is not the one
   * the call's signalling came from: an SDP must not turn the server into a reflector aimed at a
   * third party. Absent: no limit.
   */
  readonly unansweredLimitMs?: number;
  /**
   * SRTP (or any MediaProtection): every RTP and RTCP packet is protected before it leaves and
   * checked before it is read; a packet that fails is dropped and counted. Absent: plain RTP.
   */
  readonly protection?: MediaProtection;
  /**
   * The SDP is another party's than the one before (another fork of a forked INVITE answered): the
   * source learned from the previous one is not heard any more, nor learned again — its RTP still
   * coming is dropped as a stranger's. Absent: the same far end moved its media (still heard while
   * learning anew).
   */
  readonly otherFarEnd?: boolean;
  /**
   * When nothing was sent on the stream for this many milliseconds, one comfort-noise packet goes
   * (the endpoint's rtp_keepalive, as res_rtp_asterisk sends it), so that a NAT binding or a far
   * end's own RTP timeout stays open through silence or a hold. Absent or 0: none.
   */
  readonly keepaliveMs?: number;
}

/** How the technology configured the stream's media handling. */
export interface StreamOptions {
  /** The RTCP socket (RTP port + 1); without it RTCP is sent only when multiplexed. */
  readonly rtcpSocket?: dgram.Socket;
  /** Mean ms between RTCP reports. Default 5000. */
  readonly rtcpIntervalMs?: number;
  /** The adaptive jitter buffer's bounds; absent: the plain receive queue. */
  readonly jitterBuffer?: { readonly minDelayMs: number; readonly maxDelayMs: number };
  /** Strict RTP (Asterisk's `strictrtp`): learn the source only during learning, then lock. Default true. */
  readonly strictRtp?: boolean;
  /** Packets in sequence a source must send during learning before it is taken (Asterisk's `probation`). Default 4. */
  readonly probation?: number;
  /** Totals shared by every stream of the technology (GET /metrics): counted as things happen, so they outlive the call. */
  readonly totals?: RtpStreamTotals;
  /**
   * Symmetric RTP (Asterisk's `rtp_symmetric`): media and reports go to where the far end's come
   * from once its source is learned. False: always to the SDP's address. Default true.
   */
  readonly symmetric?: boolean;
}

/**
 * What all streams dropped and concealed, since start. The stranger counters are incremented on
 * the hot path (a number field, nothing allocated); the jitter buffer's counters are added when a
 * stream closes (a live stream's own counts are added to these when scraped).
 */
export class RtpStreamTotals {
  /** RTP packets dropped because they came from another source than the far end's (strict RTP). */
  strangerPackets = 0;
  /** RTCP packets dropped because they came from elsewhere than the far end. */
  strangerReports = 0;
  /** Jitter buffer: packets dropped because their audio arrived after it was due. */
  latePackets = 0;
  /** Jitter buffer: frames made up for missing audio. */
  concealedFrames = 0;
  /** SRTP/SRTCP packets dropped because they failed authentication or were replays. */
  srtpRefusedPackets = 0;
}

export interface StreamEvents {
  /** A whole digit received as telephone-events. */
  onDigit(digit: string, durationMs: number): void;
  /** One 20 ms frame of received audio, on a media clock tick. */
  onFrame(frame: Frame): void;
  /**
   * Strict RTP dropped the first packet of a stranger once the source was learned (called once per
   * stream, not per packet: the technology logs it).
   */
  onStranger?(address: string, port: number): void;
  /** Sending stopped because nothing came back from a foreign media address in time (once per stream). */
  onUnanswered?(address: string, port: number): void;
  /** The stream closed (once), its counts added to the totals. */
  onClosed?(): void;
}

/** The media clock as the stream needs it. */
export interface StreamClock {
  readonly ticks: number;
  /**
   * Ticks the clock dropped after stalls longer than its catch-up (MediaClock.skippedTicks): their
   * time passed without a tick, which the jitter buffer's playout must follow. Absent: none.
   */
  readonly skippedTicks?: number;
  /** The tick running is one of a catch-up burst after a stall (MediaClock.catchingUp). Absent: never. */
  readonly catchingUp?: boolean;
  onTick(listener: () => void): void;
  offTick(listener: () => void): void;
}
