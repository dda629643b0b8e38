// The driver: what a channel asks of its technology side (the far end of the call). Its own file,
// below technology.ts, because the channel holds a driver while the technology contract names
// channels: with the driver declared here, channel.ts needs nothing of technology.ts and the two
// do not import each other.
import type { Frame, SampleRate } from '../../media/frame.ts';
import type { MixHandle } from '../../media/mix.ts';
import type { RtpStatistics } from '../../media/rtp/statistics.ts';
import type { SharedSound, SoundPlayback } from '../../media/shared-sound.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../../media/recording-writer.ts';

/**
 * Conditions a channel can indicate to its far end. `stop` ends whatever indication is in
 * progress (Asterisk's indication -1, what ARI's ringStop sends).
 */
export type Indication = 'ringing' | 'progress' | 'busy' | 'congestion' | 'hold' | 'unhold' | 'answer' | 'stop';

/**
 * Where a connected-line indication comes from (Asterisk's connected-line update source): a
 * callee's identity given to its caller by Dial() (`answer`), the far end's own update (`answer`
 * too, as chan_pjsip marks it), or a bridge telling each party whom it now talks to (`bridge`).
 * Part of what makes an indication new: the same party from another source is indicated again.
 */
export type ConnectedLineSource = 'answer' | 'bridge';

/** ARI transfer_progress `states`. */
export type TransferProgressState = 'channel_progress' | 'channel_answered' | 'channel_unavailable' | 'channel_declined';

/** What the core asks of one channel's technology side (its far end). */
export interface ChannelDriver {
  /** Start calling the far end (outbound channels). The driver reports progress back on the channel. */
  call(): void;
  /** The core answered this (inbound) channel. */
  answer(): void;
  /** The channel is going away; release the far end with this cause. */
  hangup(cause: number): void;
  /**
   * Shows the far end an indication. `false`: the technology cannot show this one now (a SIP call
   * already answered has no 180 or 486 left to send: chan_pjsip's indicate returns -1), and the
   * core makes it heard in band instead (indication-tones.ts), as Asterisk's ast_indicate_data does.
   */
  indicate(indication: Indication, musicClass?: string): boolean | void;
  /**
   * The channel's connected line was indicated (Asterisk's AST_CONTROL_CONNECTED_LINE): the party
   * the far end now talks to, e.g. a SIP re-INVITE or UPDATE naming it. Told only when it differs
   * from the last one indicated (Channel.indicateConnectedLine). Technologies without it leave it out.
   */
  connectedLine?(connected: Readonly<{ name: string; number: string }>): void;
  /**
   * The channel's redirecting party (`Channel.redirecting`, already the new one) was indicated
   * (Asterisk's AST_CONTROL_REDIRECTING): the call was forwarded, e.g. a SIP caller not answered
   * yet is sent a 181 naming where to. Technologies without it leave it out.
   */
  redirecting?(): void;
  /** A whole DTMF digit towards the far end. */
  sendDigit(digit: string, durationMs: number): void;
  /** One 20 ms frame towards the far end. Must not keep a reference to `frame.samples`. */
  writeFrame(frame: Frame): void;
  /**
   * While on, the far end's audio goes straight back to it inside the technology and no frame
   * reaches the channel: Echo()'s fast path, for a channel nothing else listens to. False when the
   * technology cannot (the caller then echoes frame by frame); technologies that never can leave it out.
   */
  loopAudio?(on: boolean): boolean;
  /**
   * While given a peer, the far end's audio goes to `peer`'s far end inside the technologies and no
   * frame reaches the channel (audio-relay.ts decides when: nothing else listens to either). False
   * when the two cannot (another technology, or their media is not in one place, e.g. two media
   * workers); undefined: the audio comes back to the channel. Technologies that never can leave it out.
   */
  relayAudio?(peer: ChannelDriver | undefined): boolean;
  /**
   * Remote media (Asterisk's RTP glue, bridge_native_rtp): while given a peer, the technology asks
   * its far end to send its media straight to `peer`'s far end and back (a SIP re-INVITE naming the
   * other's RTP address), so none reaches the server. Asked again on every change that may matter,
   * and must then be idempotent; false when the two cannot now (another technology, no common codec,
   * SRTP, in-band DTMF, NAT, the endpoint's direct_media=no …); undefined: the media comes back here.
   * remote-media.ts decides when: both sides at once, only while nothing else needs the audio here.
   * Technologies that never can leave it out.
   */
  remoteMedia?(peer: ChannelDriver | undefined): boolean;
  /**
   * The technologies mix the audio of `members` (this driver among them) themselves, each far end
   * hearing the others at `rate`, and no frame reaches the channels (technology-mix.ts decides
   * when: nothing else takes the audio of any of them); stop() on the handle gives the audio back.
   * Undefined when they cannot (another technology among them, media not where it can be mixed).
   * Technologies that never can leave it out.
   */
  mixAudio?(members: readonly ChannelDriver[], rate: SampleRate): MixHandle | undefined;
  /**
   * The playback fast path: the technology plays `sound` (at its rate, from sample `from`) to the
   * far end by itself, one frame per tick, with nothing written through the channel meanwhile;
   * `ended` is called when it reached its end. Undefined when it cannot (the playback then runs
   * frame by frame); technologies that never can leave it out.
   */
  playSound?(sound: SharedSound, from: number, paused: boolean, ended: () => void): SoundPlayback | undefined;
  /**
   * The recording fast path: the technology writes the far end's audio into the recording's file by
   * itself (the file, created by the core, is reopened there for appending), with no frame reaching
   * the channel meanwhile; `ended` says when and why the recording came back. Undefined when it
   * cannot (the recording then runs frame by frame); technologies that never can leave it out.
   */
  recordAudio?(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined;
  /** Out-of-call text towards the far end, if the technology carries text. */
  sendText?(text: string): void;
  /**
   * Sends the far end to another destination of the same technology (`resource` is the part of
   * the endpoint after `TECH/`), e.g. a SIP 302 or REFER. Technologies that cannot leave it out.
   */
  redirect?(resource: string): void;
  /**
   * Progress of a transfer the application handles (ARI transfer_progress), told to the party that
   * asked for it (a SIP NOTIFY). Technologies without transfers leave it out.
   */
  transferProgress?(state: TransferProgressState): void;
  /**
   * The RTP statistics of the channel's media stream (ARI `rtp_statistics`), for technologies
   * that carry RTP; undefined once the stream is gone. Technologies without RTP leave it out.
   */
  rtpStatistics?(): RtpStatistics | undefined;
  /**
   * The audio format on the wire towards the far end (`CHANNEL(audionativeformat)`), e.g. the
   * negotiated codec; technologies that carry the core's signed linear audio leave it out (`slin`).
   */
  nativeFormat?(): string | undefined;
  /**
   * The technology's own items of CHANNEL(<technology>,item) (Asterisk's func_channel_read hook):
   * protocol facts such as a call identifier. With `bare`, an item CHANNEL(item) named without the
   * technology (chan_pjsip's `rtp,dest`, `endpoint`), asked before the core's own readers. Undefined
   * for an item it does not know; technologies without such items leave it out.
   */
  channelInfo?(item: string, bare?: boolean): string | undefined;
}
