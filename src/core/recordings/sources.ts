// What a recording listens to: the audio a channel receives from its far end, or the whole mix
// of a bridge. A source hands frames to the recording as they arrive (the recording takes one per
// clock tick), reports DTMF and the end of its target, and plays the start beep to the target.
import type { Frame, SampleRate } from '../../media/frame.ts';
import type { EventScope } from '../applications.ts';
import type { Bridge, BridgeAudioSource } from '../bridges/bridge.ts';
import type { AudioHook, Channel, FrameListener } from '../channels/channel.ts';
import { FrameSlot } from '../../media/frame-slot.ts';
import { samplesPerFrame } from '../../media/frame.ts';
import { RateAdapter } from '../../media/rate-adapter.ts';
import { nativeRateOf } from '../channels/native-rate.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../../media/recording-writer.ts';
import type { OffloadTarget } from './recording-offload.ts';

/** The start beep is made at 8 kHz (a 1 kHz tone needs no more). */
const BEEP_RATE: SampleRate = 8000;

export interface SourceHandlers {
  frame(frame: Frame): void;
  dtmf(digit: string): void;
  /** The channel hung up or the bridge was destroyed. */
  ended(): void;
}

export interface RecordingSource {
  /** `channel:<id>` or `bridge:<id>`. */
  readonly targetUri: string;
  /** Who receives the recording's events. */
  readonly scope: EventScope;
  attach(handlers: SourceHandlers): void;
  detach(): void;
  /** Called on every clock tick before the recording takes its frame. */
  tick(): void;
  /** Plays 20 ms at 8 kHz of the start beep to the target. */
  beep(samples: Int16Array): void;
}

type DtmfEvent = { digit: string; durationMs: number };

/** A channel's received audio (what its far end says). */
export class ChannelSource implements RecordingSource, OffloadTarget {
  readonly targetUri: string;
  readonly scope: EventScope;
  private handlers: SourceHandlers | undefined;
  private readonly beepFrame: { rate: 8000; samples: Int16Array } = { rate: 8000, samples: new Int16Array(0) };

  constructor(readonly channel: Channel) {
    this.targetUri = `channel:${channel.id}`;
    // The controlling application hears the end of the recording even if the channel has left it.
    const scope = channel.scope();
    this.scope = channel.stasis ? { ...scope, applications: [channel.stasis.app] } : scope;
  }

  private readonly onFrame: FrameListener = (frame) => this.handlers?.frame(frame);
  private readonly onDtmf = ({ digit }: DtmfEvent): void => this.handlers?.dtmf(digit);
  private readonly onHangup = (): void => this.handlers?.ended();

  /** Something besides this recording needs the channel's received audio here (a snoop, another recording, talk detection, a mute). */
  get neededHere(): boolean {
    return this.channel.hangingUp || this.channel.receivedAudioTakenBesides(this.onFrame);
  }

  /** The recording fast path: the channel's technology may write the recording (a SIP call's media worker). */
  get offloadable(): boolean {
    return !this.neededHere && this.channel.driver.recordAudio !== undefined;
  }

  readonly outlivesTechnology = false;

  handOver(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    return this.channel.driver.recordAudio?.(handover, ended);
  }

  watch(listener: () => void): void {
    this.channel.on('media-path', listener);
  }

  unwatch(listener: () => void): void {
    this.channel.off('media-path', listener);
  }

  attach(handlers: SourceHandlers): void {
    this.handlers = handlers;
    this.channel.addFrameListener(this.onFrame);
    this.channel.on('dtmf', this.onDtmf);
    this.channel.once('hangup', this.onHangup);
  }

  detach(): void {
    this.handlers = undefined;
    this.channel.removeFrameListener(this.onFrame);
    this.channel.off('dtmf', this.onDtmf);
    this.channel.off('hangup', this.onHangup);
  }

  tick(): void {
    if (this.channel.hangingUp) this.handlers?.ended();
  }

  beep(samples: Int16Array): void {
    this.beepFrame.samples = samples;
    this.channel.write(this.beepFrame);
  }
}

