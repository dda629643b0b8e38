// Music on hold. A class is a directory under the configured music-on-hold directory
// (`<moh>/<class>/*.wav|wav16|ulaw|alaw|sln|sln16|sln24|sln48`); its files play one after the other, in name order,
// in an endless loop, one 20 ms frame per media clock tick. A stream feeds a channel (as its
// `moh` generator) or a bridge (as one of its audio sources). The `default` class always exists:
// when its directory holds no audio, a melody is generated into it at first start. An unknown
// class falls back to `default`, as Asterisk does. As with sounds, a file plays only when its real
// path (links resolved) lies inside the music-on-hold directory or a configured class directory:
// a link planted there must not bring another file's bytes into a call or a bridge recording.
import { mkdirSync, realpathSync, renameSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileFormatForPath } from '../media/codecs.ts';
import { readAudioFile } from '../media/audio-file.ts';
import { resampleAll } from '../media/resample.ts';
import { isSampleRate, type SampleRate } from '../media/frame.ts';
import { RateAdapter } from '../media/rate-adapter.ts';
import { WavWriter } from '../media/wav-writer.ts';
import type { Bridge, BridgeAudioSource } from './bridges/bridge.ts';
import type { AudioGenerator, ChannelGenerators } from './channel-generators.ts';
import type { Channel } from './channels/channel.ts';
import { ConflictError } from './errors.ts';
import { isDirectory, isFile, listDirectory } from '../util/fs-probe.ts';

export const DEFAULT_MOH_CLASS = 'default';
/** The file generated for the default class when it has none. */
export const GENERATED_DEFAULT_FILE = 'patchbay-default.wav';

/** Music is kept at 8 kHz and converted for the wideband channels and bridges it plays to. */
const RATE: SampleRate = 8000;
/** Extensions a class directory may hold (the formats Patchbay decodes). */
const MOH_EXTENSIONS = new Set(['wav', 'wav16', 'ulaw', 'alaw', 'sln', 'sln16', 'sln24', 'sln48', 'ul', 'al', 'raw', 'slin', 'slin16', 'slin24', 'slin48', 'pcm', 'mu', 'ulw', 'alw']);

interface CachedTrack {
  readonly mtimeMs: number;
  readonly size: number;
  readonly samples: Int16Array;
}

export interface MusicOnHoldOptions {
  /** The directory holding one subdirectory per class. */
  readonly directory: string;
  /** Classes kept elsewhere: name → directory (musiconhold.conf's `mode=files` classes). */
  readonly classDirectories?: ReadonlyMap<string, string>;
  /** Whether music on hold may be started now (res_musiconhold.so running). */
  readonly available?: () => boolean;
  readonly warn?: (message: string, details?: Record<string, unknown>) => void;
}

/** One playing instance of a class: a channel generator and a bridge source alike. */
export class MohStream implements AudioGenerator, BridgeAudioSource {
  readonly className: string;
  private readonly tracks: readonly Int16Array[];
  private track = 0;
  private position = 0;
  private readonly playable: boolean;
  private readonly adapter = new RateAdapter();

  constructor(className: string, tracks: readonly Int16Array[]) {
    this.className = className;
    this.tracks = tracks.filter((samples) => samples.length > 0);
    this.playable = this.tracks.length > 0;
  }

  /** Always 20 ms at `rate`: music on hold never finishes by itself (silence when the class has no audio). */
  fill(dst: Int16Array, rate: SampleRate = RATE): boolean {
    return this.adapter.fill(dst, rate, RATE, this.produce);
  }

  private readonly produce = (dst: Int16Array): boolean => {
    if (!this.playable) {
      dst.fill(0);
      return true;
    }
    let written = 0;
    while (written < dst.length) {
      const samples = this.tracks[this.track];
      const run = Math.min(dst.length - written, samples.length - this.position);
      dst.set(samples.subarray(this.position, this.position + run), written);
      written += run;
      this.position += run;
      if (this.position >= samples.length) {
        this.position = 0;
        this.track = (this.track + 1) % this.tracks.length;
      }
    }
    return true;
  };
}

export class MusicOnHold {
  readonly directory: string;
  private readonly available: () => boolean;
  private readonly warn: (message: string, details?: Record<string, unknown>) => void;
  private readonly cache = new Map<string, CachedTrack>();
  /** The generated melody, kept in memory too in case the directory cannot be written. */
  private fallbackDefault: Int16Array | undefined;
  /** Bridge music: the stream playing into each bridge. */
  private readonly bridgeStreams = new WeakMap<Bridge, MohStream>();

  private readonly classDirectories: ReadonlyMap<string, string>;

  constructor(options: MusicOnHoldOptions) {
    this.directory = options.directory;
    this.classDirectories = options.classDirectories ?? new Map();
    this.available = options.available ?? (() => true);
    this.warn = options.warn ?? (() => undefined);
  }

