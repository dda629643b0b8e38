// Indications a channel's technology could not show, made heard in band, as Asterisk's core does
// (main/channel.c, indicate_data_internal): when the driver cannot indicate ringing, busy or
// congestion (a SIP call already answered has no 180, 486 or 503 left to send), the tone of the
// channel's tone zone plays to the far end instead, until another such indication replaces it,
// `stop` (ARI's ring_stop, Asterisk's indication -1) ends it, a file or music on hold starts on the
// channel (channel-generators.ts), the channel enters a bridge, anything else writes a frame to it
// (Echo(), a callee's early media: the tone is interruptible), or it hangs up. Progress and the
// other indications play nothing and leave a tone playing, as there.
import type { SampleRate } from '../media/frame.ts';
import { ToneGenerator } from '../media/tone-generator.ts';
import type { ToneList } from '../media/tones.ts';
import { defaultToneZone, resolveTone, type ToneName } from '../media/tonezones.ts';
import type { AudioGenerator, ChannelGenerators } from './channel-generators.ts';
import type { Channel } from './channels/channel.ts';
import type { Indication } from './channels/driver.ts';
import { nativeRateOf } from './channels/native-rate.ts';

/** The tone of the zone each indication is emulated with; the others have none. */
const TONE_OF: Partial<Record<Indication, ToneName>> = { ringing: 'ring', busy: 'busy', congestion: 'congestion' };

/** One channel's tone: a generator at the channel's rate, made again if that rate changes. */
class IndicationTone implements AudioGenerator {
  #generator: ToneGenerator;

  constructor(
    private readonly tones: ToneList,
    rate: SampleRate,
    private readonly ended: () => void,
  ) {
    this.#generator = new ToneGenerator(tones, { rate });
  }

  fill(dst: Int16Array, rate: SampleRate): boolean {
    // A rate change is rare (a re-negotiated codec); the cadence restarts there.
    if (this.#generator.rate !== rate) this.#generator = new ToneGenerator(this.tones, { rate });
    return this.#generator.fill(dst) > 0;
  }

  stopped(): void {
    this.ended();
  }
}

export class IndicationTones {
  /** The channels a tone plays to, with what ends it (their entering a bridge, a frame written by another). */
  readonly #playing = new Map<Channel, { readonly tone: IndicationTone; readonly end: () => void }>();

  constructor(private readonly generators: ChannelGenerators) {}

  /** Whether an indication tone plays to the channel now. */
  playing(channel: Channel): boolean {
    return this.#playing.has(channel);
  }

  /** The channel's technology could not show `indication`: its tone plays, or with `stop` ends. */
  emulate(channel: Channel, indication: Indication): void {
    if (indication === 'stop') return this.stop(channel);
    const name = TONE_OF[indication];
    if (name === undefined || channel.hangingUp) return;
    // A bridge's audio interrupts the tone at once in Asterisk (an interruptible generator ends at
    // the first frame written to the channel): a bridged channel hears the bridge, not the tone.
    if (channel.bridgeId !== undefined) return;
    const tones = resolveTone(name, channel.toneZone ?? defaultToneZone()) ?? resolveTone(name, defaultToneZone());
    if (!tones) return;
    this.stop(channel);
    const tone = new IndicationTone(tones, nativeRateOf(channel), () => this.#forget(channel, tone));
    const end = (): void => this.stop(channel);
    this.#playing.set(channel, { tone, end });
    channel.once('bridge-entered', end);
    this.generators.set(channel, 'tones', tone);
    // Interruptible, as ast_playtones_start(…, 1) starts it: a frame anyone else writes (Echo()'s,
    // a callee's early media) ends it and goes out.
    if (this.#playing.get(channel)?.tone === tone) channel.interruptOnWrite = end;
  }

  /**
   * A tone of the channel's zone the core plays by itself (a blind transferer's dial tone), even in
   * a bridge, and not ended by frames written: the returned function ends it.
   */
  playTone(channel: Channel, name: ToneName): () => void {
    const tones = resolveTone(name, channel.toneZone ?? defaultToneZone()) ?? resolveTone(name, defaultToneZone());
    if (!tones || channel.hangingUp) return () => undefined;
    this.stop(channel);
    const tone = new IndicationTone(tones, nativeRateOf(channel), () => undefined);
    this.generators.set(channel, 'tones', tone);
    return () => {
      if (this.generators.get(channel, 'tones') === tone) this.generators.set(channel, 'tones', undefined);
    };
  }

  /** Ends the channel's indication tone, if one plays. */
  stop(channel: Channel): void {
    const playing = this.#playing.get(channel);
    if (playing && this.generators.get(channel, 'tones') === playing.tone) this.generators.set(channel, 'tones', undefined);
    else if (playing) this.#forget(channel, playing.tone);
  }

  /** The tone ended (stopped, replaced, interrupted, the channel hung up): nothing is left of it. */
  #forget(channel: Channel, tone: IndicationTone): void {
    const playing = this.#playing.get(channel);
    if (playing?.tone !== tone) return;
    this.#playing.delete(channel);
    channel.off('bridge-entered', playing.end);
    if (channel.interruptOnWrite === playing.end) channel.interruptOnWrite = undefined;
  }
}
