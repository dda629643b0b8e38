// One playback: a list of media URIs played in order to a channel or a bridge. States are the
// spec's: `enqueued` (waiting behind another playback of its target), `playing`, then `complete`
// or `failed`. Paused playbacks stay `playing` and produce silence.
//
// A media item that cannot be played (not found, unreadable, bad URI) is handled as Asterisk's
// res_stasis_playback handles it: when more items follow, PlaybackContinuing is raised and the
// next item plays; when it is the last item, the playback finishes `failed`. A single missing
// item therefore fails the playback, and a list never stops half-way without an event.
import type { Model } from '../../spec/index.ts';
import type { SampleRate } from '../../media/frame.ts';
import { RateAdapter } from '../../media/rate-adapter.ts';
import { PLAYBACK_RATE, type MediaSource } from './media-source.ts';
import type { MediaResult } from './media.ts';
import type { Endable } from '../../util/lifecycle.ts';

export type PlaybackState = 'enqueued' | 'playing' | 'complete' | 'failed';

export type PlaybackOperation = 'pause' | 'unpause' | 'reverse' | 'forward' | 'restart';

export const DEFAULT_SKIP_MS = 3000;

export type PlaybackTarget = { readonly kind: 'channel'; readonly id: string } | { readonly kind: 'bridge'; readonly id: string };

/** The ARI Playback model, as declared. */
export type PlaybackJson = Model<'Playback'>;

export type PlaybackEventType = 'PlaybackStarted' | 'PlaybackContinuing' | 'PlaybackFinished';

/**
 * The item playing now, while its technology plays it by itself (offload.ts, the playback fast
 * path): the item's position lives there, so control operations go through it.
 */
export interface RemoteItem {
  /** Brings the item's position back from where it is played. */
  pull(): void;
  /** Applies the item's position and the pause where it is played. */
  push(paused: boolean): void;
  /** The playback finished (stopped, its target gone): the item stops where it is played. */
  finished(): void;
}

export interface PlaybackHooks {
  /**
   * Opens a media item (the URI, the playback's language, the offset for the first item, and the
   * rate its target hears at now, which picks the sound file closest to it).
   */
  open(uri: string, language: string, offsetMs: number, rate: SampleRate): MediaResult;
  raise(playback: Playback, type: PlaybackEventType): void;
  /** A media item could not be played (for the log). */
  failedItem(playback: Playback, uri: string, reason: string): void;
  /** Stops the playback through its queue (what ARI's stop does). */
  stop(playback: Playback): void;
}

export interface PlaybackInit {
  readonly id: string;
  readonly media: readonly string[];
  readonly target: PlaybackTarget;
  readonly language: string;
  readonly offsetMs?: number;
  readonly skipMs?: number;
  /** The rate the target hears at (a channel's native rate, a bridge's mix rate); 8 kHz if not given. */
  readonly rate?: SampleRate;
}

export class Playback implements Endable {
  readonly id: string;
  readonly media: readonly string[];
  readonly target: PlaybackTarget;
  readonly language: string;
  readonly offsetMs: number;
  readonly skipMs: number;
  state: PlaybackState = 'enqueued';
  /** The media item playing now (or last played). */
  index = 0;
  paused = false;

  private readonly hooks: PlaybackHooks;
  private source: MediaSource | undefined;
  /** Set while the item playing now is played elsewhere. */
  remote: RemoteItem | undefined;
  /** The rate the target last asked for: items are opened for it. */
  private targetRate: SampleRate;
  /** Items at another rate than the target's are converted on the way, by this stream's resampler. */
  private readonly adapter = new RateAdapter();
  /** Set when the items have run out: how the playback ends. */
  private outcome: 'complete' | 'failed' | undefined;

  constructor(hooks: PlaybackHooks, init: PlaybackInit) {
    if (init.media.length === 0) throw new RangeError('a playback needs at least one media URI');
    this.hooks = hooks;
    this.id = init.id;
    this.media = [...init.media];
    this.target = init.target;
    this.language = init.language;
    this.offsetMs = Math.max(0, init.offsetMs ?? 0);
    // skipms 0 means the default, as in Asterisk.
    this.skipMs = init.skipMs && init.skipMs > 0 ? init.skipMs : DEFAULT_SKIP_MS;
    this.targetRate = init.rate ?? PLAYBACK_RATE;
  }

  get targetUri(): string {
    return `${this.target.kind}:${this.target.id}`;
  }

  get finished(): boolean {
    return this.state === 'complete' || this.state === 'failed';
  }

