// The playback fast path of one channel: when the item playing is a decoded sound (a `sound:` or
// `recording:` file) at the channel's own rate, nothing else takes or changes the channel's audio,
// and the technology can play a sound by itself (a SIP call whose stream runs in a media worker),
// the item is handed to the technology from where it is, and the channel rests: the main thread
// makes no frame of it. The Playback stays here, with its events and its queue; control operations
// reach the player through the RemoteItem. The item comes back to the frame-by-frame path:
//   - at its end (the player says so): a frame made here at once finds it over and moves on;
//   - when something taps the channel's audio (a snoop, a recording, a bridge, talk detection, a
//     mute): at the player's position, so the tap hears the rest;
//   - when the playback finishes otherwise (stopped, the channel hung up): the player stops.
// Each item is considered once: one that could not be handed over (or came back) plays here.
import { SharedSoundCache, type SoundPlayback } from '../../media/shared-sound.ts';
import type { AudioGenerator, ChannelGenerators } from '../channel-generators.ts';
import type { Channel } from '../channels/channel.ts';
import { nativeRateOf } from '../channels/native-rate.ts';
import { PcmSource, type MediaSource } from './media-source.ts';
import type { Playback, RemoteItem } from './playback.ts';

/** Every channel's: a prompt is copied into shared memory once for all the calls that play it. */
const sharedSounds = new SharedSoundCache();

/** What the fast path did since the process started (GET /metrics-style counts; tests read them). */
export const playbackOffloadCounts = {
  /** Items handed to a technology. */
  handedOver: 0,
  /** Items that played to their end there. */
  ended: 0,
  /** Items taken back because the channel's audio was tapped. */
  takenBack: 0,
  /** Bytes of sounds in shared memory now. */
  get sharedBytes(): number {
    return sharedSounds.bytes;
  },
};

interface Handed {
  readonly playback: Playback;
  readonly source: PcmSource;
  readonly play: SoundPlayback;
}

export class ChannelPlaybackOffload {
  /** The item last considered (each is considered once). */
  #considered: MediaSource | undefined;
  #handed: Handed | undefined;

  constructor(
    private readonly channel: Channel,
    private readonly generators: ChannelGenerators,
    /** The channel's playback generator, which rests while an item is played elsewhere. */
    private readonly generator: AudioGenerator,
  ) {}

  /** An item is played by the technology now. */
  get active(): boolean {
    return this.#handed !== undefined;
  }

  /** Called after a frame of `playback` was made here: hands its item over when it can. */
  consider(playback: Playback | undefined): void {
    if (!playback || this.#handed) return;
    const source = playback.current;
    if (source === this.#considered) return;
    this.#considered = source;
    const channel = this.channel;
    if (!(source instanceof PcmSource) || !channel.driver.playSound || channel.hangingUp || channel.audioTapped) return;
    if (source.rate !== nativeRateOf(channel) || source.at >= source.length) return;
    const sound = sharedSounds.of(source.audio, source.rate);
    if (!sound) return;
    let handed: Handed | undefined;
    const play = channel.driver.playSound(sound, source.at, playback.paused, () => {
      if (handed) this.#ended(handed);
    });
    if (!play) return;
    handed = { playback, source, play };
    this.#handed = handed;
    playback.remote = this.#remoteItem(handed);
    playbackOffloadCounts.handedOver += 1;
    this.generators.rest(channel, this.generator, true);
    channel.on('media-path', this.#onPathChanged);
  }

  #remoteItem(handed: Handed): RemoteItem {
    let pulledAt = -1;
    return {
      pull: () => {
        handed.source.seekTo(handed.play.position);
        pulledAt = handed.source.at;
      },
      push: (paused) => {
        // A pause alone leaves the player where it is (it went on playing since the pull).
        if (handed.source.at !== pulledAt) handed.play.seek(handed.source.at);
        handed.play.pause(paused);
      },
      finished: () => {
        handed.play.stop();
        this.#release(handed);
      },
    };
  }

  #ended(handed: Handed): void {
    if (this.#handed !== handed) return;
    playbackOffloadCounts.ended += 1;
    handed.source.seekTo(handed.source.length);
    this.#release(handed);
    // The worker sent the last frame already: what follows it (the next item, or the playback's end and what the
    // dialplan does next) starts now, not up to a tick later, so the far end hears no more of a gap than before.
    this.generators.catchUp(this.channel);
  }

  /** A listener, a hook or a mute came (or went, or a generator changed: then nothing is to be done). */
  readonly #onPathChanged = (): void => {
    const handed = this.#handed;
    if (!handed || !this.channel.audioTapped) return;
    playbackOffloadCounts.takenBack += 1;
    handed.source.seekTo(handed.play.stop());
    this.#release(handed);
  };

  /** The item is this thread's again: the channel's generators tick from the next frame. */
  #release(handed: Handed): void {
    if (this.#handed !== handed) return;
    this.#handed = undefined;
    if (handed.playback.remote) handed.playback.remote = undefined;
    this.channel.off('media-path', this.#onPathChanged);
    this.generators.rest(this.channel, this.generator, false);
  }
}