  /**
   * Makes sure the default class has audio, generating the built-in melody into
   * `<moh>/default/patchbay-default.wav` when it has none. Returns the file written, if any.
   */
  ensureDefault(): string | undefined {
    const dir = join(this.directory, DEFAULT_MOH_CLASS);
    if (this.audioFiles(dir).length > 0) return undefined;
    const melody = generateDefaultMelody();
    this.fallbackDefault = melody;
    const file = join(dir, GENERATED_DEFAULT_FILE);
    try {
      mkdirSync(dir, { recursive: true });
      const partial = `${file}.partial`;
      const writer = WavWriter.open(partial, { rate: RATE });
      writer.write(melody);
      writer.finalize();
      renameSync(partial, file);
      return file;
    } catch (err) {
      this.warn('cannot write the default music-on-hold file; playing it from memory', { err, file });
      return undefined;
    }
  }

  /** Where a class's files are: its configured directory, else `<moh>/<class>`. */
  private classDirectory(name: string): string {
    const configured = this.classDirectories.get(name);
    // A configured `default` without audio here (an Asterisk path on another machine) keeps the generated one.
    if (configured !== undefined && (name !== DEFAULT_MOH_CLASS || this.audioFiles(configured).length > 0)) return configured;
    return join(this.directory, name);
  }

  /** Names of the classes that have audio (always including `default`). */
  classes(): string[] {
    const names = new Set<string>([DEFAULT_MOH_CLASS]);
    for (const entry of listDirectory(this.directory)) {
      const dir = join(this.directory, entry);
      if (isDirectory(dir) && this.audioFiles(dir).length > 0) names.add(entry);
    }
    for (const [name, dir] of this.classDirectories) if (this.audioFiles(dir).length > 0) names.add(name);
    return [...names].sort();
  }

  /** The class that really plays for a requested name: unknown, empty or unsafe names mean `default`. */
  resolveClass(requested: string | undefined): string {
    const name = requested?.trim() || DEFAULT_MOH_CLASS;
    if (name === DEFAULT_MOH_CLASS || name.includes('/') || name.includes('\\') || name === '.' || name === '..') return DEFAULT_MOH_CLASS;
    return this.audioFiles(this.classDirectory(name)).length > 0 ? name : DEFAULT_MOH_CLASS;
  }

  /** A new stream of a class, from its first file. ConflictError while music on hold is unavailable. */
  stream(requested?: string): MohStream {
    this.requireAvailable();
    const className = this.resolveClass(requested);
    const tracks: Int16Array[] = [];
    for (const file of this.audioFiles(this.classDirectory(className))) {
      const samples = this.load(file);
      if (samples) tracks.push(samples);
    }
    if (tracks.length === 0 && className === DEFAULT_MOH_CLASS) {
      this.fallbackDefault ??= generateDefaultMelody();
      tracks.push(this.fallbackDefault);
    }
    return new MohStream(className, tracks);
  }

  // ---- channels -------------------------------------------------------------------------------

  /** Starts (or restarts with another class) music on hold on a channel; the channel hears it instead of its bridge. */
  startOnChannel(generators: ChannelGenerators, channel: Channel, requested?: string): MohStream {
    const stream = this.stream(requested);
    generators.set(channel, 'moh', stream);
    return stream;
  }

  /** Stops a channel's music on hold; nothing happens when none plays. */
  stopOnChannel(generators: ChannelGenerators, channel: Channel): void {
    generators.set(channel, 'moh', undefined);
  }

  // ---- bridges --------------------------------------------------------------------------------

  /** Plays a class into a bridge (replacing the class playing there, if any). */
  startOnBridge(bridge: Bridge, requested?: string): MohStream {
    const stream = this.stream(requested);
    const previous = this.bridgeStreams.get(bridge);
    if (previous) bridge.removeSource(previous);
    bridge.addSource(stream);
    this.bridgeStreams.set(bridge, stream);
    bridge.mohClass = stream.className;
    return stream;
  }

  /** ConflictError when the bridge has no music playing. */
  stopOnBridge(bridge: Bridge): void {
    const stream = this.bridgeStreams.get(bridge);
    if (!stream) throw new ConflictError("Bridge isn't playing music");
    bridge.removeSource(stream);
    this.bridgeStreams.delete(bridge);
    bridge.mohClass = undefined;
  }

  playingOnBridge(bridge: Bridge): boolean {
    return this.bridgeStreams.has(bridge);
  }

  // ---- files ----------------------------------------------------------------------------------

  private requireAvailable(): void {
    if (!this.available()) throw new ConflictError('Music on hold is not available');
  }

