// An adaptive jitter buffer for received RTP audio: packets are placed by RTP timestamp into a
// ring of samples (so reordering, duplicates and any packet size sort themselves out) and played
// out one 20 ms frame per media clock tick, a target delay behind the least delayed packet.
//
// - Delay: each packet's transit (arrival − timestamp) is compared with the smallest transit of
//   the last 2–4 seconds (the baseline, which also follows clock drift); the largest excess in
//   that window is the jitter peak, and the target delay is that peak plus one frame, kept
//   between the configured minimum and maximum. Playout follows the target a frame at a time:
//   a concealment frame to grow it (at once, when late packets threaten), a dropped frame to
//   shrink it (at most one per 100 ms).
// - Late packets (their audio already played) are dropped and counted.
// - A missing frame after audio is concealed by repeating the last frame at half, a quarter,
//   then an eighth of its level; after that nothing is delivered until audio returns.
// - A new SSRC, a timestamp jump beyond the ring, or three packets in a row far behind playout
//   (the sender's timeline stepped back) restart the buffer; a jump forward within the ring
//   moves the playout point at once.
// - Three packets in a row too late for even the maximum delay, while nothing is left to play,
//   mean the packets' transit stepped up (a sender that stalled and kept its timestamps going on
//   from before, as the media clock does when it drops ticks): the baseline forgets the smaller
//   transits of before and playout moves back onto the packets. Without that, the baseline only
//   forgot them when its window ran out (2–4 s) and every packet until then was dropped as late.
// - Packets read right after a stall of this thread are dated on time, not by their read (see
//   #dateArrival): the stall was ours, and measured as network jitter it grew the delay by a hold.
// - Bounded: the ring holds the maximum delay twice over plus half a second, rounded up to a
//   power of two (so timestamps map to slots across the 32-bit wrap). Nothing is allocated per
//   packet or per frame.
import { samplesPerFrame, type Frame, type SampleRate } from '../frame.ts';

export interface JitterBufferOptions {
  readonly rate: SampleRate;
  /** Least playout delay, ms. */
  readonly minDelayMs: number;
  /** Most playout delay, ms. */
  readonly maxDelayMs: number;
}

/** Length of one half of the window the baseline and jitter peak are measured over. */
const WINDOW_MS = 2000;
/** Ticks between two dropped frames when the delay shrinks. */
const SHRINK_SPACING_TICKS = 5;
/** Faded repeats of the last frame before the buffer goes quiet. */
const CONCEAL_FRAMES = 3;
/** Packets in a row this far behind playout (the maximum delay plus half a second) restart the buffer. */
const FAR_BEHIND_RUN = 3;
const FAR_BEHIND_EXTRA_MS = 500;
/** Packets in a row later than the maximum delay, with nothing left to play, that move the baseline onto them. */
const STEP_RUN = 3;
/** No tick and no packet for this long, ms: this thread stalled (ticks come every 20 ms). */
const OWN_STALL_MS = 50;
/** Packets read this soon after the end of such a stall came during it, ms. */
const FRAME_SLACK_MS = 20;
/** How far the estimated tick time may creep towards a late tick per tick, ms (see #tickTime). */
const TICK_OFFSET_CREEP_MS = 1;

export class JitterBuffer {
  readonly rate: SampleRate;
  readonly frameSamples: number;
  readonly #samplesPerMs: number;
  readonly #minDelay: number;
  readonly #maxDelay: number;
  readonly #farBehind: number;
  readonly #ring: Int16Array;
  readonly #filled: Uint8Array;
  readonly #mask: number;
  readonly #frame: Frame;
  /** The last frame delivered with audio, for concealment. */
  readonly #last: Int16Array;
  #scratch = new Int16Array(0);

  #started = false;
  #ssrc = 0;
  /** Playout position: the RTP timestamp of the next sample out, and the same unwrapped (float). */
  #playTs = 0;
  #playExt = 0;
  #aligned = false;
  #hasPlayed = false;
  #concealRun = 0;
  #farBehindRun = 0;
  #stepRun = 0;
  /** Where the newest audio written ends (unwrapped): at or before playout, nothing is left to play. */
  #writtenEnd = 0;
  #ticksSinceShrink = 0;
  #target: number;

  // Windowed transit statistics, in samples.
  #windowStartMs = 0;
  #minTransit = Number.POSITIVE_INFINITY;
  #previousMinTransit = Number.POSITIVE_INFINITY;
  #peak = 0;
  #previousPeak = 0;

