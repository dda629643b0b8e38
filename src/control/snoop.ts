// Snoop channels (ARI `snoop`): a channel `Snoop/<target id>-<n>` that spies on a target channel
// and/or whispers to it, then enters an application like any other channel.
//
// - Spy `in` is the audio the target receives from its far end (its delivered frames), `out` the
//   audio written towards the target's far end, `both` their sum. The snoop channel delivers it as
//   its own audio: exactly one frame per media clock tick (silence when the target is quiet), so
//   bridging or recording the snoop channel works like any channel.
// - Whisper: audio written to the snoop channel is added to what the target's far end hears
//   (`out`), to what the target delivers (`in`), or both. A whisper frame rides on the target's next
//   frame in that direction; when the target has none by the following tick it goes on its own.
//
// The snoop channel works at the target's native rate as it was when the snoop began (as
// Asterisk's snoop takes the rate of the target's read format): a wideband call is spied on and
// whispered to in wideband. The snoop channel's native format says so (slin, slin16, ...).
//
// The snoop channel hangs up when the target does.
import { accumulate, clearSum, saturateSum } from '../media/mix.ts';
import { FrameSlot } from '../media/frame-slot.ts';
import { INT16_MAX, INT16_MIN, samplesPerFrame, type Frame, type SampleRate } from '../media/frame.ts';
import { nativeRateOf } from '../core/channels/native-rate.ts';
import { createResampler, type Resampler } from '../media/resample.ts';
import { CAUSE } from '../core/channels/causes.ts';
import type { AudioHook, Channel } from '../core/channels/channel.ts';
import type { Channels } from '../core/channels/channels.ts';
import { splitAppArgs } from './originate.ts';
import type { ChannelDriver } from '../core/channels/technology.ts';
import { InvalidError } from '../core/errors.ts';
import type { MediaEngine } from '../core/media-engine.ts';
import type { Stasis } from '../core/stasis.ts';

export type SnoopDirection = 'none' | 'both' | 'out' | 'in';

export interface SnoopRequest {
  readonly spy: SnoopDirection;
  readonly whisper: SnoopDirection;
  readonly app: string;
  readonly appArgs?: string;
  readonly snoopId?: string;
}

export interface SnoopServices {
  readonly channels: Channels;
  readonly stasis: Stasis;
  readonly media: MediaEngine;
  readonly log?: { warn(details: Record<string, unknown>, message: string): void };
}

/** The signed linear format of a rate, by Asterisk's name. */
const SLIN_BY_RATE: Readonly<Record<SampleRate, string>> = { 8000: 'slin', 16000: 'slin16', 24000: 'slin24', 48000: 'slin48' };

const hasIn = (direction: SnoopDirection): boolean => direction === 'in' || direction === 'both';
const hasOut = (direction: SnoopDirection): boolean => direction === 'out' || direction === 'both';

/**
 * Adds the pending whisper (at the snoop's rate) to frames of one direction, at whatever rate they
 * come; buffers are made again only when the frames' rate changes, never per frame.
 */
class WhisperMixer {
  private out: { rate: SampleRate; samples: Int16Array } = { rate: 8000, samples: new Int16Array(0) };
  private converted = new Int16Array(0);
  private resampler: Resampler | undefined;

  constructor(private readonly whisperRate: SampleRate) {}

  mix(frame: Frame, whisper: Int16Array): Frame {
    let added = whisper;
    if (this.out.rate !== frame.rate || this.out.samples.length === 0) {
      this.out = { rate: frame.rate, samples: new Int16Array(samplesPerFrame(frame.rate)) };
      this.converted = new Int16Array(samplesPerFrame(frame.rate));
      this.resampler = frame.rate === this.whisperRate ? undefined : createResampler(this.whisperRate, frame.rate);
    }
    if (this.resampler) {
      this.resampler.process(whisper, this.converted);
      added = this.converted;
    }
    const out = this.out;
    const src = frame.samples;
    const dst = out.samples;
    const count = Math.min(src.length, dst.length, added.length);
    for (let i = 0; i < count; i++) {
      const value = src[i] + added[i];
      dst[i] = value > INT16_MAX ? INT16_MAX : value < INT16_MIN ? INT16_MIN : value;
    }
    return out;
  }
}

/** The snoop channel's driver: what is written to it is the whisper; what it delivers is the spy. */
class Snoop implements ChannelDriver {
  channel!: Channel;
  /** The rate of the spy and the whisper: the target's native rate when the snoop began. */
  private readonly rate: SampleRate;
  private readonly spyIn: FrameSlot | undefined;
  private readonly spyOut: FrameSlot | undefined;
  private readonly whisperIn: boolean;
  private readonly whisperOut: boolean;
  private readonly whisperSlot: FrameSlot;
  /** The whisper frame waiting for the target's next frame, and which directions still want it. */
  private readonly whisperFrame: { rate: SampleRate; samples: Int16Array };
  private pendingIn = false;
  private pendingOut = false;
  private readonly readMixer: WhisperMixer;
  private readonly writeMixer: WhisperMixer;
  private readonly spySum: Int32Array;
  private readonly spyFrame: { rate: SampleRate; samples: Int16Array };
  /** Set while a lone whisper frame passes the target's hooks, so it is neither spied on nor mixed again. */
  private flushing = false;
  private attached = false;

