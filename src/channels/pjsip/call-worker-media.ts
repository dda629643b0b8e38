// The media-worker fast paths of a SIP call (the optional ChannelDriver hooks of core/channels/driver.ts):
// Echo()'s loop, a two-party relay, a bridge's mix, a playback and a recording done by the call's
// stream inside its media worker instead of frame by frame on this thread. Each is refused (false
// or undefined, and the core does the work here) when the call ended, the setting (media.worker_*)
// turned it off, or the stream cannot (it runs on this thread).
import type { SampleRate } from '../../media/frame.ts';
import type { MixHandle } from '../../media/mix.ts';
import type { CallRtpStream } from '../../media/rtp/call-stream.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../../media/recording-writer.ts';
import type { SharedSound, SoundPlayback } from '../../media/shared-sound.ts';
import type { CallEnvironment } from './call-types.ts';

/** What the fast paths need of a call (call.ts's SipCall, and of its peers in a relay or mix). */
export interface OffloadableCall {
  readonly ended: boolean;
  readonly stream: CallRtpStream | undefined;
}

type WorkerSwitches = Pick<CallEnvironment, 'workerRelay' | 'workerMix' | 'workerPlayback' | 'workerRecording'>;

export class CallWorkerMedia {
  constructor(
    private readonly call: OffloadableCall,
    private readonly switches: WorkerSwitches,
  ) {}

  /** Echo(): the stream sends the far end's audio back by itself; false when it cannot. */
  loop(on: boolean): boolean {
    return !this.call.ended && (this.call.stream?.loopAudio?.(on) ?? false);
  }

  /**
   * One direction of a two-party relay (audio-relay.ts): the far end's audio goes to `peer`'s far end
   * inside the media worker both streams run in; `null` is a peer that is no SIP call (refused),
   * undefined ends the relay.
   */
  relay(peer: OffloadableCall | null | undefined): boolean {
    const stream = this.call.stream;
    if (!stream?.relayTo) return false;
    if (peer === undefined) return stream.relayTo(undefined);
    if (this.call.ended || this.switches.workerRelay === false || peer === null || peer.ended || !peer.stream) return false;
    return stream.relayTo(peer.stream);
  }

  /** A bridge of three or more mixed in the media workers: every member a live SIP call (`null` is one that is not). */
  mix(members: ReadonlyArray<OffloadableCall | null>, rate: SampleRate): MixHandle | undefined {
    const stream = this.call.stream;
    if (this.call.ended || this.switches.workerMix === false || !stream?.mixWith) return undefined;
    const streams: CallRtpStream[] = [];
    for (const member of members) {
      if (member === null || member.ended || !member.stream) return undefined;
      streams.push(member.stream);
    }
    return stream.mixWith(streams, rate);
  }

  /** The playback fast path: the stream's media worker plays the sound by itself. */
  play(sound: SharedSound, from: number, paused: boolean, ended: () => void): SoundPlayback | undefined {
    return this.call.ended || this.switches.workerPlayback === false ? undefined : this.call.stream?.playSound?.(sound, from, paused, ended);
  }

  /** The recording fast path: the stream's media worker writes the recording of the far end's audio. */
  record(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    return this.call.ended || this.switches.workerRecording === false ? undefined : this.call.stream?.record?.(handover, ended);
  }
}
