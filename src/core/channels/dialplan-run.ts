// What a channel's events say about the dialplan running on it, as Asterisk 22 says it: when
// moving to an application raises ChannelDialplan, and how the end of a dialplan run that owns the
// channel (Asterisk's PBX thread) is announced. The rules only; the Channel moves the position and
// raises the events they call for.
import type { DialplanLocation } from './channel-types.ts';

/**
 * Hang-up logic run on a hung-up channel before it is destroyed: the dialplan's `h` extension, run
 * by the dialplan executor owning the channel, as Asterisk's PBX thread runs it before ast_hangup.
 * One object serves every channel its owner runs. Generic in the channel it is handed, so these
 * rules need not import the Channel that uses them (channel.ts names it for Channel).
 */
export interface HangupLogic<C> {
  /**
   * Asked once the hang-up is announced and listeners released the channel: true when the owner
   * runs its logic now and calls channel.finishHangup() after it (the technology is told and
   * ChannelDestroyed raised only then); false when there is none to run.
   */
  takesOver(channel: C): boolean;
}

/** The application a snapshot shows. */
type ShownApplication = Pick<DialplanLocation, 'appName' | 'appData'>;

export class ChannelDialplanRun<C> {
  /**
   * A dialplan run owns the channel: its end is announced as a soft hang-up (APPUNLOAD) before
   * ChannelDestroyed, and a hang-up from the far end destroys the channel after the one that
   * caused it, as that thread notices the hang-up later.
   */
  #owned = false;
  /** The application shown before the run began: its end puts it back (pbx_exec's restore). */
  #applicationBefore: ShownApplication | undefined;
  /** A soft APPUNLOAD hang-up was announced already (by the run's end or by whoever hung up so). */
  #endAnnounced = false;
  /** Hang-up logic the owning run has (the `h` extension), asked once the channel hangs up. */
  hangupLogic: HangupLogic<C> | undefined;
  /** The hang-up logic took the hang-up over: the technology told (unless the far end hung up) and ChannelDestroyed wait. */
  #deferredHangup: { readonly fromFarEnd: boolean } | undefined;
  /** The position and application the last application start showed (undefined: none yet, the creation one). */
  #shown: Readonly<DialplanLocation> | undefined;

  /**
   * The channel moves from `current` to `next` to run an application: whether ChannelDialplan is
   * raised. Only when Asterisk's snapshot comparison would raise it (res/stasis/app.c
   * channel_dialplan): the new application is not empty and either the position moved or the
   * previous application was empty.
   */
  startsApplication(current: Readonly<DialplanLocation>, next: Readonly<DialplanLocation>): boolean {
    // Compared with what the last application's start showed, not with moves made since without
    // one (a continue or goto): Asterisk compares published snapshots, and a move publishes none.
    const before = this.#shown ?? current;
    this.#shown = next;
    if (!next.appName) return false;
    const samePlace = before.context === next.context && before.exten === next.exten && before.priority === next.priority;
    return !(samePlace && before.appName);
  }

  /** The channel hung up: whether hang-up logic takes the rest of the hang-up over (asked once). */
  takeHangupOver(channel: C, fromFarEnd: boolean): boolean {
    const logic = this.hangupLogic;
    this.hangupLogic = undefined;
    if (!logic?.takesOver(channel)) return false;
    this.#deferredHangup = { fromFarEnd };
    return true;
  }

  /** Whether the rest of the hang-up waits for hang-up logic. */
  get hangupDeferred(): boolean {
    return this.#deferredHangup !== undefined;
  }

  /** The hang-up logic is done: what was deferred (undefined when nothing was), no longer deferred. */
  takeDeferredHangup(): { readonly fromFarEnd: boolean } | undefined {
    const deferred = this.#deferredHangup;
    this.#deferredHangup = undefined;
    return deferred;
  }

  /** A dialplan run takes the channel over at `current`, or lets it go without a hang-up. */
  own(owned: boolean, current: Readonly<DialplanLocation>): void {
    this.#owned = owned;
    this.#applicationBefore = owned ? { appName: current.appName, appData: current.appData } : undefined;
  }

  /** A soft hang-up with the APPUNLOAD flag was announced: the run's end is not announced again. */
  endAnnounced(): void {
    this.#endAnnounced = true;
  }

  /** Whether the end of an owning run is still to be announced; once true, marked announced. */
  takeEndToAnnounce(): boolean {
    if (!this.#owned || this.#endAnnounced) return false;
    this.#endAnnounced = true;
    return true;
  }

  /** The application to show again once the run ended; undefined when no run owns the channel. */
  get applicationBefore(): ShownApplication | undefined {
    return this.#applicationBefore;
  }
}
