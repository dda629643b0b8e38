// Audio a channel hears from the server itself rather than from a bridge: playback, music on
// hold, silence. Each channel has one slot per kind; on every media clock tick the highest kind
// present writes 20 ms to the channel, and a bridge leaves that channel alone meanwhile. A channel
// whose top generator plays elsewhere for now (its technology plays a sound by itself, the playback
// fast path) rests: it is off the ticks until woken, and none of its generators writes.
import { samplesPerFrame, type SampleRate } from '../media/frame.ts';
import type { Channel } from './channels/channel.ts';
import { nativeRateOf } from './channels/native-rate.ts';
import type { MediaEngine } from './media-engine.ts';

/**
 * Highest first: a playback interrupts music on hold, which replaces silence. `tones` are what the
 * core plays for an indication the technology could not show (indication-tones.ts).
 */
export const GENERATOR_KINDS = ['playback', 'tones', 'moh', 'silence'] as const;
export type GeneratorKind = (typeof GENERATOR_KINDS)[number];

export interface AudioGenerator {
  /** Fills `dst` (20 ms at `rate`, the channel's native rate); returns false when it has finished (nothing written). */
  fill(dst: Int16Array, rate: SampleRate): boolean;
  /** Called once when the generator finished by itself or was replaced/removed. */
  stopped?(reason: 'finished' | 'removed' | 'hangup'): void;
}

interface ChannelSlots {
  readonly channel: Channel;
  readonly generators: Map<GeneratorKind, AudioGenerator>;
  /** 20 ms at the channel's native rate (made again if that changes). */
  frame: { readonly rate: SampleRate; readonly samples: Int16Array };
  readonly onHangup: () => void;
  /** The generator whose audio the technology makes by itself for now: the channel is off the ticks. */
  resting: AudioGenerator | undefined;
}

function frameAt(rate: SampleRate): { readonly rate: SampleRate; readonly samples: Int16Array } {
  return { rate, samples: new Int16Array(samplesPerFrame(rate)) };
}

export class ChannelGenerators {
  private readonly byChannel = new Map<string, ChannelSlots>();
  /** The channels ticked: those of byChannel not resting. */
  private readonly ticking = new Map<string, ChannelSlots>();
  private readonly media: MediaEngine;
  /** On the media clock only while some channel has a generator, so an idle server's clock can rest. */
  private readonly onTick = (): void => this.tick();

  constructor(media: MediaEngine) {
    this.media = media;
  }

  get(channel: Channel, kind: GeneratorKind): AudioGenerator | undefined {
    return this.byChannel.get(channel.id)?.generators.get(kind);
  }

  /** Installs (or with undefined, removes) the generator of a kind on a channel. */
  set(channel: Channel, kind: GeneratorKind, generator: AudioGenerator | undefined): void {
    let slots = this.byChannel.get(channel.id);
    const previous = slots?.generators.get(kind);
    if (previous === generator) return;
    if (generator && !slots) {
      if (channel.hangingUp) {
        generator.stopped?.('hangup');
        return;
      }
      const created: ChannelSlots = {
        channel,
        generators: new Map(),
        frame: frameAt(nativeRateOf(channel)),
        onHangup: () => this.clear(created, 'hangup'),
        resting: undefined,
      };
      slots = created;
      this.byChannel.set(channel.id, created);
      this.tickAlso(created);
      channel.once('media-stopping', created.onHangup);
    }
    if (!slots) return;
    if (generator) slots.generators.set(kind, generator);
    else slots.generators.delete(kind);
    // Indication tones are interruptible, as Asterisk starts them (ast_playtones_start(…, 1)): a
    // file or music on hold started on the channel ends them rather than waiting under them.
    const interrupted = generator && (kind === 'playback' || kind === 'moh') ? slots.generators.get('tones') : undefined;
    if (interrupted) slots.generators.delete('tones');
    // The generator that rested the channel is gone: whoever is left speaks on the next tick.
    if (previous && slots.resting === previous) this.wake(slots);
    previous?.stopped?.('removed');
    interrupted?.stopped?.('removed');
    this.settle(slots);
  }

  /**
   * While `resting`, the channel is not ticked: `generator` (its top one) has its audio made by the
   * technology. Waking puts the channel back on the ticks. Nothing for a generator not installed.
   */
  rest(channel: Channel, generator: AudioGenerator, resting: boolean): void {
    const slots = this.byChannel.get(channel.id);
    if (!slots) return;
    if (resting) {
      if (![...slots.generators.values()].includes(generator)) return;
      slots.resting = generator;
      this.ticking.delete(channel.id);
      if (this.ticking.size === 0) this.media.offTick(this.onTick);
    } else if (slots.resting === generator) {
      this.wake(slots);
    }
  }

  /** Channels resting now. */
  get resting(): number {
    return this.byChannel.size - this.ticking.size;
  }

  private wake(slots: ChannelSlots): void {
    slots.resting = undefined;
    if (this.byChannel.get(slots.channel.id) === slots && !this.ticking.has(slots.channel.id)) this.tickAlso(slots);
  }

  private tickAlso(slots: ChannelSlots): void {
    if (this.ticking.size === 0) this.media.onTick(this.onTick);
    this.ticking.set(slots.channel.id, slots);
  }

  private settle(slots: ChannelSlots): void {
    if (slots.generators.size === 0) {
      this.byChannel.delete(slots.channel.id);
      slots.resting = undefined;
      if (this.ticking.delete(slots.channel.id) && this.ticking.size === 0) this.media.offTick(this.onTick);
      slots.channel.off('media-stopping', slots.onHangup);
      slots.channel.generatorActive = false;
    } else {
      slots.channel.generatorActive = true;
    }
  }

  private clear(slots: ChannelSlots, reason: 'hangup'): void {
    const generators = [...slots.generators.values()];
    slots.generators.clear();
    this.settle(slots);
    for (const generator of generators) generator.stopped?.(reason);
  }

  /**
   * The channel's next frame now rather than at the next tick: the audio its technology made by
   * itself just ended, and the frame after it (or the end of the playback) is due already.
   */
  catchUp(channel: Channel): void {
    const slots = this.ticking.get(channel.id);
    if (slots) this.speak(slots);
  }

  private tick(): void {
    for (const slots of this.ticking.values()) this.speak(slots);
  }

  private speak(slots: ChannelSlots): void {
    // A channel is played to at its own rate: a wideband one hears wideband prompts.
    const rate = nativeRateOf(slots.channel);
    if (slots.frame.rate !== rate) slots.frame = frameAt(rate);
    for (const kind of GENERATOR_KINDS) {
      const generator = slots.generators.get(kind);
      if (!generator) continue;
      if (generator.fill(slots.frame.samples, rate)) {
        slots.channel.writeGenerated(slots.frame);
        return;
      }
      // Finished by itself: drop it and let the next kind speak on the next tick.
      slots.generators.delete(kind);
      generator.stopped?.('finished');
      this.settle(slots);
      return;
    }
  }
}
