// Turns a media URI into a MediaSource: `sound:`, `recording:`, `tone:`, `digits:`, `number:`
// and `characters:`. Anything that cannot be found or read is a `{ failure }` result naming why, never an
// exception: the playback reports it as a failed item.
import { statSync } from 'node:fs';
import { readAudioFile } from '../../media/audio-file.ts';
import { isSampleRate, type SampleRate } from '../../media/frame.ts';
import { resampleAll } from '../../media/resample.ts';
import { resolveToneMedia } from '../../media/tonezones.ts';
import type { Sounds } from '../sounds.ts';
import { mediaUriProblem } from './media-limits.ts';
import { PcmSource, PLAYBACK_RATE, PromptSequenceSource, ToneSource, type MediaSource } from './media-source.ts';
import { parseSayNumber, sayCharacters, sayDigits, sayNumber } from './say.ts';

export interface MediaContext {
  readonly sounds: Sounds;
  /** The file of a stored recording, confined to the recordings directory (the recordings store decides). */
  readonly findRecording: (name: string) => string | undefined;
}

export type MediaResult = { readonly source: MediaSource } | { readonly failure: string };

/**
 * Opens the media of `uri` in `language`, skipping `offsetMs` into it (files only), for a target
 * hearing at `rate`: the sound file closest to that rate is chosen and decoded to it, so a 16 kHz
 * prompt reaches a 16 kHz channel without passing through 8 kHz.
 */
export function openMedia(uri: string, language: string, offsetMs: number, context: MediaContext, rate: SampleRate = PLAYBACK_RATE): MediaResult {
  // ARI requests were refused 400 on these bounds already; this keeps every other caller in them.
  const tooLarge = mediaUriProblem(uri);
  if (tooLarge) return { failure: tooLarge };
  const colon = uri.indexOf(':');
  const scheme = colon < 0 ? '' : uri.slice(0, colon);
  const resource = colon < 0 ? '' : uri.slice(colon + 1);
  switch (scheme) {
    case 'sound': {
      const file = resolveSoundFile(resource, language, context.sounds, rate);
      if (!file) return { failure: `Sound not found: ${resource}` };
      return pcmFrom([file], offsetMs, rate);
    }
    case 'recording': {
      const file = context.findRecording(resource);
      if (!file) return { failure: `Recording not found: ${resource}` };
      return pcmFrom([file], offsetMs, rate);
    }
    case 'tone': {
      const tones = resolveToneMedia(resource);
      if (!tones) return { failure: `Unknown tone: ${resource}` };
      return { source: new ToneSource(tones, rate) };
    }
    case 'digits':
    case 'characters': {
      // Asked once per character: answered from a memo, as a long string repeats few prompts.
      const known = new Map<string, boolean>();
      const exists = (id: string): boolean => {
        let found = known.get(id);
        if (found === undefined) known.set(id, (found = context.sounds.resolve(id, language) !== undefined));
        return found;
      };
      const prompts = scheme === 'digits' ? sayDigits(resource, exists) : sayCharacters(resource, exists);
      return sayBack(prompts, language, offsetMs, context.sounds, rate);
    }
    case 'number': {
      const value = parseSayNumber(resource);
      if (value === undefined) return { failure: `Invalid number: ${resource}` };
      return sayBack(sayNumber(value), language, offsetMs, context.sounds, rate);
    }
    default:
      return { failure: `Unsupported media URI scheme: ${uri}` };
  }
}

/**
 * The prompts played one after the other. Each distinct prompt is decoded once and the sequence
 * refers to it by index, so the cost does not grow with the audio's length (a concatenation of
 * 10,000 half-second digits would be 80 MB).
 */
