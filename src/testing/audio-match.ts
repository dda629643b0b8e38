// What a caller can recognise in the audio it hears: a known prompt (normalised cross-correlation
// against the sound file, so the level and a codec's coloring do not matter), a tone's frequency,
// silence and speech energy. Everything works on 8 kHz linear audio, the rate a caller hears at.
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { goertzelPower } from '../media/goertzel.ts';
import { meanSquare } from '../media/energy.ts';
import { createResampler } from '../media/resample.ts';
import { readWavFile } from '../media/wav-reader.ts';
import { crossCorrelate, nextPowerOfTwo, spectrumOf } from './fft.ts';

export const CALLER_RATE = 8000;
export const SAMPLES_PER_FRAME = 160;

/** Scores at or above this are "the prompt was heard" (bench/prompt-recognition.ts measures it). */
export const DEFAULT_PROMPT_THRESHOLD = 0.6;
/** Prompts longer than this are refused: the correlation's cost grows with them. */
const MAX_PROMPT_SECONDS = 60;
/** Audio quieter than this (−50 dBFS mean square) does not count as heard energy when normalising. */
const ENERGY_FLOOR = 10 * 10;

/** Default places a `prompt` name is looked for: Asterisk's sound directories (English first). */
export const DEFAULT_SOUND_DIRS: readonly string[] = Object.freeze([
  '/usr/share/asterisk/sounds/en',
  '/usr/share/asterisk/sounds',
  '/var/lib/asterisk/sounds/en',
  '/var/lib/asterisk/sounds',
]);

/** Finds a prompt's WAV file: a path (absolute or relative to `baseDir`), or a sound name in `soundDirs`. */
export function findPromptFile(prompt: string, soundDirs: readonly string[], baseDir = process.cwd()): string {
  const name = prompt.replace(/^sound:/, '');
  if (name.includes('\0') || name.length > 1024) throw new Error(`bad prompt name ${JSON.stringify(prompt.slice(0, 64))}`);
  if (name.endsWith('.wav')) {
    const path = isAbsolute(name) ? name : join(baseDir, name);
    if (existsSync(path)) return path;
    throw new Error(`prompt file ${path} does not exist`);
  }
  for (const dir of soundDirs) {
    const path = join(dir, `${name}.wav`);
    if (existsSync(path)) return path;
  }
  throw new Error(`prompt "${name}" not found as a .wav in ${soundDirs.join(', ')}`);
}

/** Mono 16-bit audio at an engine rate (8, 16, 24, 48 kHz) as 8 kHz floats. */
export function toCallerRate(samples: Int16Array, rate: number): Float32Array {
  let linear = samples;
  if (rate === 16000 || rate === 24000 || rate === 48000) {
    const resampler = createResampler(rate, CALLER_RATE);
    const out = new Int16Array(resampler.outputLength(samples.length));
    resampler.process(samples, out);
    linear = out;
  } else if (rate !== CALLER_RATE) {
    throw new Error(`audio at ${rate} Hz: files at 8, 16, 24 or 48 kHz are supported`);
  }
  return Float32Array.from(linear);
}

/** A sound file to find in heard audio. */
export class PromptReference {
  readonly samples: Float32Array;
  private readonly norm: number;
  private readonly spectra = new Map<number, { re: Float64Array; im: Float64Array }>();

  constructor(
    readonly name: string,
    samples: Float32Array,
  ) {
    if (samples.length > MAX_PROMPT_SECONDS * CALLER_RATE) throw new Error(`prompt ${name} is longer than ${MAX_PROMPT_SECONDS} s`);
    this.samples = trimSilence(samples);
    let energy = 0;
    for (const s of this.samples) energy += s * s;
    if (this.samples.length === 0 || energy === 0) throw new Error(`prompt ${name} is silent`);
    this.norm = Math.sqrt(energy);
  }

  static fromFile(name: string, path: string): PromptReference {
    const wav = readWavFile(path);
    return new PromptReference(name, toCallerRate(wav.samples, wav.rate));
  }

  get durationMs(): number {
    return (this.samples.length / CALLER_RATE) * 1000;
  }

