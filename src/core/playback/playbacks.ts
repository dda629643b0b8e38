// The playback engine: every live playback by id, one queue per channel and per bridge, and the
// events. A channel's playbacks play through its `playback` generator (which outranks music on
// hold and silence); a bridge's through a source mixed into what every member hears. Finished
// playbacks are forgotten at once (GET answers 404 afterwards). A channel's item may be played by
// its technology by itself (offload.ts, the playback fast path).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Applications, EventScope } from '../applications.ts';
import type { Bridge, BridgeAudioSource } from '../bridges/bridge.ts';
import type { AudioGenerator, ChannelGenerators } from '../channel-generators.ts';
import type { Channel } from '../channels/channel.ts';
import { nativeRateOf } from '../channels/native-rate.ts';
import type { SampleRate } from '../../media/frame.ts';
import { ConflictError, InvalidError, NotFoundError } from '../errors.ts';
import type { Sounds } from '../sounds.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { openMedia } from './media.ts';
import { mediaListProblem } from './media-limits.ts';
import { Playback, type PlaybackEventType, type PlaybackHooks, type PlaybackOperation, type PlaybackState } from './playback.ts';
import { PlaybackQueue } from './queue.ts';
import { PlaybackEntry } from './playback-entry.ts';
import { ChannelPlaybackOffload } from './offload.ts';
import type { EndableCollection } from '../../util/lifecycle.ts';

/** Characters of a media URI (and of the reason it failed) a failed playback's warning keeps. */
const MAX_LOGGED_URI = 256;

export interface PlaybacksOptions {
  readonly applications: Applications;
  readonly generators: ChannelGenerators;
  readonly sounds: Sounds;
  /** Confined lookup of a stored recording's file, for `recording:` media. */
  readonly findRecording: (name: string) => string | undefined;
  readonly log: Logger;
}

export interface PlayRequest {
  readonly media: readonly string[];
  readonly language: string;
  readonly offsetMs?: number;
  readonly skipMs?: number;
  /** An id of the caller's choosing; ConflictError when a live playback has it. */
  readonly playbackId?: string;
  /**
   * Not an ARI playback (the dialplan's Playback application): no events, not listed, not
   * controllable by id. It still queues with the target's other playbacks.
   */
  readonly internal?: boolean;
}

export class Playbacks implements EndableCollection {
  /** Every live playback, listed or internal, until PlaybackFinished has been told. */
  private readonly entries = new Map<Playback, PlaybackEntry>();
  /** The listed (ARI) playbacks by id. */
  private readonly byId = new Map<string, Playback>();
  private readonly channelQueues = new Map<Channel, PlaybackQueue>();
  private readonly bridgeQueues = new Map<Bridge, PlaybackQueue>();
  private readonly hooks: PlaybackHooks;

  constructor(private readonly options: PlaybacksOptions) {
    this.hooks = {
      open: (uri, language, offsetMs, rate) => openMedia(uri, language, offsetMs, { sounds: options.sounds, findRecording: options.findRecording }, rate),
      raise: (playback, type) => this.raised(playback, type),
      failedItem: (playback, uri, reason) => {
        // A client's media URI may be as long as its request (16 KiB): the log keeps its start and says how long it was.
        const media = uri.length > MAX_LOGGED_URI ? `${uri.slice(0, MAX_LOGGED_URI)}…` : uri;
        const why = reason.length > MAX_LOGGED_URI ? `${reason.slice(0, MAX_LOGGED_URI)}…` : reason;
        options.log.warn({ playback: playback.id, target: playback.targetUri, media, ...(media === uri ? {} : { mediaLength: uri.length }) }, `Playback failed for ${media}: ${why}`);
      },
      stop: (playback) => this.stopPlayback(playback),
    };
  }

  get(id: string): Playback | undefined {
    return this.byId.get(id);
  }

  require(id: string): Playback {
    const playback = this.byId.get(id);
    if (!playback) throw new NotFoundError('Playback not found');
    return playback;
  }

  list(): Playback[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }

  /** Plays to one channel (what the channel's far end hears), after its earlier playbacks. */
  playOnChannel(channel: Channel, request: PlayRequest): Playback {
    const entry = this.create({ kind: 'channel', id: channel.id }, request, channel.scope(), nativeRateOf(channel));
    let queue = this.channelQueues.get(channel);
    if (!queue) {
      queue = this.channelQueue(channel);
      this.channelQueues.set(channel, queue);
    }
    entry.queue = queue;
    queue.enqueue(entry.playback);
    return entry.playback;
  }

  /** Plays to everyone in a bridge, after the bridge's earlier playbacks. */
  playOnBridge(bridge: Bridge, request: PlayRequest): Playback {
    if (bridge.destroyed) throw new NotFoundError('Bridge not found');
    const entry = this.create({ kind: 'bridge', id: bridge.id }, request, { bridgeIds: [bridge.id] }, bridge.rate);
    let queue = this.bridgeQueues.get(bridge);
    if (!queue) {
      queue = this.bridgeQueue(bridge);
      this.bridgeQueues.set(bridge, queue);
    }
    entry.queue = queue;
    entry.bridge = bridge;
    // Remember who follows the bridge now: one that waits is not reported until it starts.
    entry.eventScope(this.options.applications);
    queue.enqueue(entry.playback);
    return entry.playback;
  }