/**
 * A bridge's mix: every member's audio and the bridge's own sources, as the bridge publishes it
 * each tick. DTMF from any member ends the recording when asked to, as it would reach a channel
 * recording the bridge from inside. The events go to the bridge's subscribers and to every
 * application that controlled a member while the recording ran, so the end of a recording
 * whose bridge was destroyed (and its subscriptions dropped) still reaches them.
 */
export class BridgeSource implements RecordingSource, OffloadTarget {
  readonly targetUri: string;
  private handlers: SourceHandlers | undefined;
  private readonly applications = new Set<string>();
  private readonly mixFrame: { rate: SampleRate; samples: Int16Array } = { rate: 8000, samples: new Int16Array(0) };
  private readonly beepAdapter = new RateAdapter();
  private readonly members = new Map<string, Channel>();
  private pendingBeep: Int16Array | undefined;
  private beepSource: BridgeAudioSource | undefined;
  /** The bridge was already gone when the recording attached: it ends on its first tick. */
  private goneAtAttach = false;

  constructor(
    readonly bridge: Bridge,
    /** Whether members' DTMF is listened to (the recording ends on some digits). */
    private readonly listenDtmf: boolean,
  ) {
    this.targetUri = `bridge:${bridge.id}`;
  }

  get scope(): EventScope {
    return { bridgeIds: [this.bridge.id], applications: [...this.applications] };
  }

  /** The mix at the bridge's rate: the recording converts it to its file's. */
  private readonly onMix = (mix: Int16Array, rate: SampleRate): void => {
    this.mixFrame.rate = rate;
    this.mixFrame.samples = mix;
    this.handlers?.frame(this.mixFrame);
  };

  private readonly onDtmf = ({ digit }: DtmfEvent): void => this.handlers?.dtmf(digit);

  /** The bridge announced its end. */
  private readonly onDestroyed = (): void => this.handlers?.ended();

  attach(handlers: SourceHandlers): void {
    this.handlers = handlers;
    this.goneAtAttach = this.bridge.destroyed;
    this.bridge.addMixListener(this.onMix, true);
    this.bridge.once('destroyed', this.onDestroyed);
    this.syncMembers();
  }

  detach(): void {
    this.handlers = undefined;
    this.bridge.removeMixListener(this.onMix, true);
    this.bridge.off('destroyed', this.onDestroyed);
    for (const channel of this.members.values()) if (this.listenDtmf) channel.off('dtmf', this.onDtmf);
    this.members.clear();
    this.stopBeep();
  }

  /** The recording fast path: a bridge mixed in the media workers has the mixing worker write the mix. */
  get offloadable(): boolean {
    return !this.bridge.destroyed && this.bridge.mixedByTechnology;
  }

  /** The mix stopping takes a recording written there back by itself. */
  readonly neededHere = false;
  /** A mixing worker that dies leaves the bridge (and its recording) to the main thread. */
  readonly outlivesTechnology = true;

  handOver(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    return this.bridge.recordMix(handover, ended);
  }

  watch(listener: () => void): void {
    this.bridge.on('technology-mix', listener);
  }

  unwatch(listener: () => void): void {
    this.bridge.off('technology-mix', listener);
  }

  tick(): void {
    if (this.goneAtAttach) {
      this.handlers?.ended();
      return;
    }
    this.syncMembers();
  }

  beep(samples: Int16Array): void {
    if (!this.beepSource) {
      const source: BridgeAudioSource = {
        fill: (dst, rate) => (this.pendingBeep ? this.beepAdapter.fill(dst, rate, BEEP_RATE, this.takeBeep) : false),
      };
      this.beepSource = source;
      this.bridge.addSource(source);
    }
    this.pendingBeep = Int16Array.from(samples);
  }

  private readonly takeBeep = (dst: Int16Array): boolean => {
    const pending = this.pendingBeep;
    if (!pending) return false;
    dst.set(pending);
    this.pendingBeep = undefined;
    return true;
  };

