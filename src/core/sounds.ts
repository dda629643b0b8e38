// The sounds index: every prompt under the configured sound directories, by id (`hello-world`,
// `digits/1`), language (the first directory level, `en`, `fr`, ...) and format (file extension).
import { isDirectory, listDirectory } from './fs-probe.ts';
import { join } from 'node:path';
import { getFileFormat } from '../media/codecs.ts';
import { NotFoundError } from './errors.ts';

export interface SoundFormat {
  readonly language: string;
  readonly format: string;
}

export interface SoundEntry {
  readonly id: string;
  readonly formats: SoundFormat[];
  /** Absolute file per `language/format`. */
  readonly files: Map<string, string>;
}

/** Formats Patchbay can play, in order of preference when several exist. */
const PLAYABLE_PREFERENCE = ['wav', 'sln16', 'wav16', 'sln', 'ulaw', 'alaw'];
/** How long an index is trusted before the directories are walked again. */
const RESCAN_AFTER_MS = 5000;

export class Sounds {
  private entries = new Map<string, SoundEntry>();
  private scannedAt = 0;

  constructor(private readonly directories: readonly string[]) {}

  /** Walks the directories now (also done lazily when the index is older than a few seconds). */
  rescan(): void {
    const entries = new Map<string, SoundEntry>();
    for (const directory of this.directories) {
      for (const language of listDirectory(directory)) {
        const languageDir = join(directory, language);
        if (!isDirectory(languageDir)) continue;
        walk(languageDir, '', (relative, file) => {
          const dot = relative.lastIndexOf('.');
          if (dot <= 0) return;
          const format = relative.slice(dot + 1).toLowerCase();
          if (!getFileFormat(format) && format !== 'gsm' && format !== 'g722') return;
          const id = relative.slice(0, dot);
          let entry = entries.get(id);
          if (!entry) entries.set(id, (entry = { id, formats: [], files: new Map() }));
          const key = `${language}/${format}`;
          if (entry.files.has(key)) return; // an earlier directory wins
          entry.files.set(key, file);
          entry.formats.push({ language, format });
        });
      }
    }
    this.entries = entries;
    this.scannedAt = Date.now();
  }

  private fresh(): Map<string, SoundEntry> {
    if (Date.now() - this.scannedAt > RESCAN_AFTER_MS) this.rescan();
    return this.entries;
  }

  /** Sounds having at least one file matching the filters. */
  list(filter: { lang?: string; format?: string } = {}): { id: string; formats: SoundFormat[] }[] {
    const result: { id: string; formats: SoundFormat[] }[] = [];
    for (const entry of this.fresh().values()) {
      const formats = entry.formats.filter(
        (candidate) => (!filter.lang || candidate.language === filter.lang) && (!filter.format || candidate.format === filter.format),
      );
      if (formats.length > 0) result.push({ id: entry.id, formats: filter.lang || filter.format ? formats : [...entry.formats] });
    }
    return result.sort((a, b) => a.id.localeCompare(b.id));
  }

  get(id: string): { id: string; formats: SoundFormat[] } {
    const entry = this.fresh().get(id);
    if (!entry) throw new NotFoundError(`Sound not found: ${id}`);
    return { id: entry.id, formats: [...entry.formats] };
  }

  /**
   * The playable file of a sound in a language, falling back to the language's base (`en_US` → `en`)
   * and then to `en`, as Asterisk does; undefined when there is none.
   */
  resolve(id: string, language: string): string | undefined {
    const entry = this.fresh().get(id);
    if (!entry) return undefined;
    const languages = [language, language.split(/[_-]/)[0], 'en'];
    for (const candidate of languages) {
      for (const format of PLAYABLE_PREFERENCE) {
        const file = entry.files.get(`${candidate}/${format}`);
        if (file) return file;
      }
    }
    return undefined;
  }
}



function walk(root: string, prefix: string, visit: (relative: string, file: string) => void): void {
  for (const name of listDirectory(join(root, prefix))) {
    const relative = prefix ? `${prefix}/${name}` : name;
    const file = join(root, relative);
    if (isDirectory(file)) walk(root, relative, visit);
    else visit(relative, file);
  }
}
