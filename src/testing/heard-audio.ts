// What a caller heard, on a timeline: 8 kHz samples where sample n was heard n/8 ms after the
// media started. The caller's bridge sends it a frame every 20 ms, silent or not, so positions
// are times; only the wait for the first frame is filled with silence.
import { CALLER_RATE, SAMPLES_PER_FRAME } from './audio-match.ts';

/** A caller keeps at most this much audio (10 minutes): the recording and every search work on it. */
const MAX_SECONDS = 600;
/** A wait for the first frame longer than this is filled with silence. */
const GAP_TOLERANCE_SAMPLES = 3 * SAMPLES_PER_FRAME;

export class HeardAudio {
  private buffer = new Int16Array(CALLER_RATE * 10);
  private used = 0;
  private startedAt: number | undefined;
  /** Set once the limit was reached; nothing more is kept. */
  full = false;
  private readonly listeners = new Set<() => void>();

  /** Milliseconds since the epoch at sample 0 (undefined before the first frame). */
  get start(): number | undefined {
    return this.startedAt;
  }

  get length(): number {
    return this.used;
  }

  /** Starts the timeline now (before any frame, so silence before the first one counts). */
  begin(now = Date.now()): void {
    this.startedAt ??= now;
  }

  /** Appends one received frame (linear 16-bit little-endian bytes), filling a gap before it. */
  push(bytes: Buffer, now = Date.now()): void {
    this.begin(now);
    const samples = Math.floor(bytes.length / 2);
    const expected = Math.floor(((now - this.startedAt!) * CALLER_RATE) / 1000) - samples;
    // Only the wait for the first frame is filled in. After it, the bridge sends a frame every
    // 20 ms (silence too), so the count of frames is the clock: a gap in their *arrival* is this
    // process being late to read them, and filling it would tear a prompt apart.
    if (this.used === 0 && expected > GAP_TOLERANCE_SAMPLES) this.append(new Int16Array(expected));
    const frame = new Int16Array(samples);
    for (let i = 0; i < samples; i++) frame[i] = bytes.readInt16LE(i * 2);
    this.append(frame);
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` after each frame until the returned function is called. */
  onFrame(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The sample position of a wall-clock time. */
  positionAt(time: number): number {
    if (this.startedAt === undefined) return 0;
    return Math.max(0, Math.floor(((time - this.startedAt) * CALLER_RATE) / 1000));
  }

  /** The wall-clock time of a sample position. */
  timeAt(position: number): number {
    return (this.startedAt ?? Date.now()) + (position * 1000) / CALLER_RATE;
  }

  /** Samples [from, to) (clamped) as a copy. */
  slice(from: number, to = this.used): Int16Array {
    return this.buffer.slice(Math.max(0, from), Math.min(to, this.used));
  }

  /** Samples [from, to) as floats for the correlation. */
  floats(from: number, to = this.used): Float32Array {
    return Float32Array.from(this.buffer.subarray(Math.max(0, from), Math.min(to, this.used)));
  }

  all(): Int16Array {
    return this.buffer.subarray(0, this.used);
  }

  private append(samples: Int16Array): void {
    if (this.full) return;
    const room = MAX_SECONDS * CALLER_RATE - this.used;
    if (samples.length > room) {
      this.full = true;
      samples = samples.subarray(0, room);
    }
    if (this.used + samples.length > this.buffer.length) {
      const grown = new Int16Array(Math.min(MAX_SECONDS * CALLER_RATE, Math.max(this.buffer.length * 2, this.used + samples.length)));
      grown.set(this.buffer.subarray(0, this.used));
      this.buffer = grown;
    }
    this.buffer.set(samples, this.used);
    this.used += samples.length;
  }
}
