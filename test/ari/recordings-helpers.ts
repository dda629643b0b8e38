// Shared by the recordings tests: a tone source that writes into a channel on the media clock,
// a strict WAV header parser, tone measurements, and event waits.
import assert from 'node:assert/strict';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { MediaEngine } from '../../src/core/media-engine.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import type { EventSocket } from '../helpers/server.ts';

export type Json = Record<string, any>;

/**
 * Writes 20 ms frames into a channel on every media clock tick: a phase-continuous sine, or
 * nothing at all (the recording then records silence). Optionally counts down a number of tone
 * ticks, then goes quiet by itself.
 */
export class ToneFeeder {
  private frequency = 0;
  private amplitude = 0;
  private phase = 0;
  private remaining = Infinity;
  private gate: (() => boolean) | undefined;
  private readonly frame = { rate: 8000 as const, samples: new Int16Array(160) };
  ticksWritten = 0;

  constructor(
    private readonly media: MediaEngine,
    private readonly channel: Channel,
  ) {
    media.onTick(this.onTick);
  }

  /** Plays `frequency` at peak `amplitude`; with `ticks`, only for that many frames. */
  tone(frequency: number, amplitude: number, ticks = Infinity): this {
    this.frequency = frequency;
    this.amplitude = amplitude;
    this.remaining = ticks;
    return this;
  }

  /** Writes nothing. */
  quiet(): this {
    this.frequency = 0;
    return this;
  }

  /** Holds the tone back until `open` holds (checked every tick). */
  after(open: () => boolean): this {
    this.gate = open;
    return this;
  }

  stop(): void {
    this.media.offTick(this.onTick);
  }

  private readonly onTick = (): void => {
    if (this.frequency === 0 || this.remaining <= 0 || this.channel.hangingUp) return;
    if (this.gate) {
      if (!this.gate()) return;
      this.gate = undefined;
    }
    const step = (2 * Math.PI * this.frequency) / 8000;
    const samples = this.frame.samples;
    for (let i = 0; i < samples.length; i++) {
      samples[i] = Math.round(this.amplitude * Math.sin(this.phase));
      this.phase += step;
      if (this.phase > 2 * Math.PI) this.phase -= 2 * Math.PI;
    }
    this.remaining--;
    this.ticksWritten++;
    this.channel.write(this.frame);
  };
}

export interface ParsedWav {
  readonly riffSize: number;
  readonly fmtSize: number;
  readonly formatTag: number;
  readonly channels: number;
  readonly rate: number;
  readonly byteRate: number;
  readonly blockAlign: number;
  readonly bitsPerSample: number;
  readonly dataSize: number;
  readonly samples: Int16Array;
}