  // This thread's own stalls (see #dateArrival).
  #aliveMs = Number.NEGATIVE_INFINITY;
  #stallFromMs = 0;
  #stallEndMs = Number.NEGATIVE_INFINITY;

  // The tick clock estimate (see #tickTime).
  #ticks = 0;
  #tickOffset = Number.POSITIVE_INFINITY;

  /** Packets whose audio arrived after it was due (dropped). */
  late = 0;
  /** Frames made up for missing audio. */
  concealed = 0;
  /** Restarts (new SSRC, timestamp jumps) and baselines moved onto a step in the packets' transit. */
  resyncs = 0;
  /** Frames dropped or inserted to follow the target delay. */
  shrinks = 0;
  stretches = 0;

  constructor(options: JitterBufferOptions) {
    this.rate = options.rate;
    this.frameSamples = samplesPerFrame(options.rate);
    this.#samplesPerMs = options.rate / 1000;
    const min = Math.max(0, Math.min(options.minDelayMs, options.maxDelayMs));
    this.#minDelay = Math.round(min * this.#samplesPerMs);
    this.#maxDelay = Math.round(Math.max(min, options.maxDelayMs) * this.#samplesPerMs);
    this.#farBehind = this.#maxDelay + FAR_BEHIND_EXTRA_MS * this.#samplesPerMs;
    let capacity = 1024;
    while (capacity < this.#maxDelay * 2 + 500 * this.#samplesPerMs) capacity *= 2;
    this.#ring = new Int16Array(capacity);
    this.#filled = new Uint8Array(capacity);
    this.#mask = capacity - 1;
    this.#frame = { rate: options.rate, samples: new Int16Array(this.frameSamples) };
    this.#last = new Int16Array(this.frameSamples);
    this.#target = this.#minDelay;
  }

  /** The delay playout aims at now, ms. */
  get targetDelayMs(): number {
    return this.#target / this.#samplesPerMs;
  }

  /** The largest extra delay of a packet over the last 2–4 s, ms. */
  get jitterPeakMs(): number {
    return Math.max(this.#peak, this.#previousPeak) / this.#samplesPerMs;
  }

  /** A buffer of at least `count` samples to decode into before push(); reused on the next call. */
  scratch(count: number): Int16Array {
    if (this.#scratch.length < count) this.#scratch = new Int16Array(count);
    return this.#scratch;
  }

  /** Forgets everything (the next packet starts afresh). */
  reset(): void {
    this.#started = false;
    this.#filled.fill(0);
    this.#aligned = false;
    this.#hasPlayed = false;
    this.#concealRun = 0;
    this.#farBehindRun = 0;
    this.#stepRun = 0;
    this.#writtenEnd = 0;
    this.#minTransit = Number.POSITIVE_INFINITY;
    this.#previousMinTransit = Number.POSITIVE_INFINITY;
    this.#peak = 0;
    this.#previousPeak = 0;
    this.#target = this.#minDelay;
  }

  #start(ssrc: number, timestamp: number, arrivalMs: number): void {
    if (this.#started) this.resyncs += 1;
    this.reset();
    this.#started = true;
    this.#ssrc = ssrc;
    this.#playTs = timestamp;
    this.#playExt = 0;
    this.#windowStartMs = arrivalMs;
  }

  /**
   * One packet's decoded audio: the first `count` samples of `samples`, RTP timestamp
   * `timestamp` (in samples), from `ssrc`, arrived at `arrivalMs` (monotonic).
   */
  push(samples: Int16Array, count: number, timestamp: number, ssrc: number, arrivalMs: number): void {
    if (count <= 0) return;
    const capacity = this.#mask + 1;
    // A packet longer than half the ring (seconds of audio) is cut: nothing sends that.
    count = Math.min(count, samples.length, capacity >> 1);
    if (!this.#started || ssrc !== this.#ssrc) this.#start(ssrc, timestamp, arrivalMs);
    let offset = (timestamp - this.#playTs) | 0;
    // Beyond the ring either way: the sender restarted its timeline.
    if (offset + count > capacity || offset < -capacity) {
      this.#start(ssrc, timestamp, arrivalMs);
      offset = 0;
    }
    if (offset + count <= -this.#farBehind) {
      // Far behind the playout point: one such packet is just very late, a run of them means the
      // sender's timeline stepped back.
      if (++this.#farBehindRun >= FAR_BEHIND_RUN) {
        this.#start(ssrc, timestamp, arrivalMs);
        offset = 0;
      }
    } else this.#farBehindRun = 0;
    const extTimestamp = this.#playExt + offset;
    this.#measure(extTimestamp, this.#dateArrival(extTimestamp, arrivalMs));
    if (offset + count <= 0) {
      // As read, not as dated: a step in transit shows in a burst too.
      if (!this.#steppedUp(arrivalMs * this.#samplesPerMs - extTimestamp, offset)) {
        this.late += 1;
        return;
      }
      offset = 0;
    } else this.#stepRun = 0;
    const end = this.#playExt + offset + count;
    if (end > this.#writtenEnd) this.#writtenEnd = end;
    const ring = this.#ring;
    const filled = this.#filled;
    const mask = this.#mask;
    for (let i = offset < 0 ? -offset : 0; i < count; i++) {
      const slot = (timestamp + i) & mask;
      ring[slot] = samples[i];
      filled[slot] = 1;
    }
  }

  /**
   * A late packet `offset` samples before playout, with `transit` as read: the third in a row too late for the maximum
   * delay while the buffer has run dry is a step up in transit (see the header). The baseline
   * moves onto it and playout back to it (the next tick aligns it to the target delay), so it and
   * the packets after it are kept. Only the window's minima are forgotten: its peak keeps the delay
   * up until it ages out, and when the run was the old part of a burst (a network or reader stall)
   * the burst's newer packets, with their smaller transits, bring the baseline back down at once.
   * Returns whether it moved (the packet is then no longer late).
   */
  #steppedUp(transit: number, offset: number): boolean {
    if (transit - this.#baseline() <= this.#maxDelay || this.#writtenEnd > this.#playExt) {
      this.#stepRun = 0;
      return false;
    }
    if (++this.#stepRun < STEP_RUN) return false;
    this.#stepRun = 0;
    this.resyncs += 1;
    this.#minTransit = transit;
    this.#previousMinTransit = Number.POSITIVE_INFINITY;
    // Backwards: every slot behind playout is empty already (taken or skipped).
    this.#move(offset);
    this.#writtenEnd = this.#playExt;
    this.#aligned = false;
    return true;
  }

  /** Notes that this thread runs at `nowMs`; a long silence before it was a stall of its own. */
  #alive(nowMs: number): void {
    if (nowMs - this.#aliveMs > OWN_STALL_MS) {
      this.#stallFromMs = this.#aliveMs;
      this.#stallEndMs = nowMs;
    }
    if (nowMs > this.#aliveMs) this.#aliveMs = nowMs;
  }

  /**
   * The arrival time to measure a packet by. Packets read right after a stall of this thread
   * (within a frame of its end) came some time during it, unread: their read time would measure
   * the stall as network jitter and grow the delay by it (a hold, heard as silence). They are
   * dated on time instead (the baseline transit), yet not before the stall began nor after they
   * were read.
   */
  #dateArrival(extTimestamp: number, arrivalMs: number): number {
    this.#alive(arrivalMs);
    if (arrivalMs - this.#stallEndMs > FRAME_SLACK_MS) return arrivalMs;
    const baseline = this.#baseline();
    if (baseline === Number.POSITIVE_INFINITY) return arrivalMs;
    const onTime = (extTimestamp + baseline) / this.#samplesPerMs;
    return Math.min(arrivalMs, Math.max(this.#stallFromMs, onTime));
  }

  /** Updates the baseline transit and jitter peak with one packet. */
  #measure(extTimestamp: number, arrivalMs: number): void {
    const elapsed = arrivalMs - this.#windowStartMs;
    if (elapsed >= WINDOW_MS) {
      // A new half-window; after a long silence both halves are stale.
      const stale = elapsed >= 2 * WINDOW_MS;
      this.#previousMinTransit = stale ? Number.POSITIVE_INFINITY : this.#minTransit;
      this.#previousPeak = stale ? 0 : this.#peak;
      this.#minTransit = Number.POSITIVE_INFINITY;
      this.#peak = 0;
      this.#windowStartMs = arrivalMs;
    }
    const transit = arrivalMs * this.#samplesPerMs - extTimestamp;
    if (transit < this.#minTransit) this.#minTransit = transit;
    const excess = transit - this.#baseline();
    if (excess > this.#peak) this.#peak = excess;
    const wanted = Math.max(this.#peak, this.#previousPeak) + this.frameSamples;
    this.#target = Math.min(this.#maxDelay, Math.max(this.#minDelay, Math.round(wanted)));
  }

  #baseline(): number {
    return Math.min(this.#minTransit, this.#previousMinTransit);
  }

  /**
   * The time of this tick: `nowMs` on a steady clock, but ticks the media clock runs back to
   * back after a stall keep their 20 ms spacing (the offset between tick count and time only
   * creeps towards a late tick), so a burst of ticks is not mistaken for a playout running early.
   */
  #tickTime(nowMs: number): number {
    const base = this.#ticks * (this.frameSamples / this.#samplesPerMs);
    this.#ticks += 1;
    const offset = nowMs - base;
    this.#tickOffset = offset < this.#tickOffset + TICK_OFFSET_CREEP_MS ? offset : this.#tickOffset + TICK_OFFSET_CREEP_MS;
    return base + this.#tickOffset;
  }

  /** Moves the playout point by `samples` (whole frames), forgetting the audio skipped. */
  #move(samples: number): void {
    if (samples > 0) {
      const filled = this.#filled;
      const mask = this.#mask;
      if (samples > mask) filled.fill(0);
      else for (let i = 0; i < samples; i++) filled[(this.#playTs + i) & mask] = 0;
    }
    this.#playTs = (this.#playTs + samples) >>> 0;
    this.#playExt += samples;
  }

  /**
   * The media clock dropped `count` ticks after a stall (too long to run them back to back): their
   * time passed without a next(). Counted into the ticks' time base; otherwise the base stays behind
   * by the stall and the tick offset, creeping 1 ms a tick, takes 20 s to make up 1 s, while playout
   * trails the packets by as much. A few such stalls (a starved main thread) put playout beyond the
   * ring, and the buffer restarted on nearly every packet: a frame on one tick in ten.
   */
  ticksSkipped(count: number): void {
    if (count > 0) this.#ticks += count;
  }

  /**
   * Once per media clock tick (`nowMs` monotonic, as push's arrival times): the next frame
   * (owned by the buffer, valid until the next call), or undefined while there is nothing to
   * play (before the first audio, and after a gap once concealment ran out).
   */
  next(nowMs: number): Frame | undefined {
    this.#alive(nowMs);
    const tickTime = this.#tickTime(nowMs);
    if (!this.#started) return undefined;
    const frame = this.frameSamples;
    const desired = tickTime * this.#samplesPerMs - this.#baseline() - this.#target;
    if (!this.#aligned) {
      // Start on the packets' frame grid, a little late rather than early.
      this.#move(Math.floor((desired - this.#playExt) / frame) * frame);
      this.#aligned = true;
    }
    const error = this.#playExt - desired;
    this.#ticksSinceShrink += 1;
    if (Math.abs(error) > this.#maxDelay + frame) {
      // A jump within the ring (the sender skipped ahead or fell back): go there at once.
      this.#move(-Math.round(error / frame) * frame);
    } else if (error > frame / 2) {
      // Too little delay for the jitter seen: hold playout for a frame.
      if (this.#hasPlayed) this.stretches += 1;
      return this.#conceal();
    } else if (error < -1.5 * frame && this.#ticksSinceShrink >= SHRINK_SPACING_TICKS) {
      // More delay than needed: drop a frame.
      this.#ticksSinceShrink = 0;
      this.shrinks += 1;
      this.#move(frame);
    }
    return this.#take();
  }

  #take(): Frame | undefined {
    const frame = this.frameSamples;
    const ring = this.#ring;
    const filled = this.#filled;
    const mask = this.#mask;
    const out = this.#frame.samples;
    const start = this.#playTs;
    let present = 0;
    for (let i = 0; i < frame; i++) {
      const slot = (start + i) & mask;
      if (filled[slot]) {
        out[i] = ring[slot];
        filled[slot] = 0;
        present += 1;
      } else out[i] = 0;
    }
    this.#playTs = (this.#playTs + frame) >>> 0;
    this.#playExt += frame;
    if (present === 0) return this.#conceal();
    this.#hasPlayed = true;
    this.#concealRun = 0;
    this.#last.set(out);
    return this.#frame;
  }

  /** A frame standing in for missing audio: the last one, fading, then nothing. */
  #conceal(): Frame | undefined {
    if (!this.#hasPlayed || this.#concealRun >= CONCEAL_FRAMES) return undefined;
    this.#concealRun += 1;
    this.concealed += 1;
    const shift = this.#concealRun;
    const out = this.#frame.samples;
    const last = this.#last;
    for (let i = 0; i < out.length; i++) out[i] = last[i] >> shift;
    return this.#frame;
  }
}