  constructor(
    private readonly target: Channel,
    private readonly media: MediaEngine,
    spy: SnoopDirection,
    whisper: SnoopDirection,
  ) {
    this.rate = nativeRateOf(target);
    const frameSamples = samplesPerFrame(this.rate);
    this.spyIn = hasIn(spy) ? new FrameSlot(this.rate) : undefined;
    this.spyOut = hasOut(spy) ? new FrameSlot(this.rate) : undefined;
    this.whisperSlot = new FrameSlot(this.rate);
    this.whisperFrame = { rate: this.rate, samples: new Int16Array(frameSamples) };
    this.readMixer = new WhisperMixer(this.rate);
    this.writeMixer = new WhisperMixer(this.rate);
    this.spySum = new Int32Array(frameSamples);
    this.spyFrame = { rate: this.rate, samples: new Int16Array(frameSamples) };
    this.whisperIn = hasIn(whisper);
    this.whisperOut = hasOut(whisper);
  }

  attach(channel: Channel): void {
    this.channel = channel;
    this.attached = true;
    if (this.spyIn || this.whisperIn) this.target.addAudioHook('read', this.onTargetRead);
    if (this.spyOut || this.whisperOut) this.target.addAudioHook('write', this.onTargetWrite);
    this.target.once('hangup', this.onTargetHangup);
    this.media.onTick(this.tick);
  }

  private detach(): void {
    if (!this.attached) return;
    this.attached = false;
    this.target.removeAudioHook('read', this.onTargetRead);
    this.target.removeAudioHook('write', this.onTargetWrite);
    this.target.off('hangup', this.onTargetHangup);
    this.media.offTick(this.tick);
  }

  private readonly onTargetHangup = (): void => {
    this.detach();
    if (!this.channel.hangingUp) this.channel.hangup(CAUSE.normal);
  };

  private readonly onTargetRead: AudioHook = (frame) => {
    if (this.flushing) return frame;
    this.spyIn?.put(frame);
    if (!this.pendingIn) return frame;
    this.pendingIn = false;
    return this.readMixer.mix(frame, this.whisperFrame.samples);
  };

  private readonly onTargetWrite: AudioHook = (frame) => {
    if (this.flushing) return frame;
    this.spyOut?.put(frame);
    if (!this.pendingOut) return frame;
    this.pendingOut = false;
    return this.writeMixer.mix(frame, this.whisperFrame.samples);
  };

  private readonly tick = (): void => {
    const target = this.target;
    // A whisper the target had no frame to carry since the last tick goes on its own.
    if (this.pendingOut || this.pendingIn) {
      this.flushing = true;
      try {
        if (this.pendingOut) target.write(this.whisperFrame);
        if (this.pendingIn) target.deliver(this.whisperFrame);
      } finally {
        this.flushing = false;
        this.pendingOut = false;
        this.pendingIn = false;
      }
    }
    const whisper = this.whisperSlot.take();
    if (whisper) {
      this.whisperFrame.samples.set(whisper);
      this.pendingOut = this.whisperOut;
      this.pendingIn = this.whisperIn;
    }
    if (!this.spyIn && !this.spyOut) {
      // Whisper only: the snoop channel still has a steady (silent) frame stream.
      this.spyFrame.samples.fill(0);
    } else {
      const sum = this.spySum;
      clearSum(sum);
      const heard = this.spyIn?.take();
      if (heard) accumulate(sum, heard);
      const said = this.spyOut?.take();
      if (said) accumulate(sum, said);
      saturateSum(sum, this.spyFrame.samples);
    }
    if (!this.channel.hangingUp) this.channel.deliver(this.spyFrame);
  };

  // ---- ChannelDriver: the snoop channel's own far end is this object ---------------------------

  call(): void {}

  answer(): void {}

  hangup(): void {
    this.detach();
  }

  indicate(): void {}

  sendDigit(): void {}

  writeFrame(frame: Frame): void {
    if (this.whisperIn || this.whisperOut) this.whisperSlot.put(frame);
  }

  /** Signed linear at the snoop's rate, so a bridge mixes the snoop channel at that rate. */
  nativeFormat(): string {
    return SLIN_BY_RATE[this.rate];
  }
}

/**
 * Creates the snoop channel on `target`, answered, and puts it into `request.app` (StasisStart with
 * the app args; the application is subscribed to it). InvalidError for spy and whisper both none
 * or no application; ConflictError for a snoop id in use. When the application is not active the
 * channel is hung up at once, as Asterisk's snoop thread does when Stasis() fails.
 */
export function createSnoop(services: SnoopServices, target: Channel, request: SnoopRequest): Channel {
  if (request.spy === 'none' && request.whisper === 'none') throw new InvalidError('Direction must be specified for at least spy or whisper');
  if (!request.app) throw new InvalidError('Application name is required');
  if (target.hangingUp) throw new InvalidError('Channel is hanging up');
  const { channels } = services;
  channels.checkId(request.snoopId);
  const snoop = new Snoop(target, services.media, request.spy, request.whisper);
  const channel = channels.create({
    id: request.snoopId || undefined,
    name: `Snoop/${target.id}-${channels.newNameSuffix('Snoop')}`,
    technology: 'Snoop',
    direction: 'inbound',
    state: 'Up',
    language: target.language,
  }, () => snoop);
  snoop.attach(channel);
  if (!services.stasis.enter(channel, request.app, splitAppArgs(request.appArgs))) {
    services.log?.warn({ channel: channel.name, app: request.app }, 'Stasis application is not registered; hanging the snoop channel up');
    channel.hangup(CAUSE.normal);
  }
  return channel;
}