function sayBack(prompts: readonly string[], language: string, offsetMs: number, sounds: Sounds, rate: SampleRate): MediaResult {
  const slots = new Map<string, number>();
  const decoded: Int16Array[] = [];
  const sequence = new Uint16Array(prompts.length);
  for (let i = 0; i < prompts.length; i++) {
    const prompt = prompts[i];
    let slot = slots.get(prompt);
    if (slot === undefined) {
      const file = sounds.resolve(prompt, language, rate);
      if (!file) return { failure: `Sound not found: ${prompt}` };
      const samples = loadPcm(file, rate);
      if (!samples) return { failure: `Cannot read ${file}` };
      slot = decoded.length;
      if (slot > 0xffff) return { failure: 'Too many distinct prompts' };
      decoded.push(samples);
      slots.set(prompt, slot);
    }
    sequence[i] = slot;
  }
  return { source: new PromptSequenceSource(decoded, sequence, offsetMs, rate) };
}

function pcmFrom(files: readonly string[], offsetMs: number, rate: SampleRate): MediaResult {
  const parts: Int16Array[] = [];
  for (const file of files) {
    const samples = loadPcm(file, rate);
    if (!samples) return { failure: `Cannot read ${file}` };
    parts.push(samples);
  }
  const samples = parts.length === 1 ? parts[0] : concat(parts);
  return { source: new PcmSource(samples, offsetMs, rate) };
}

/**
 * The file of a `sound:` id: from the sounds index, or an absolute path (with or without its
 * extension) of a file inside the sound directories; nothing outside them is ever opened.
 */
export function resolveSoundFile(id: string, language: string, sounds: Sounds, rate: SampleRate = PLAYBACK_RATE): string | undefined {
  return sounds.resolveUri(id, language, rate);
}


// ---- decoding, with a small cache for prompts said again and again ----------------------------

interface CachedPcm {
  readonly mtimeMs: number;
  readonly size: number;
  readonly samples: Int16Array;
}

const CACHE_ENTRIES = 128;
/** Files longer than this (about 2 minutes at 8 kHz, 20 s at 48 kHz) are decoded each time rather than kept. */
const CACHE_MAX_SAMPLES = 120 * PLAYBACK_RATE;
/** By file and rate: a prompt played to narrowband and wideband channels is kept at both rates. */
const cache = new Map<string, CachedPcm>();

/** The file's audio as 8 kHz samples; undefined when it cannot be read or decoded. */
export function loadPcm8k(file: string): Int16Array | undefined {
  return loadPcm(file, PLAYBACK_RATE);
}

/** The file's audio at `rate` (converted when the file has another); undefined when it cannot be read or decoded. */
function loadPcm(file: string, rate: SampleRate): Int16Array | undefined {
  let stat;
  try {
    stat = statSync(file);
  } catch {
    return undefined;
  }
  const key = `${rate}:${file}`;
  const cached = cache.get(key);
  if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) {
    // Most recently used last.
    cache.delete(key);
    cache.set(key, cached);
    return cached.samples;
  }
  let samples: Int16Array;
  try {
    const decoded = readAudioFile(file);
    if (!decoded) return undefined;
    samples = toRate(decoded.samples, decoded.rate, rate);
  } catch {
    return undefined;
  }
  if (samples.length <= CACHE_MAX_SAMPLES) {
    cache.delete(key);
    cache.set(key, { mtimeMs: stat.mtimeMs, size: stat.size, samples });
    while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  }
  return samples;
}

/** A whole file's samples at `rate`: the engine's resampler between engine rates. */
function toRate(samples: Int16Array, from: number, rate: SampleRate): Int16Array {
  if (isSampleRate(from)) return resampleAll(samples, from, rate);
  // Other rates (11.025, 22.05, 44.1 kHz, rare in prompt libraries): linear interpolation.
  const length = Math.floor((samples.length * rate) / from);
  const out = new Int16Array(length);
  const step = from / rate;
  for (let i = 0; i < length; i++) {
    const position = i * step;
    const index = Math.floor(position);
    const fraction = position - index;
    const a = samples[index] ?? 0;
    const b = samples[index + 1] ?? a;
    out[i] = Math.round(a + (b - a) * fraction);
  }
  return out;
}

function concat(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
