// The mix of a bridge of three or more channels done by their technologies (a sibling of the
// two-party relay, audio-relay.ts): SIP calls whose streams run in media workers are mixed in a
// worker, each far end hearing the others, and this thread does nothing per frame. As the relay, it
// runs only while nothing here needs the audio: a listener besides the bridge's own (recording,
// snoop, talk detection), an audio hook, a mute, a generator (playback, music on hold) on any
// member, or whatever the owner says blocks it (a bridge playback, a muted member). A recording of
// the bridge does not: the technologies write it from the mix (record()).
// The moment one appears the technologies give the audio back and the owner's mixer carries it
// from its next tick; when it goes, the technologies mix again. DTMF still reaches the channels
// (ChannelDtmfReceived, bridge features), and the owner passes digits on as before.
import type { SampleRate } from '../../media/frame.ts';
import type { MixHandle } from '../../media/mix.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../../media/recording-writer.ts';
import type { Channel, FrameListener } from './channel.ts';

/** A member as the mix needs it: its channel and the owner's own frame listener on it. */
export interface MixedChannel {
  readonly channel: Channel;
  readonly own: FrameListener;
}

export class TechnologyMix {
  #handle: MixHandle | undefined;
  #stopped = false;
  /** Engagements so far (tests and the curious: did the mix come back after a recording?). */
  engagements = 0;

  /**
   * `members`: the channels to mix (fixed: the owner makes a new mix when they change); `rate`:
   * what the owner mixes at now; `blocked`: whether the owner itself needs the audio now.
   */
  constructor(
    private readonly members: readonly MixedChannel[],
    private readonly rate: () => SampleRate,
    private readonly blocked: () => boolean = () => false,
    /** Called after the technologies started or stopped mixing (a bridge recording follows the mix). */
    private readonly changed: () => void = () => {},
  ) {
    for (const member of members) member.channel.on('media-path', this.update);
    this.update();
  }

  /** The technologies mix the audio now. */
  get engaged(): boolean {
    return this.#handle !== undefined;
  }

  /** Looks again whether the technologies may mix, and starts or stops it. Called on every change that may matter. */
  readonly update = (): void => {
    const wanted = !this.#stopped && !this.blocked() && this.members.every(({ channel, own }) => !channel.hangingUp && !channel.mediaTappedBesides(own));
    if (wanted === this.engaged) return;
    if (!wanted) {
      this.#release();
      return;
    }
    const drivers = this.members.map(({ channel }) => channel.driver);
    this.#handle = drivers[0]?.mixAudio?.(drivers, this.rate());
    if (!this.#handle) return;
    this.engagements += 1;
    this.changed();
  };

  /** Has the technologies write a recording of the mix (a bridge recording); undefined when they are not mixing or cannot. */
  record(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    return this.#handle?.record?.(handover, ended);
  }

  /** The mix rate changed: the technologies mix at the new one from now. */
  retune(): void {
    this.#release();
    this.update();
  }

  /** For good (the members changed, or the bridge ends): the audio goes back to the channels. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const member of this.members) member.channel.off('media-path', this.update);
    this.#release();
  }

  #release(): void {
    const handle = this.#handle;
    this.#handle = undefined;
    if (!handle) return;
    handle.stop();
    this.changed();
  }
}