  /** Stops a playback in any state: PlaybackFinished, and it is gone. */
  stop(id: string): void {
    const playback = this.require(id);
    this.stopPlayback(playback);
  }

  /** Stops every playback, listed or queued internally (shutdown; see util/lifecycle.ts). */
  endAll(): void {
    // Listed ones first, so none of them starts only to be stopped when an internal one ahead of it ends.
    for (const playback of new Set([...this.byId.values(), ...this.entries.keys()])) playback.end();
  }

  stopPlayback(playback: Playback): void {
    const queue = this.entries.get(playback)?.queue;
    if (queue) queue.stop(playback);
    else playback.finish('complete');
  }

  /**
   * A control operation on the item playing now. An unknown id is NotFoundError; a playback still
   * waiting in its queue is ConflictError.
   */
  control(id: string, operation: PlaybackOperation): void {
    const playback = this.require(id);
    if (playback.state !== 'playing') throw new ConflictError(`Can only ${operation} while media is playing`);
    playback.control(operation);
  }

  /** Resolves with the final state once the playback has finished. */
  finished(playback: Playback): Promise<PlaybackState> {
    const entry = this.entries.get(playback);
    // A playback without an entry has finished (entries last until PlaybackFinished has been told).
    return entry ? entry.whenFinished() : Promise.resolve(playback.state);
  }

  // ---- internals ------------------------------------------------------------------------------

  /** `rate`: what the target hears at now (the first item is opened for it). */
  private create(target: Playback['target'], request: PlayRequest, scope: EventScope, rate: SampleRate): PlaybackEntry {
    if (request.media.length === 0) throw new InvalidError('Missing parameter media');
    // Sizes are checked before anything exists: an oversized request leaves no Playback and no event.
    const problem = request.internal ? undefined : mediaListProblem(request.media);
    if (problem) throw new InvalidError(problem);
    const id = request.playbackId || randomUUID();
    if (!request.internal && this.byId.has(id)) throw new ConflictError(`Playback with id ${id} already exists`);
    const playback = new Playback(this.hooks, {
      id,
      media: request.media,
      target,
      language: request.language,
      offsetMs: request.offsetMs,
      skipMs: request.skipMs,
      rate,
    });
    const entry = new PlaybackEntry(playback, request.internal === true, scope);
    this.entries.set(playback, entry);
    if (!entry.internal) this.byId.set(id, playback);
    return entry;
  }

  private raised(playback: Playback, type: PlaybackEventType): void {
    const entry = this.entries.get(playback);
    if (!entry) return;
    if (!entry.internal) {
      this.options.applications.publish({ type, timestamp: formatAriDate(), playback: playback.snapshot() }, entry.eventScope(this.options.applications));
    }
    if (type !== 'PlaybackFinished') return;
    // The complete state lasts only as long as it takes to tell the subscribers.
    if (this.byId.get(playback.id) === playback) this.byId.delete(playback.id);
    this.entries.delete(playback);
    entry.settle();
  }

  private channelQueue(channel: Channel): PlaybackQueue {
    const generators = this.options.generators;
    let filling = false;
    const queue: PlaybackQueue = new PlaybackQueue(
      {
        attach: () => generators.set(channel, 'playback', generator),
        // Running empty inside fill() is reported by fill() returning false; the generators then
        // drop the generator themselves.
        detach: () => {
          if (!filling && generators.get(channel, 'playback') === generator) generators.set(channel, 'playback', undefined);
        },
      },
      (emptied) => {
        if (this.channelQueues.get(channel) === emptied) this.channelQueues.delete(channel);
      },
    );
    const generator: AudioGenerator = {
      fill: (dst, rate) => {
        filling = true;
        try {
          if (!queue.fill(dst, rate)) return false;
          offload.consider(queue.playing);
          return true;
        } finally {
          filling = false;
        }
      },
      // Hangup, or replaced by another playback generator: whatever is left ends.
      stopped: (reason) => {
        if (reason !== 'finished') queue.stopAll();
      },
    };
    const offload = new ChannelPlaybackOffload(channel, generators, generator);
    return queue;
  }

  private bridgeQueue(bridge: Bridge): PlaybackQueue {
    // A destroyed bridge no longer mixes: what is queued or playing into it ends when it announces its end.
    const onDestroyed = (): void => queue.stopAll();
    const queue: PlaybackQueue = new PlaybackQueue(
      {
        attach: () => bridge.addSource(source),
        detach: () => bridge.removeSource(source),
      },
      (emptied) => {
        if (this.bridgeQueues.get(bridge) === emptied) this.bridgeQueues.delete(bridge);
        bridge.off('destroyed', onDestroyed);
      },
    );
    const source: BridgeAudioSource = {
      // A paused bridge playback contributes nothing to the mix.
      fill: (dst, rate) => (queue.playing?.paused ? false : queue.fill(dst, rate)),
    };
    bridge.once('destroyed', onDestroyed);
    return queue;
  }
}