  snapshot(): PlaybackJson {
    // Asterisk's field order; next_media_uri only while another item follows.
    return {
      id: this.id,
      media_uri: this.media[this.index],
      ...(this.index + 1 < this.media.length ? { next_media_uri: this.media[this.index + 1] } : {}),
      target_uri: this.targetUri,
      language: this.language,
      state: this.state,
    };
  }

  /** The item playing now, if any. */
  get current(): MediaSource | undefined {
    return this.source;
  }

  /** Leaves the queue and begins the first item (open() raises its PlaybackStarted). */
  start(): void {
    if (this.state !== 'enqueued') return;
    this.state = 'playing';
    this.open(0);
  }

  /**
   * Fills one 20 ms frame at `rate`. False when the playback has ended (nothing written); the
   * caller then calls finish() with `outcome`.
   */
  fill(dst: Int16Array, rate: SampleRate = PLAYBACK_RATE): boolean {
    if (this.state !== 'playing' || this.outcome) return false;
    this.targetRate = rate;
    if (this.paused) {
      dst.fill(0);
      return true;
    }
    // Each round either fills the frame or moves past at least one item (an item ending exactly
    // at a frame's end may hand over to one at another rate).
    while (this.source) {
      if (this.adapter.fill(dst, rate, this.source.rate, this.readItems)) return true;
    }
    return false;
  }

  /**
   * One frame at the rate of the item playing, running on into the next items while they have
   * that rate; the rest of the frame is silence. False when nothing at all was read.
   */
  private readonly readItems = (dst: Int16Array): boolean => {
    const rate = this.source?.rate;
    let written = 0;
    while (written < dst.length && this.source && this.source.rate === rate) {
      written += this.source.read(dst, written);
      if (written < dst.length) this.advance();
    }
    if (written === 0) return false;
    dst.fill(0, written);
    return true;
  };

  /** How the playback ends when fill() reports the end. */
  get endState(): 'complete' | 'failed' {
    return this.outcome ?? 'complete';
  }

  /** Ends the playback as ARI's stop does (the lifecycle verb, see util/lifecycle.ts). */
  end(): void {
    this.hooks.stop(this);
  }

  /** Ends the playback in `state` and raises PlaybackFinished (once). */
  finish(state: 'complete' | 'failed'): void {
    if (this.finished) return;
    const remote = this.remote;
    this.remote = undefined;
    remote?.finished();
    this.source = undefined;
    this.paused = false;
    this.state = state;
    this.hooks.raise(this, 'PlaybackFinished');
  }

  /** A control operation on the item playing now; the caller has checked the playback is playing. */
  control(operation: PlaybackOperation): void {
    const remote = this.remote;
    remote?.pull();
    this.apply(operation);
    // Unpausing raised PlaybackStarted, whose subscribers may have stopped the playback meanwhile.
    if (this.remote === remote) remote?.push(this.paused);
  }

  private apply(operation: PlaybackOperation): void {
    switch (operation) {
      case 'pause':
        this.paused = true;
        return;
      case 'unpause':
        // As res_stasis_playback: leaving the pause is the playback playing again, PlaybackStarted
        // (an unpause while playing changes nothing and raises nothing).
        if (!this.paused) return;
        this.paused = false;
        this.hooks.raise(this, 'PlaybackStarted');
        return;
      case 'restart':
        this.source?.restart();
        return;
      case 'reverse':
        this.source?.skip(-this.skipMs);
        return;
      case 'forward':
        this.source?.skip(this.skipMs);
        return;
    }
  }

  /** The current item ended: on to the next one, or out of items. */
  private advance(): void {
    if (this.index + 1 < this.media.length) {
      this.hooks.raise(this, 'PlaybackContinuing');
      this.open(this.index + 1);
    } else {
      this.source = undefined;
      this.outcome = 'complete';
    }
  }

  /** Opens item `index`; items that cannot be played are passed over as Asterisk does. */
  private open(index: number): void {
    for (let i = index; i < this.media.length; i++) {
      this.index = i;
      // Every item starts with its own PlaybackStarted, as Asterisk raises one before playing each
      // item of a list (Started, Continuing, Started, ..., Finished), even one that then fails.
      this.hooks.raise(this, 'PlaybackStarted');
      if (this.finished) return;
      const uri = this.media[i];
      const result = this.hooks.open(uri, this.language, i === 0 ? this.offsetMs : 0, this.targetRate);
      if ('source' in result) {
        this.source = result.source;
        return;
      }
      this.hooks.failedItem(this, uri, result.failure);
      if (i + 1 < this.media.length) {
        this.hooks.raise(this, 'PlaybackContinuing');
      } else {
        this.source = undefined;
        this.outcome = 'failed';
      }
    }
  }
}
