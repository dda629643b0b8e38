// The sounds index: every prompt under the configured sound directories, by id (`hello-world`,
// `digits/1`), language (the first directory level, `en`, `fr`, ...) and format (file extension).
//
// A sound id names a file inside the sound directories and nothing else. The walk follows a
// symbolic link only when its target lies inside one of the directories (Debian links `en` to
// `en_US_f_Allison` beside it); a link leading anywhere else is as good as absent. Within a
// language, each real directory is walked once (under the first name that reaches it), so link
// loops and links fanning out again and again cost nothing; the walk is also bounded in depth and
// in entries. Every file handed out is checked again, by its real path, at that moment.
//
// The prompts Patchbay generates for itself (builtin-sounds.ts) are fallbacks: listed under an id
// only when no sound directory has that id, and played only when no sound directory has a
// playable file of it for the language asked.
import { readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { fileFormatForPath, getFileFormat } from '../media/codecs.ts';
import { NotFoundError } from './errors.ts';

export interface SoundFormat {
  readonly language: string;
  readonly format: string;
}

export interface SoundEntry {
  readonly id: string;
  readonly formats: SoundFormat[];
  /** Real (link-free) file per `language/format`. */
  readonly files: Map<string, string>;
}

/** Formats Patchbay can play, in order of preference among those of one rate. */
const PLAYABLE_PREFERENCE = ['wav', 'sln16', 'wav16', 'sln', 'ulaw', 'alaw', 'sln24', 'sln48'];
/** Extensions tried, in order, for a `sound:` given as an absolute path without one. */
const PATH_EXTENSIONS = ['wav', 'wav16', 'sln16', 'sln', 'ulaw', 'alaw', 'ul', 'al', 'slin', 'raw', 'sln24', 'sln48'];

/**
 * The playable formats in the order a channel at `rate` prefers them, as Asterisk picks the file
 * its translation path is cheapest from: its own rate first, then the nearest lower rate (an
 * upsampling), then the nearest higher one (a downsampling). A format counts at the rate its name
 * says (`wav` is 8 kHz, `wav16` 16 kHz), as Asterisk's format names do.
 */
function preferenceAt(rate: number): readonly string[] {
  const distance = (format: string): number => {
    const own = getFileFormat(format)?.codec.rate ?? 8000;
    return own === rate ? 0 : own < rate ? rate - own : 1_000_000 + own - rate;
  };
  return [...PLAYABLE_PREFERENCE].sort((a, b) => distance(a) - distance(b));
}

/** Preference orders by rate, worked out once. */
const preferenceByRate = new Map<number, readonly string[]>();
function playableOrder(rate: number): readonly string[] {
  let order = preferenceByRate.get(rate);
  if (!order) preferenceByRate.set(rate, (order = preferenceAt(rate)));
  return order;
}
/** How long an index is trusted before the directories are walked again. */
const RESCAN_AFTER_MS = 5000;
/** How far the walk goes; the defaults are far beyond any prompt library. */
export interface SoundWalkLimits {
  /** Directory levels below a language directory (Asterisk's go two or three deep). */
  readonly maxDepth: number;
  /** Directory entries looked at in one walk of all the directories; the rest is left out. */
  readonly maxEntries: number;
}

export const DEFAULT_SOUND_WALK_LIMITS: SoundWalkLimits = Object.freeze({ maxDepth: 12, maxEntries: 250_000 });

export class Sounds {
  private entries = new Map<string, SoundEntry>();
  private fallbackEntries = new Map<string, SoundEntry>();
  /** Real paths of the directories (configured and fallback) that exist. */
  private realRoots: string[] = [];
  private scannedAt = 0;

  /**
   * @param directories the sound directories, searched in order
   * @param fallbackDirectories generated prompts, used only for what the directories lack
   */
  constructor(
    private readonly directories: readonly string[],
    private readonly fallbackDirectories: readonly string[] = [],
    private readonly limits: SoundWalkLimits = DEFAULT_SOUND_WALK_LIMITS,
  ) {}

  /** Walks the directories now (also done lazily when the index is older than a few seconds). */
  rescan(): void {
    this.realRoots = [...this.directories, ...this.fallbackDirectories]
      .map((directory) => realPath(path.resolve(directory)))
      .filter((real): real is string => real !== undefined && isDirectory(real));
    const budget = { entries: this.limits.maxEntries };
    this.entries = this.index(this.directories, budget);
    this.fallbackEntries = this.index(this.fallbackDirectories, budget);
    this.scannedAt = Date.now();
  }

  private fresh(): void {
    if (Date.now() - this.scannedAt > RESCAN_AFTER_MS) this.rescan();
  }

  /** The entry an id is listed under: the directories', else the generated one. */
  private entry(id: string): SoundEntry | undefined {
    this.fresh();
    return this.entries.get(id) ?? this.fallbackEntries.get(id);
  }

  /** Sounds having at least one file matching the filters. */
  list(filter: { lang?: string; format?: string } = {}): { id: string; formats: SoundFormat[] }[] {
    this.fresh();
    const result: { id: string; formats: SoundFormat[] }[] = [];
    const all = [...this.entries.values(), ...[...this.fallbackEntries.values()].filter((entry) => !this.entries.has(entry.id))];
    for (const entry of all) {
      const formats = entry.formats.filter(
        (candidate) => (!filter.lang || candidate.language === filter.lang) && (!filter.format || candidate.format === filter.format),
      );
      if (formats.length > 0) result.push({ id: entry.id, formats: filter.lang || filter.format ? formats : [...entry.formats] });
    }
    return result.sort((a, b) => a.id.localeCompare(b.id));
  }

  get(id: string): { id: string; formats: SoundFormat[] } {
    const entry = this.entry(id);
    if (!entry) throw new NotFoundError(`Sound not found: ${id}`);
    return { id: entry.id, formats: [...entry.formats] };
  }

  /**
   * The playable file of a sound in a language, falling back to the language's base (`en_US` → `en`)
   * and then to `en`, as Asterisk does; then to a generated prompt. Of the formats it exists in, the
   * one closest to `rate` (the rate of the channel it plays to; see preferenceAt). Undefined when
   * there is none.
   */
  resolve(id: string, language: string, rate = 8000): string | undefined {
    this.fresh();
    return this.pick(this.entries.get(id), language, rate) ?? this.pick(this.fallbackEntries.get(id), language, rate);
  }

  /**
   * The file a `sound:` URI names: a sound id, or an absolute path (with or without its
   * extension) of a file inside the sound directories. Undefined for anything else.
   */
  resolveUri(id: string, language: string, rate = 8000): string | undefined {
    if (id === '') return undefined;
    if (!path.isAbsolute(id)) return this.resolve(id, language, rate);
    this.fresh();
    const file = path.resolve(id);
    const candidates = fileFormatForPath(file) ? [file] : [];
    const order = playableOrder(rate);
    const extensions = [...PATH_EXTENSIONS].sort((a, b) => rank(order, a) - rank(order, b));
    for (const extension of extensions) candidates.push(`${file}.${extension}`);
    for (const candidate of candidates) {
      const confined = this.confine(candidate);
      if (confined) return confined;
    }
    return undefined;
  }

  private pick(entry: SoundEntry | undefined, language: string, rate: number): string | undefined {
    if (!entry) return undefined;
    const languages = [language, language.split(/[_-]/)[0], 'en'];
    const order = playableOrder(rate);
    for (const candidate of languages) {
      for (const format of order) {
        const file = entry.files.get(`${candidate}/${format}`);
        if (file === undefined) continue;
        // The index may be seconds old: the file is checked again as it is now.
        const confined = this.confine(file);
        if (confined) return confined;
      }
    }
    return undefined;
  }

  /** The real path of a regular file inside the sound directories; undefined otherwise. */
  private confine(file: string): string | undefined {
    const real = realPath(file);
    if (real === undefined || !this.inside(real)) return undefined;
    try {
      return statSync(real).isFile() ? real : undefined;
    } catch {
      return undefined;
    }
  }

  private inside(real: string): boolean {
    return this.realRoots.some((root) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
  }

  private index(directories: readonly string[], budget: { entries: number }): Map<string, SoundEntry> {
    const entries = new Map<string, SoundEntry>();
    for (const directory of directories) {
      const root = realPath(path.resolve(directory));
      if (root === undefined) continue;
      for (const language of this.children(root, budget)) {
        const languageDir = this.follow(root, language);
        if (languageDir?.kind !== 'directory') continue;
        this.walk(languageDir.real, '', new Set([root, languageDir.real]), 0, budget, (relative, file) => {
          const dot = relative.lastIndexOf('.');
          if (dot <= 0 || relative.lastIndexOf('/') > dot) return;
          const format = relative.slice(dot + 1).toLowerCase();
          if (!getFileFormat(format) && format !== 'gsm' && format !== 'g722') return;
          const id = relative.slice(0, dot);
          let entry = entries.get(id);
          if (!entry) entries.set(id, (entry = { id, formats: [], files: new Map() }));
          const key = `${language.name}/${format}`;
          if (entry.files.has(key)) return; // an earlier directory wins
          entry.files.set(key, file);
          entry.formats.push({ language: language.name, format });
        });
      }
    }
    return entries;
  }

  /**
   * Walks a real directory. `walked` holds the real directories of this language already walked
   * (none is entered twice); `depth` and the shared entry budget bound everything else.
   */
  private walk(
    dir: string,
    prefix: string,
    walked: Set<string>,
    depth: number,
    budget: { entries: number },
    visit: (relative: string, file: string) => void,
  ): void {
    for (const child of this.children(dir, budget)) {
      const relative = prefix ? `${prefix}/${child.name}` : child.name;
      const target = this.follow(dir, child);
      if (target === undefined) continue;
      if (target.kind === 'file') {
        visit(relative, target.real);
      } else if (depth < this.limits.maxDepth && !walked.has(target.real)) {
        walked.add(target.real);
        this.walk(target.real, relative, walked, depth + 1, budget, visit);
      }
    }
  }

  /** The entries of a directory, sorted, counted against the budget; empty when it cannot be read. */
  private children(dir: string, budget: { entries: number }): Dirent[] {
    if (budget.entries <= 0) return [];
    let children: Dirent[];
    try {
      children = readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (children.length > budget.entries) children = children.slice(0, budget.entries);
    budget.entries -= children.length;
    return children;
  }

  /**
   * What an entry of a real directory is: a file or directory with its real path, following a
   * link only when its target is inside the sound directories. Undefined for anything else.
   */
  private follow(dir: string, child: Dirent): { kind: 'file' | 'directory'; real: string; name: string } | undefined {
    const full = path.join(dir, child.name);
    if (child.isFile()) return { kind: 'file', real: full, name: child.name };
    if (child.isDirectory()) return { kind: 'directory', real: full, name: child.name };
    if (!child.isSymbolicLink()) return undefined;
    const real = realPath(full);
    if (real === undefined || !this.inside(real)) return undefined;
    try {
      const stats = statSync(real);
      if (stats.isFile()) return { kind: 'file', real, name: child.name };
      if (stats.isDirectory()) return { kind: 'directory', real, name: child.name };
    } catch {
      // Gone meanwhile.
    }
    return undefined;
  }
}

/** Where an extension stands in a preference order: aliases by their format, the rest after it, in their own order. */
function rank(order: readonly string[], extension: string): number {
  const name = getFileFormat(extension)?.name ?? extension;
  const at = order.indexOf(name);
  return at < 0 ? order.length : at;
}

/** The path with every link resolved; undefined when it is missing, dangling or loops. */
function realPath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
