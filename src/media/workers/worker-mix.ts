// A bridge mixed inside a media worker (the worker mix): each member's decoded audio goes into one
// sum and each member hears the sum minus itself, encoded by its own stream in its own codec. The
// arithmetic is the bridge's own (media/mix.ts: a 32-bit sum, "everyone but me" clipped to 16 bits
// only at the end, a member that said nothing this tick adding nothing and hearing everyone), so a
// mix here sounds as the main thread's does. Members whose streams run in the mixing worker give
// their frames as their streams decode them (LocalParty); members of another worker cross through
// a MixLegMemory both workers were handed (RemoteParty here, MixLeg on the member's worker). A
// frame said at one tick is mixed at the worker's next tick, as the main thread's mixer does with
// frames that arrive between its ticks. Nothing is allocated per tick once the mix exists.
import type { Frame, SampleRate } from '../frame.ts';
import { samplesPerFrame } from '../frame.ts';
import { FrameSlot } from '../frame-slot.ts';
import { accumulate, clearSum, mixMinus, saturateSum } from '../mix.ts';
import { FrameCache, type FrameRing } from './frame-ring.ts';
import { MIX_LEG_BACKLOG, type MixLegMemory } from './mix-leg-memory.ts';

/** One member of a worker's mix, as the mix sees it. */
export interface MixParty {
  /** What it said since the last tick, at the mix rate (valid until its next frame); undefined when nothing came. */
  take(): Int16Array | undefined;
  /** What it hears this tick (the mix minus itself), at the mix rate; not to be kept past the call. */
  hear(frame: Frame): void;
}

/** A member whose stream runs in the mixing worker: its stream puts each decoded frame here. */
export class LocalParty implements MixParty {
  readonly #slot: FrameSlot;

  constructor(
    rate: SampleRate,
    /** Sends what the member hears through its stream (unless the main thread wrote for it this tick). */
    private readonly send: (frame: Frame) => void,
  ) {
    this.#slot = new FrameSlot(rate);
  }

  put(frame: Frame): void {
    this.#slot.put(frame);
  }

  take(): Int16Array | undefined {
    return this.#slot.take();
  }

  hear(frame: Frame): void {
    this.send(frame);
  }
}

/** Takes the oldest frame of a ring another worker fills, after cutting a backlog left by a late wake-up. */
function popRecent(ring: FrameRing, frames: FrameCache): Frame | undefined {
  while (ring.size > MIX_LEG_BACKLOG) ring.skip();
  return ring.pop(frames);
}

/** A member whose stream runs on another worker: what it says and hears crosses through shared rings. */
export class RemoteParty implements MixParty {
  readonly #slot: FrameSlot;
  readonly #frames = new FrameCache();

  constructor(
    rate: SampleRate,
    private readonly memory: MixLegMemory,
  ) {
    this.#slot = new FrameSlot(rate);
  }

  take(): Int16Array | undefined {
    const frame = popRecent(this.memory.toMix, this.#frames);
    if (frame) this.#slot.put(frame);
    return this.#slot.take();
  }

  hear(frame: Frame): void {
    this.memory.fromMix.push(frame.rate, frame.samples);
  }
}

/** The member's side of a RemoteParty, in the worker its stream runs in. */
export class MixLeg {
  readonly #frames = new FrameCache();

  constructor(readonly memory: MixLegMemory) {}

  /** A frame its stream decoded: on to the mixing worker. */
  said(frame: Frame): void {
    this.memory.toMix.push(frame.rate, frame.samples);
  }

  /** What the member hears this tick, if the mixing worker made it in time. */
  heard(): Frame | undefined {
    return popRecent(this.memory.fromMix, this.#frames);
  }
}

export class WorkerMix {
  readonly #sum: Int32Array;
  #parties: MixParty[];
  /** What each party said this tick (its contribution to the sum), by index. */
  #said: Array<Int16Array | undefined>;
  /** What each party hears, by index, made once. */
  #heard: Frame[];

  constructor(
    readonly id: number,
    readonly rate: SampleRate,
    parties: readonly MixParty[],
  ) {
    const samples = samplesPerFrame(rate);
    this.#sum = new Int32Array(samples);
    this.#parties = [...parties];
    this.#said = this.#parties.map(() => undefined);
    this.#heard = this.#parties.map(() => ({ rate, samples: new Int16Array(samples) }));
  }

  get parties(): readonly MixParty[] {
    return this.#parties;
  }

  /** One tick: everyone's frame into the sum, and to each the sum without its own. */
  tick(): void {
    const sum = this.#sum;
    const parties = this.#parties;
    const said = this.#said;
    const heard = this.#heard;
    clearSum(sum);
    for (let i = 0; i < parties.length; i++) {
      const frame = parties[i].take();
      said[i] = frame;
      if (frame) accumulate(sum, frame);
    }
    for (let i = 0; i < parties.length; i++) {
      mixMinus(sum, said[i], heard[i].samples);
      parties[i].hear(heard[i]);
    }
  }

  /** The mix of this tick (everyone, clipped to 16 bits), as the bridge publishes it to a recording; after tick(). */
  mixInto(dst: Int16Array): void {
    saturateSum(this.#sum, dst);
  }

  /** A member's stream closed: it leaves the mix (the main thread will settle the bridge anew). */
  drop(party: MixParty): void {
    const index = this.#parties.indexOf(party);
    if (index < 0) return;
    this.#parties = this.#parties.filter((entry) => entry !== party);
    this.#said = this.#parties.map(() => undefined);
    this.#heard = this.#heard.filter((_, i) => i !== index);
  }
}
