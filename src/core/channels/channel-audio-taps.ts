// What takes or changes a channel's audio besides its technology: frame listeners, audio hooks,
// the mutes, a generator, and the questions asked of them (is the audio tapped, by anything but
// the one connecting the channel?). A base class of the Channel (channel.ts), between what ARI
// shows of it (channel-snapshot.ts) and the channel itself, so that channel.ts keeps its state,
// events and hang-up while these verbs read in one place; the per-frame work (write, deliver) stays
// the Channel's, as it needs the driver and the hang-up state. The audio path itself
// (channel-audio-path.ts) is made at first use: a channel whose audio nothing here takes holds none
// (docs/performance.md, "Eighth pass"). Generic over the channel type, as the audio path is, so
// that this file does not import the Channel that extends it.
import type { Frame } from '../../media/frame.ts';
import { ChannelAudioPath } from './channel-audio-path.ts';
import { ChannelSnapshotFields } from './channel-snapshot.ts';
import type { AudioHookDirection } from './channel-types.ts';

type Listener<C> = (frame: Frame, channel: C) => void;
type Hook<C> = (frame: Frame, channel: C) => Frame;

export abstract class ChannelAudioTaps<C> extends ChannelSnapshotFields {
  /** Listeners, hooks, mutes, generator flag (media-tapped / media-path on a change); made at first use: most channels need none. */
  #audio: ChannelAudioPath<C> | undefined;

  /** The audio path, if anything made it (undefined: frames go straight to the driver, and delivered ones nowhere). */
  protected get audio(): ChannelAudioPath<C> | undefined {
    return this.#audio;
  }

  #audioPath(): ChannelAudioPath<C> {
    return (this.#audio ??= new ChannelAudioPath<C>((tapped) => {
      if (tapped) this.emit('media-tapped', undefined);
      this.emit('media-path', undefined);
    }));
  }

  /** Ends the generator playing at the first frame written by anyone else (an indication tone); see ChannelAudioPath. */
  get interruptOnWrite(): (() => void) | undefined {
    return this.#audio?.interruptOnWrite;
  }

  set interruptOnWrite(end: (() => void) | undefined) {
    if (end === undefined && this.#audio === undefined) return;
    this.#audioPath().interruptOnWrite = end;
  }

  addFrameListener(listener: Listener<C>): void {
    this.#audioPath().addFrameListener(listener);
  }

  removeFrameListener(listener: Listener<C>): void {
    this.#audioPath().removeFrameListener(listener);
  }

  addAudioHook(direction: AudioHookDirection, hook: Hook<C>): void {
    this.#audioPath().addAudioHook(direction, hook);
  }

  removeAudioHook(direction: AudioHookDirection, hook: Hook<C>): void {
    this.#audioPath().removeAudioHook(direction, hook);
  }

  get mutedIn(): boolean {
    return this.#audio?.mutedIn ?? false;
  }

  set mutedIn(muted: boolean) {
    if (muted || this.#audio !== undefined) this.#audioPath().mutedIn = muted;
  }

  get mutedOut(): boolean {
    return this.#audio?.mutedOut ?? false;
  }

  set mutedOut(muted: boolean) {
    if (muted || this.#audio !== undefined) this.#audioPath().mutedOut = muted;
  }

  /** A channel-level generator (playback, music on hold, silence) owns what the channel hears. */
  get generatorActive(): boolean {
    return this.#audio?.generatorActive ?? false;
  }

  set generatorActive(active: boolean) {
    if (active || this.#audio !== undefined) this.#audioPath().generatorActive = active;
  }

  /**
   * Whether anything but `own` (the one listener of whoever connects the channel to another)
   * takes or changes the channel's audio: a second listener, a hook, a mute, a generator.
   */
  mediaTappedBesides(own: Listener<C>): boolean {
    return this.#audio?.tappedBesides(own) ?? false;
  }

  /** Whether anything but `own` needs the far end's audio here (a listener, a read hook, a mute in); what is sent does not count. */
  receivedAudioTakenBesides(own: Listener<C>): boolean {
    return this.#audio?.receivedTakenBesides(own) ?? false;
  }

  /** Something other than the technology takes or changes the channel's audio (a listener, a hook, a mute, a generator). */
  get mediaTapped(): boolean {
    return this.audioTapped || this.generatorActive;
  }

  /** As mediaTapped, generators aside: the playback fast path plays only to a channel where nothing takes or changes the audio. */
  get audioTapped(): boolean {
    return this.#audio?.audioTapped ?? false;
  }
}