  /** Takes the beep out of the bridge once it has played. */
  stopBeep(): void {
    if (!this.beepSource) return;
    this.bridge.removeSource(this.beepSource);
    this.beepSource = undefined;
    this.pendingBeep = undefined;
  }

  // Members come and go; the listeners follow them. Cheap when nothing changed (no allocation).
  private syncMembers(): void {
    if (!this.handlers) return;
    let current = this.members.size === this.bridge.size;
    if (current) {
      for (const channel of this.members.values()) {
        if (!this.bridge.has(channel)) {
          current = false;
          break;
        }
      }
    }
    if (current) return;
    for (const channel of this.members.values()) if (this.listenDtmf) channel.off('dtmf', this.onDtmf);
    this.members.clear();
    // The bridge's own member objects, not this server's channel table: a channel of another
    // cluster member is in the bridge through a stand-in that no table holds, and its DTMF (sent
    // over from its member) and its application must count as any member's.
    for (const channel of this.bridge.memberChannels()) {
      if (this.listenDtmf) channel.on('dtmf', this.onDtmf);
      if (channel.stasis) this.applications.add(channel.stasis.app);
      this.members.set(channel.id, channel);
    }
  }
}

/** Which of a channel's audio a MixMonitor-style source hears. */
export type ChannelAudioDirection = 'read' | 'write' | 'both';

/**
 * What a channel hears and says, as MixMonitor records it: the audio from its far end (`read`),
 * the audio towards it (`write`), or both mixed. Each tick it hands on one frame of what arrived
 * since the last (silence for a direction that was quiet); with `onlyWhileBridged` it hands on
 * nothing while the channel is not in a bridge. Both directions are kept at the channel's native
 * rate (as it was when the recording started) in preallocated slots, so the media path allocates
 * nothing.
 */
export class ChannelAudioSource implements RecordingSource {
  readonly targetUri: string;
  readonly scope: EventScope;
  private handlers: SourceHandlers | undefined;
  private readonly heard: FrameSlot;
  private readonly said: FrameSlot;
  private readonly mix: { rate: SampleRate; samples: Int16Array };

  constructor(
    readonly channel: Channel,
    private readonly direction: ChannelAudioDirection,
    private readonly onlyWhileBridged: boolean,
  ) {
    this.targetUri = `channel:${channel.id}`;
    this.scope = channel.scope();
    const rate = nativeRateOf(channel);
    this.heard = new FrameSlot(rate);
    this.said = new FrameSlot(rate);
    this.mix = { rate, samples: new Int16Array(samplesPerFrame(rate)) };
  }

  private readonly onRead: AudioHook = (frame) => {
    this.heard.put(frame);
    return frame;
  };

  private readonly onWrite: AudioHook = (frame) => {
    this.said.put(frame);
    return frame;
  };

  private readonly onHangup = (): void => this.handlers?.ended();

  attach(handlers: SourceHandlers): void {
    this.handlers = handlers;
    if (this.direction !== 'write') this.channel.addAudioHook('read', this.onRead);
    if (this.direction !== 'read') this.channel.addAudioHook('write', this.onWrite);
    this.channel.once('hangup', this.onHangup);
  }

  detach(): void {
    this.handlers = undefined;
    this.channel.removeAudioHook('read', this.onRead);
    this.channel.removeAudioHook('write', this.onWrite);
    this.channel.off('hangup', this.onHangup);
  }

  tick(): void {
    if (this.channel.hangingUp) {
      this.handlers?.ended();
      return;
    }
    const heard = this.heard.take();
    const said = this.said.take();
    if (this.onlyWhileBridged && this.channel.bridgeId === undefined) return;
    const out = this.mix.samples;
    for (let i = 0; i < out.length; i++) {
      const sum = (heard ? heard[i] : 0) + (said ? said[i] : 0);
      out[i] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
    }
    this.handlers?.frame(this.mix);
  }

  beep(): void {
    // MixMonitor starts silently.
  }
}
