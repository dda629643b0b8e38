// The audio path inside a channel: who takes the frames received from the far end (listeners),
// what sees them on their way in or out (audio hooks), and what replaces them with silence (the
// mutes) or owns what the channel hears (a generator). Kept apart from the Channel so the per-frame
// work reads in one place. Generic over the channel type so that this file does not import the
// Channel that holds it (the listener and hook types name the Channel; see channel.ts).
import type { Frame } from '../../media/frame.ts';
import type { AudioHookDirection } from './channel-types.ts';

type Listener<C> = (frame: Frame, channel: C) => void;
type Hook<C> = (frame: Frame, channel: C) => Frame;

export class ChannelAudioPath<C> {
  // Replaced, never changed in place (a delivery in progress keeps the list it started with), so
  // the paths without any share one empty list.
  private frameListeners: readonly Listener<C>[] = NO_LISTENERS;
  private readHooks: readonly Hook<C>[] = NO_HOOKS;
  private writeHooks: readonly Hook<C>[] = NO_HOOKS;
  private silence: Frame | undefined;
  #mutedIn = false;
  #mutedOut = false;
  #generatorActive = false;
  /** Told of every change of the path; `tapped` when something new takes or changes the audio. */
  readonly #changed: (tapped: boolean) => void;

  constructor(changed: (tapped: boolean) => void) {
    this.#changed = changed;
  }

  /** The frame to send towards the far end for `frame`: silence when muted, then the write hooks. */
  outgoing(frame: Frame, channel: C): Frame {
    let out = this.#mutedOut ? this.silenceLike(frame) : frame;
    const hooks = this.writeHooks;
    for (let i = 0; i < hooks.length; i++) out = hooks[i](out, channel);
    return out;
  }

  /** Audio from the far end: silence when muted, then the read hooks, then to every listener. */
  deliver(frame: Frame, channel: C): void {
    let delivered = this.#mutedIn ? this.silenceLike(frame) : frame;
    const hooks = this.readHooks;
    for (let i = 0; i < hooks.length; i++) delivered = hooks[i](delivered, channel);
    const listeners = this.frameListeners;
    for (let i = 0; i < listeners.length; i++) listeners[i](delivered, channel);
  }

  addFrameListener(listener: Listener<C>): void {
    this.frameListeners = [...this.frameListeners, listener];
    this.#changed(true);
  }

  removeFrameListener(listener: Listener<C>): void {
    this.frameListeners = this.frameListeners.filter((entry) => entry !== listener);
    this.#changed(false);
  }

  addAudioHook(direction: AudioHookDirection, hook: Hook<C>): void {
    if (direction === 'read') this.readHooks = [...this.readHooks, hook];
    else this.writeHooks = [...this.writeHooks, hook];
    this.#changed(true);
  }

  removeAudioHook(direction: AudioHookDirection, hook: Hook<C>): void {
    if (direction === 'read') this.readHooks = this.readHooks.filter((entry) => entry !== hook);
    else this.writeHooks = this.writeHooks.filter((entry) => entry !== hook);
    this.#changed(false);
  }

  /** Lets every listener and hook go (the channel is destroyed); no change is told. */
  clear(): void {
    this.frameListeners = NO_LISTENERS;
    this.readHooks = NO_HOOKS;
    this.writeHooks = NO_HOOKS;
  }

  get mutedIn(): boolean {
    return this.#mutedIn;
  }

  set mutedIn(muted: boolean) {
    if (muted === this.#mutedIn) return;
    this.#mutedIn = muted;
    this.#changed(false);
  }

  get mutedOut(): boolean {
    return this.#mutedOut;
  }

  set mutedOut(muted: boolean) {
    if (muted === this.#mutedOut) return;
    this.#mutedOut = muted;
    this.#changed(false);
  }

  get generatorActive(): boolean {
    return this.#generatorActive;
  }

  /**
   * What ends the interruptible generator playing (an indication tone) at the first frame anyone
   * else writes, as Asterisk's AST_FLAG_WRITE_INT: ast_write deactivates such a generator and lets
   * the frame through (a generator that is not interruptible keeps playing and the frame is dropped).
   */
  interruptOnWrite: (() => void) | undefined;

  /** A frame written by something other than the channel's generators: an interruptible one ends first. */
  writtenByOther(): void {
    const end = this.interruptOnWrite;
    if (end === undefined) return;
    this.interruptOnWrite = undefined;
    end();
  }

  set generatorActive(active: boolean) {
    if (active === this.#generatorActive) return;
    this.#generatorActive = active;
    this.#changed(false);
  }

  /** Whether anything but `own` takes or changes the audio: a second listener, a hook, a mute, a generator. */
  tappedBesides(own: Listener<C>): boolean {
    return this.othersThan(own) > 0 || this.readHooks.length > 0 || this.writeHooks.length > 0 || this.#mutedIn || this.#mutedOut || this.#generatorActive;
  }

  /** Whether anything but `own` needs the far end's audio (a listener, a read hook, a mute in); what is sent does not count. */
  receivedTakenBesides(own: Listener<C>): boolean {
    return this.othersThan(own) > 0 || this.readHooks.length > 0 || this.#mutedIn;
  }

  /** Something takes or changes the audio (a listener, a hook, a mute), generators aside. */
  get audioTapped(): boolean {
    return this.frameListeners.length > 0 || this.readHooks.length > 0 || this.writeHooks.length > 0 || this.#mutedIn || this.#mutedOut;
  }

  private othersThan(own: Listener<C>): number {
    const listeners = this.frameListeners;
    return listeners.length - (listeners.includes(own) ? 1 : 0);
  }

  private silenceLike(frame: Frame): Frame {
    if (!this.silence || this.silence.rate !== frame.rate) this.silence = { rate: frame.rate, samples: new Int16Array(frame.samples.length) };
    return this.silence;
  }
}

// Not frozen: a frozen array's elements kind would make the per-frame loops over these lists
// polymorphic; `readonly` keeps anyone from adding to them.
const NO_LISTENERS: readonly never[] = [];
const NO_HOOKS: readonly never[] = [];