  /** The audio files of a class directory, by their real paths, leaving out any that resolve outside the roots. */
  private audioFiles(dir: string): string[] {
    const roots = this.realRoots();
    return listDirectory(dir)
      .filter((name) => {
        const dot = name.lastIndexOf('.');
        return dot > 0 && MOH_EXTENSIONS.has(name.slice(dot + 1).toLowerCase()) && !name.endsWith('.partial');
      })
      .sort()
      .map((name) => realPath(join(dir, name)))
      .filter((file): file is string => file !== undefined && roots.some((root) => file.startsWith(root)) && isFile(file));
  }

  /**
   * The directories music may come from, links resolved, each ending in a separator: `dirs.moh` and
   * the configured class directories (the operator named those). Asked each time: they may appear later.
   */
  private realRoots(): string[] {
    const roots: string[] = [];
    for (const dir of [this.directory, ...this.classDirectories.values()]) {
      const real = realPath(dir);
      if (real !== undefined) roots.push(real.endsWith(sep) ? real : real + sep);
    }
    return roots;
  }

  /** Decodes a file to 8 kHz once (again when it changes); undefined when it cannot be read. */
  private load(file: string): Int16Array | undefined {
    let stat;
    try {
      stat = statSync(file);
    } catch {
      return undefined;
    }
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.samples;
    try {
      const decoded = readAudioFile(file, fileFormatForPath(file));
      if (!decoded) return undefined;
      const samples = toRate8k(decoded.samples, decoded.rate);
      this.cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, samples });
      return samples;
    } catch (err) {
      this.warn('cannot read a music-on-hold file', { err, file });
      return undefined;
    }
  }
}

/** The path with every link resolved; undefined when it is missing, dangling or loops. */
function realPath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** Converts a whole file's samples to 8 kHz: the engine's resampler from its rates, a filtered linear interpolation otherwise. */
function toRate8k(samples: Int16Array, rate: number): Int16Array {
  if (isSampleRate(rate)) return resampleAll(samples, rate, RATE);
  // Other rates (44.1 kHz music): average over the decimation span against aliasing, then interpolate.
  const step = rate / RATE;
  const span = Math.max(1, Math.round(step));
  const out = new Int16Array(Math.floor(samples.length / step));
  for (let i = 0; i < out.length; i++) {
    const centre = i * step;
    const start = Math.max(0, Math.floor(centre - span / 2));
    const end = Math.min(samples.length, start + span);
    let total = 0;
    for (let j = start; j < end; j++) total += samples[j];
    out[i] = Math.round(total / Math.max(1, end - start));
  }
  return out;
}

// ---- the built-in melody ------------------------------------------------------------------------

const NOTE_MS = 250;
const A4 = 440;
const note = (semitonesFromA4: number): number => A4 * Math.pow(2, semitonesFromA4 / 12);

/**
 * A calm arpeggio over C – Am – F – G, played twice with two patterns, over a soft bass: 16 s
 * that loop seamlessly (every note starts and ends at zero amplitude).
 */
export function generateDefaultMelody(): Int16Array {
  // Chords as semitone offsets from A4: root, third, fifth, octave.
  const chords = [
    [-9, -5, -2, 3], // C E G C
    [-12, -9, -5, 0], // A C E A
    [-16, -12, -9, -4], // F A C F
    [-14, -10, -7, -2], // G B D G
  ];
  const patterns = [
    [0, 1, 2, 3, 2, 1, 2, 1],
    [0, 2, 1, 3, 1, 2, 3, 2],
  ];
  const noteSamples = (NOTE_MS * RATE) / 1000;
  const chordSamples = noteSamples * 8;
  const total = chordSamples * chords.length * patterns.length;
  const mix = new Float64Array(total);
  let offset = 0;
  for (const pattern of patterns) {
    for (const chord of chords) {
      // Bass: the root an octave down, swelling in and out over the chord.
      addTone(mix, offset, chordSamples, note(chord[0] - 12), 1800, 'swell');
      for (let step = 0; step < pattern.length; step++) {
        addTone(mix, offset + step * noteSamples, noteSamples, note(chord[pattern[step]]), 4200, 'pluck');
      }
      offset += chordSamples;
    }
  }
  const out = new Int16Array(total);
  for (let i = 0; i < total; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(mix[i])));
  return out;
}

function addTone(mix: Float64Array, start: number, length: number, frequency: number, peak: number, shape: 'pluck' | 'swell'): void {
  const attack = Math.round(RATE * 0.012);
  const release = Math.round(RATE * 0.03);
  for (let i = 0; i < length && start + i < mix.length; i++) {
    const t = i / RATE;
    let envelope: number;
    if (shape === 'pluck') {
      envelope = Math.min(1, i / attack) * Math.exp(-3.2 * t) * Math.min(1, (length - i) / release);
    } else {
      envelope = Math.sin((Math.PI * i) / length);
    }
    // A touch of the second harmonic makes the sine sound less like a test tone.
    const phase = 2 * Math.PI * frequency * t;
    mix[start + i] += peak * envelope * (Math.sin(phase) + 0.25 * Math.sin(2 * phase));
  }
}