/** Parses a canonical 44-byte-header PCM WAV and checks that every size field agrees with the file. */
export function parseWav(bytes: Buffer): ParsedWav {
  assert.ok(bytes.length >= 44, `a WAV file has a 44-byte header (got ${bytes.length} bytes)`);
  assert.equal(bytes.toString('latin1', 0, 4), 'RIFF');
  assert.equal(bytes.toString('latin1', 8, 12), 'WAVE');
  assert.equal(bytes.toString('latin1', 12, 16), 'fmt ');
  assert.equal(bytes.toString('latin1', 36, 40), 'data');
  const wav: ParsedWav = {
    riffSize: bytes.readUInt32LE(4),
    fmtSize: bytes.readUInt32LE(16),
    formatTag: bytes.readUInt16LE(20),
    channels: bytes.readUInt16LE(22),
    rate: bytes.readUInt32LE(24),
    byteRate: bytes.readUInt32LE(28),
    blockAlign: bytes.readUInt16LE(32),
    bitsPerSample: bytes.readUInt16LE(34),
    dataSize: bytes.readUInt32LE(40),
    samples: new Int16Array(0),
  };
  assert.equal(wav.riffSize, bytes.length - 8, 'RIFF size = file size - 8');
  assert.equal(wav.dataSize, bytes.length - 44, 'data size = file size - header');
  assert.equal(wav.fmtSize, 16);
  assert.equal(wav.formatTag, 1, 'PCM');
  assert.equal(wav.channels, 1);
  assert.equal(wav.bitsPerSample, 16);
  assert.equal(wav.blockAlign, 2);
  assert.equal(wav.byteRate, wav.rate * 2);
  const samples = new Int16Array(wav.dataSize / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(44 + i * 2);
  return { ...wav, samples };
}

/** Peak amplitude of the `frequency` component of samples[start, end). */
export function toneAmplitude(samples: Int16Array, frequency: number, rate: number, start = 0, end = samples.length): number {
  return powerToAmplitude(goertzelPower(samples, frequency, rate, start, end));
}

/** Frames of `size` samples that are entirely zero. */
export function silentFrames(samples: Int16Array, size: number): number[] {
  const silent: number[] = [];
  for (let frame = 0; frame * size < samples.length; frame++) {
    let zero = true;
    for (let i = frame * size; i < Math.min(samples.length, (frame + 1) * size); i++) {
      if (samples[i] !== 0) {
        zero = false;
        break;
      }
    }
    if (zero) silent.push(frame);
  }
  return silent;
}

/** The next event of `type` for which `match` holds, skipping others. */
export async function nextEvent(socket: EventSocket, type: string, match: (event: Json) => boolean = () => true, timeoutMs = 15_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`timed out waiting for ${type}`);
    const event = (await socket.next(remaining)) as Json;
    if (event.type === type && match(event)) return event;
  }
}

export const recordingNamed =
  (name: string) =>
  (event: Json): boolean =>
    event.recording?.name === name;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** When a request went to the server and when its answer (or the event it waits for) came back: the server acted in between. */
export interface Exchange {
  readonly sentAt: number;
  readonly answeredAt: number;
  /** The watched media clocks' dropped ticks when the request was sent, and when it was answered. */
  readonly droppedBefore: number;
  readonly droppedAfter: number;
}

/** What `timed` reads of a media clock: how many ticks it dropped after a stall. */
interface DroppingClock {
  readonly skippedTicks: number;
}

const watchedClocks = new Set<DroppingClock>();

/**
 * Counts the ticks these media clocks drop in the spans `timed` measures. A clock stalled longer
 * than its catch-up limit (a loaded machine) drops the missing ticks: no frame is fed or recorded
 * for them, so a recording is that much shorter than the wall-clock span, and rightly so.
 */
export function watchDroppedTicks(...clocks: DroppingClock[]): void {
  for (const clock of clocks) watchedClocks.add(clock);
}

function droppedTicks(): number {
  let dropped = 0;
  for (const clock of watchedClocks) dropped += clock.skippedTicks;
  return dropped;
}

/** Ticks the watched clocks dropped since `from` was sent. */
export function droppedTicksSince(from: Exchange): number {
  return droppedTicks() - from.droppedBefore;
}

/** Runs `request`, noting when it was sent and when it was answered. */
export async function timed<T>(request: () => Promise<T>): Promise<Exchange & { readonly result: T }> {
  const droppedBefore = droppedTicks();
  const sentAt = Date.now();
  const result = await request();
  return { sentAt, answeredAt: Date.now(), droppedBefore, droppedAfter: droppedTicks(), result };
}

/**
 * Bounds in ms of audio the server wrote from `from` to `to`, as the wall clock allows them: at
 * least from `from`'s answer to `to`'s sending, at most from `from`'s sending to `to`'s answer,
 * with a 20 ms frame of slack at each end (the media clock ticks in frames). On a loaded machine
 * either gap may be long, so it is measured, not assumed; so are the 20 ms ticks the watched
 * clocks dropped in between (watchDroppedTicks), which lower the least.
 */
export function spanBounds(from: Exchange, to: Exchange): { shortest: number; longest: number } {
  const dropped = to.droppedAfter - from.droppedBefore;
  return { shortest: to.sentAt - from.answeredAt - 40 - 20 * dropped, longest: to.answeredAt - from.sentAt + 40 };
}
