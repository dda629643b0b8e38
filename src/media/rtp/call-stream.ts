// What a SIP call holds of its media stream: an RtpStream on the main thread, or the proxy of one
// that runs in a media worker (../workers/remote-stream.ts). The call, its SDP and GET /metrics use
// only this, so they cannot tell where the packets are handled.
import type { Frame, SampleRate } from '../frame.ts';
import type { MixHandle } from '../mix.ts';
import type { MediaSocket } from './media-socket.ts';
import type { RtpStatistics } from './statistics.ts';
import type { StreamParameters } from './stream.ts';
import type { SharedSound, SoundPlayback } from '../shared-sound.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../recording-writer.ts';

/** What GET /metrics reads of a stream's jitter buffer. */
export interface JitterFigures {
  /** Packets dropped because their audio arrived after it was due. */
  readonly late: number;
  /** Frames made up for missing audio. */
  readonly concealed: number;
  readonly targetDelayMs: number;
}

export interface CallRtpStream {
  readonly localPort: number;
  /** The socket, when the stream runs on this thread (a WebRTC call's secures the media). */
  readonly socket?: MediaSocket;
  readonly parameters: StreamParameters | undefined;
  /** Closed: its counts are in the technology's totals already. */
  readonly closed: boolean;
  /** The jitter buffer's figures, when one is used. */
  readonly jitterBuffer: JitterFigures | undefined;
  /** Applies (or changes, on a re-INVITE) what offer/answer agreed. */
  configure(parameters: StreamParameters): void;
  /** One 20 ms frame from the channel towards the far end. */
  writeFrame(frame: Frame): void;
  /** A digit as telephone-events or tones; false when the stream can do neither. */
  sendDigit(digit: string, durationMs: number): boolean;
  statistics(): RtpStatistics | undefined;
  close(): void;
  /**
   * The far end's audio goes straight back to it where the packets are handled, and no frame
   * reaches the channel (Echo()'s fast path); off: back to normal. False when the stream cannot.
   */
  loopAudio?(on: boolean): boolean;
  /** The media worker the stream runs in (undefined: this thread): where a call that will meet it is best placed. */
  readonly workerIndex?: number;
  /**
   * The far end's audio goes to `peer`'s far end where the packets are handled, and no frame
   * reaches the channel (one direction of a two-party relay); undefined: back to normal. False
   * when the two streams cannot (not in the same media worker, or looping).
   */
  relayTo?(peer: CallRtpStream | undefined): boolean;
  /**
   * Plays `sound` from sample `from` where the packets are handled, with no frame written meanwhile
   * (the playback fast path); `ended` when it played to its end. Undefined when the stream cannot.
   */
  playSound?(sound: SharedSound, from: number, paused: boolean, ended: () => void): SoundPlayback | undefined;
  /**
   * Mixes the audio of `members` (this stream among them) where the packets are handled, each
   * hearing the others at `rate` (a bridge of three or more), and no frame reaches the channels;
   * stop() on the handle gives it back. Undefined when the streams cannot be mixed there.
   */
  mixWith?(members: readonly CallRtpStream[], rate: SampleRate): MixHandle | undefined;
  /**
   * Writes a recording of the far end's audio where the packets are handled, with no frame reaching
   * the channel meanwhile (the recording fast path); `ended` when it comes back. Undefined when the
   * stream cannot.
   */
  record?(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined;
}