  /**
   * The best normalised cross-correlation of the prompt against `heard` (−1..1) and where it
   * starts. 1 is the same waveform at any level; another prompt of the same voice scores low.
   */
  bestMatch(heard: Float32Array): { score: number; offset: number } {
    const length = this.samples.length;
    if (heard.length < length) return { score: 0, offset: -1 };
    // Circular correlation is exact for every lag where the prompt fits inside `heard` once the
    // transform is at least as long as `heard`: no need to pad by the prompt's length.
    const size = nextPowerOfTwo(heard.length);
    let spectrum = this.spectra.get(size);
    if (!spectrum) {
      spectrum = spectrumOf(this.samples, size);
      this.spectra.set(size, spectrum);
    }
    const correlation = crossCorrelate(heard, spectrum, length);
    // Energy of each heard window by a running sum, for the normalisation.
    let window = 0;
    for (let i = 0; i < length; i++) window += heard[i]! * heard[i]!;
    let best = { score: 0, offset: -1 };
    for (let lag = 0; lag < correlation.length; lag++) {
      if (lag > 0) {
        const out = heard[lag - 1]!;
        const into = heard[lag + length - 1]!;
        window += into * into - out * out;
      }
      const score = correlation[lag]! / (this.norm * Math.sqrt(Math.max(window, ENERGY_FLOOR * length)));
      if (score > best.score) best = { score, offset: lag };
    }
    if (best.score >= PIECEWISE_FROM && best.score < PIECEWISE_UNTIL) {
      // Discounted: each piece picks its own alignment, which unrelated speech profits from too
      // (bench/prompt-recognition.ts: distractors reach 0.74 piecewise, a prompt with a lost
      // packet 0.84), so only a piecewise match well above the threshold counts.
      best = { score: Math.max(best.score, this.piecewiseScore(heard, best.offset) - PIECEWISE_DISCOUNT), offset: best.offset };
    }
    return best;
  }

  /**
   * The prompt scored in 200 ms pieces, each allowed to land up to 80 ms from where the previous
   * one ended: a network leg's jitter buffer drops or stretches a frame now and then, which shifts
   * the rest of the prompt and lowers the whole-prompt correlation although every piece is there.
   * The pieces' scores are averaged by their energy; unrelated speech stays low piece by piece.
   */
  private piecewiseScore(heard: Float32Array, offset: number): number {
    const energyBefore = new Float64Array(heard.length + 1);
    for (let i = 0; i < heard.length; i++) energyBefore[i + 1] = energyBefore[i]! + heard[i]! * heard[i]!;
    let expected = offset;
    let weighted = 0;
    let total = 0;
    for (let start = 0; start < this.samples.length; start += PIECE) {
      const piece = this.samples.subarray(start, Math.min(start + PIECE, this.samples.length));
      let pieceEnergy = 0;
      for (const s of piece) pieceEnergy += s * s;
      if (piece.length < PIECE / 2 || pieceEnergy < ENERGY_FLOOR * piece.length) {
        expected += piece.length;
        continue;
      }
      const norm = Math.sqrt(pieceEnergy);
      let bestScore = 0;
      let bestLag = expected;
      const last = Math.min(heard.length - piece.length, expected + PIECE_SLACK);
      for (let lag = Math.max(0, expected - PIECE_SLACK); lag <= last; lag++) {
        let dot = 0;
        for (let k = 0; k < piece.length; k++) dot += piece[k]! * heard[lag + k]!;
        const window = energyBefore[lag + piece.length]! - energyBefore[lag]!;
        const score = dot / (norm * Math.sqrt(Math.max(window, ENERGY_FLOOR * piece.length)));
        if (score > bestScore) {
          bestScore = score;
          bestLag = lag;
        }
      }
      weighted += bestScore * pieceEnergy;
      total += pieceEnergy;
      expected = bestLag + piece.length;
    }
    return total === 0 ? 0 : weighted / total;
  }
}

/** Whole-prompt scores in this range are looked at piece by piece too (see piecewiseScore). */
const PIECEWISE_FROM = 0.25;
const PIECEWISE_UNTIL = 0.9;
const PIECEWISE_DISCOUNT = 0.2;
const PIECE = CALLER_RATE / 5;
const PIECE_SLACK = (CALLER_RATE * 80) / 1000;

/** The prompt without its leading and trailing near-silence (files carry some; a player may trim it). */
function trimSilence(samples: Float32Array): Float32Array {
  const threshold = 64;
  let start = 0;
  while (start < samples.length && Math.abs(samples[start]!) < threshold) start++;
  let end = samples.length;
  while (end > start && Math.abs(samples[end - 1]!) < threshold) end--;
  return samples.slice(start, end);
}

/** Mean square of a frame, as dBFS (−∞ for digital silence). */
export function frameDbfs(frame: Int16Array): number {
  const power = meanSquare(frame);
  return power === 0 ? -Infinity : 10 * Math.log10(power / (32768 * 32768));
}

/** Share of a block's energy at `frequency` (0..1): near 1 for a pure tone of that frequency. */
export function toneShare(samples: Int16Array, frequency: number): number {
  const power = meanSquare(samples);
  if (power === 0) return 0;
  return Math.min(1, goertzelPower(samples, frequency, CALLER_RATE) / power);
}
