// DTMF as tones in the audio (dtmf_mode inband): digits heard in the received audio, and digits
// sent rendered as tone pairs that replace the outgoing audio while they play. One reused frame
// carries the tones, so playing a digit allocates only when it starts, never per frame.
import { DtmfDetector, dtmfToneList } from '../dtmf.ts';
import type { Frame } from '../frame.ts';
import { createResampler, type Resampler } from '../resample.ts';
import { ToneGenerator } from '../tone-generator.ts';
import { parseToneList } from '../tones.ts';

/** Gap after an inband digit, so that two equal digits in a row are heard as two. */
const INBAND_GAP_MS = 50;
/** Peak per frequency of generated digits: about -10 dBm0 each. */
const INBAND_AMPLITUDE = 7000;
/** Shortest and longest digit played, ms (a far end asking for more is bounded). */
const MIN_DIGIT_MS = 40;
const MAX_DIGIT_MS = 5000;

export class InbandDtmf {
  readonly #detector: DtmfDetector;
  /** The digit being played as tones, and the frame it is rendered into. */
  #generator: ToneGenerator | undefined;
  readonly #frame: Frame = { rate: 8000, samples: new Int16Array(160) };
  /** Wideband audio (a G.722 or Opus call) is brought to the detector's 8 kHz first. */
  #downsampler: Resampler | undefined;
  readonly #narrow = new Int16Array(160);

  constructor(onDigit: (digit: string, durationMs: number) => void) {
    this.#detector = new DtmfDetector({ rate: 8000, onDigitEnd: onDigit });
  }

  /** A digit is being played: the channel's audio waits. */
  get playing(): boolean {
    return this.#generator !== undefined;
  }

  /** Forgets a half-heard digit (detection starts again, e.g. when inband DTMF is switched on). */
  reset(): void {
    this.#detector.reset();
  }

  /** Listens for digits in one frame of received audio. */
  detect(frame: Frame): void {
    if (frame.rate === 8000) {
      this.#detector.process(frame.samples);
      return;
    }
    if (this.#downsampler?.fromRate !== frame.rate) this.#downsampler = createResampler(frame.rate, 8000);
    const count = this.#downsampler.process(frame.samples, this.#narrow);
    this.#detector.process(count === this.#narrow.length ? this.#narrow : this.#narrow.subarray(0, count));
  }

  /** Starts playing a digit as tones (a character that is not a digit is skipped). */
  play(digit: string, durationMs: number): void {
    const list = dtmfToneList(digit, Math.max(MIN_DIGIT_MS, Math.min(durationMs, MAX_DIGIT_MS)), INBAND_GAP_MS);
    const tones = list === undefined ? undefined : parseToneList(list);
    if (tones) this.#generator = new ToneGenerator(tones, { rate: 8000, amplitude: INBAND_AMPLITUDE });
  }

  /** The next 20 ms of the digit being played (a frame reused every call), or undefined when none is. */
  nextFrame(): Frame | undefined {
    const generator = this.#generator;
    if (!generator) return undefined;
    generator.fill(this.#frame.samples);
    if (generator.finished) this.#generator = undefined;
    return this.#frame;
  }
}
