// Two channels whose audio only goes from one to the other (Dial()'s connected pair, a two-party
// bridge nothing else listens to) can have their technologies pass it themselves: two SIP calls
// whose streams share a media worker are relayed inside it, and this thread does nothing per frame
// (the cheapest technology, as Asterisk's native_rtp/simple bridges are chosen over softmix). The
// relay runs only while nothing else needs the audio here: a second listener (recording, snoop,
// talk detection), an audio hook, a mute, a generator (playback, music on hold) on either channel,
// or whatever the owner says blocks it (a bridge's playback, recording or third member). The moment
// one appears the technologies give the audio back to the channels, and the owner's frame-by-frame
// path carries it from the next tick; when it goes, the relay starts again. DTMF is not relayed:
// digits still reach the channels (ChannelDtmfReceived, Dial features) and the owner passes them on.
// Under the same conditions the technologies may go further and have the far ends send to each other
// (remote-media.ts, direct media); the relay stays engaged meanwhile for what still arrives here.
import type { Channel, FrameListener } from './channel.ts';
import { RemoteMedia } from './remote-media.ts';

export class AudioRelay {
  #engaged = false;
  #stopped = false;
  readonly #remote: RemoteMedia;
  /** Engagements so far (tests and the curious: did the relay come back after a recording?). */
  engagements = 0;

  /**
   * `ownA`/`ownB` are the owner's frame listeners on `a` and `b` (they do not count as someone
   * else listening); `blocked` says whether the owner itself needs the audio now.
   */
  constructor(
    private readonly a: Channel,
    private readonly b: Channel,
    private readonly ownA: FrameListener,
    private readonly ownB: FrameListener,
    private readonly blocked: () => boolean = () => false,
    /**
     * Whether the far ends may be sent to each other: not while in-call DTMF features read the
     * digits (Dial's t, T, h, H…), which would then never reach the server — Asterisk's native RTP
     * bridge likewise refuses a pair with DTMF hooks.
     */
    private readonly directAllowed = true,
  ) {
    this.#remote = new RemoteMedia(a, b);
    a.on('media-path', this.update);
    b.on('media-path', this.update);
    this.update();
  }

  /** The technologies pass the audio between them now. */
  get engaged(): boolean {
    return this.#engaged;
  }

  /** The far ends send their media to each other (direct media), none of it through here. */
  get direct(): boolean {
    return this.#remote.direct;
  }

  /** Times the far ends were sent to each other. */
  get directions(): number {
    return this.#remote.directions;
  }

  /** Looks again whether the relay may run, and starts or stops it. Called on every change that may matter. */
  readonly update = (): void => {
    const { a, b } = this;
    const wanted =
      !this.#stopped &&
      !a.hangingUp &&
      !b.hangingUp &&
      !this.blocked() &&
      !a.mediaTappedBesides(this.ownA) &&
      !b.mediaTappedBesides(this.ownB);
    this.#remote.update(wanted && this.directAllowed);
    if (wanted === this.#engaged) return;
    if (!wanted) {
      this.#release();
      return;
    }
    if (!a.driver.relayAudio || !b.driver.relayAudio) return;
    // Both directions or neither: one relayed direction would leave the other without a path here.
    if (a.driver.relayAudio(b.driver) !== true) return;
    if (b.driver.relayAudio(a.driver) !== true) {
      a.driver.relayAudio(undefined);
      return;
    }
    this.#engaged = true;
    this.engagements += 1;
  };

  /** For good (the pair is disconnected): the audio goes back to the channels. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.a.off('media-path', this.update);
    this.b.off('media-path', this.update);
    this.#remote.update(false);
    this.#release();
  }

  #release(): void {
    if (!this.#engaged) return;
    this.#engaged = false;
    this.a.driver.relayAudio?.(undefined);
    this.b.driver.relayAudio?.(undefined);
  }
}
