// TALK_DETECT: talk detection on a channel's audio, as Asterisk's func_talkdetect.
//   Set(TALK_DETECT(set)=[dsp_silence_threshold[,dsp_talking_threshold]])   (ARI: setChannelVar)
//   Set(TALK_DETECT(remove)=)
// The frames a channel delivers (the audio from its far end) are taken once per media clock tick;
// a tick without a frame counts as silence, so the end of talking is found even when the far end
// stops sending. ChannelTalkingStarted and ChannelTalkingFinished (with `duration`, the talking
// time in ms) are raised for the channel.
import { FrameSlot } from '../media/frame-slot.ts';
import { samplesPerFrame, type Frame } from '../media/frame.ts';
import { DEFAULT_SILENCE_THRESHOLD_MS, DEFAULT_TALKING_THRESHOLD_MS, TalkDetector } from '../media/talk-detector.ts';
import type { Channel, FrameListener } from './channels/channel.ts';
import type { Channels } from './channels/channels.ts';
import { InvalidError } from './errors.ts';
import type { MediaEngine } from './media-engine.ts';

const RATE = 8000;

interface Detection {
  readonly channel: Channel;
  detector: TalkDetector;
  readonly slot: FrameSlot;
  readonly onFrame: FrameListener;
  readonly onHangup: () => void;
}

export interface TalkDetectOptions {
  /** Silence (ms) that ends talking; Asterisk's dsp_silence_threshold, default 2500. */
  readonly silenceThresholdMs?: number;
  /** Talking (ms) needed before talking is reported; dsp_talking_threshold, default 160. */
  readonly talkingThresholdMs?: number;
}

/** Parses the value written to TALK_DETECT(set): `[silence_ms[,talking_threshold]]`. */
export function parseTalkDetectValue(value: string): TalkDetectOptions {
  const [silence, talking] = value.split(',').map((part) => part.trim());
  const parse = (text: string | undefined, what: string): number | undefined => {
    if (text === undefined || text === '') return undefined;
    if (!/^\d+$/.test(text) || Number(text) <= 0) throw new InvalidError(`Invalid value for ${what}: ${text}`);
    return Number(text);
  };
  return { silenceThresholdMs: parse(silence, 'dsp_silence_threshold'), talkingThresholdMs: parse(talking, 'dsp_talking_threshold') };
}

export class TalkDetection {
  private readonly byChannel = new Map<string, Detection>();
  private readonly silence = new Int16Array(samplesPerFrame(RATE));
  private started = false;

  constructor(
    private readonly media: MediaEngine,
    private readonly channels: Channels,
  ) {
    channels.functions.registerWriter('TALK_DETECT', (channel, args, value) => {
      if (!this.started) throw new InvalidError('Talk detection is not available');
      this.write(channel, args, value);
    });
  }

  /** Starts answering TALK_DETECT for this core's channels. */
  start(): void {
    if (this.started) return;
    this.started = true;
    // The clock is listened to only while some channel has detection on (set/detach), so an
    // idle server's clock can rest.
    if (this.byChannel.size > 0) this.media.onTick(this.tick);
  }

  stop(): void {
    this.started = false;
    this.media.offTick(this.tick);
    for (const detection of [...this.byChannel.values()]) this.detach(detection);
  }

  isEnabled(channel: Channel): boolean {
    return this.byChannel.has(channel.id);
  }

  /** Enables detection (or changes its thresholds, starting afresh). */
  set(channel: Channel, options: TalkDetectOptions = {}): void {
    if (channel.hangingUp) return;
    const detector = new TalkDetector({
      silenceThresholdMs: options.silenceThresholdMs ?? DEFAULT_SILENCE_THRESHOLD_MS,
      talkingThresholdMs: options.talkingThresholdMs ?? DEFAULT_TALKING_THRESHOLD_MS,
    });
    const existing = this.byChannel.get(channel.id);
    if (existing) {
      existing.detector = detector;
      return;
    }
    const slot = new FrameSlot(RATE);
    const detection: Detection = {
      channel,
      detector,
      slot,
      onFrame: (frame: Frame) => slot.put(frame),
      onHangup: () => this.detach(detection),
    };
    if (this.byChannel.size === 0 && this.started) this.media.onTick(this.tick);
    this.byChannel.set(channel.id, detection);
    channel.addFrameListener(detection.onFrame);
    channel.once('hangup', detection.onHangup);
  }

  /** Disables detection; InvalidError when it was not enabled (Asterisk refuses the write too). */
  remove(channel: Channel): void {
    const detection = this.byChannel.get(channel.id);
    if (!detection) throw new InvalidError(`TALK_DETECT is not enabled on ${channel.name}`);
    this.detach(detection);
  }

  /** The TALK_DETECT function writer. */
  write(channel: Channel, args: string, value: string): void {
    switch (args.trim().toLowerCase()) {
      case 'set':
        this.set(channel, parseTalkDetectValue(value));
        return;
      case 'remove':
        this.remove(channel);
        return;
      default:
        throw new InvalidError(`TALK_DETECT: unknown action '${args}' (use set or remove)`);
    }
  }

  private detach(detection: Detection): void {
    if (this.byChannel.get(detection.channel.id) !== detection) return;
    this.byChannel.delete(detection.channel.id);
    if (this.byChannel.size === 0) this.media.offTick(this.tick);
    detection.channel.removeFrameListener(detection.onFrame);
    detection.channel.off('hangup', detection.onHangup);
  }

  private readonly tick = (): void => {
    for (const detection of this.byChannel.values()) {
      const samples = detection.slot.take() ?? this.silence;
      const transition = detection.detector.process(samples, RATE);
      if (transition === 'none') continue;
      const { channel } = detection;
      if (channel.hangingUp) continue;
      if (transition === 'started') channel.talkingStarted();
      else channel.talkingFinished(detection.detector.lastTalkDurationMs);
    }
  };
}
