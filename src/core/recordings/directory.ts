// The recordings directory and the one rule every recording name obeys: it names a file inside
// that directory. A name is checked lexically (no absolute paths, no `.`/`..` or empty segments,
// no control characters such as NUL) and then physically: the deepest part of its directory that
// exists must, after resolving symbolic links, still lie inside the directory's own real path.
// Missing subdirectories are created only after that check, one level at a time, each checked again.
import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';

/** Why a name was refused: malformed, or pointing outside the recordings directory. */
export type NameProblem = 'invalid' | 'outside';

export class RecordingNameError extends Error {
  constructor(
    readonly problem: NameProblem,
    message: string,
  ) {
    super(message);
    this.name = 'RecordingNameError';
  }
}

/** A name that passed the checks. */
export interface ResolvedName {
  /** The name as the API reports it: the relative path inside the directory, `/`-separated. */
  readonly name: string;
  /** Absolute path of the recording without its extension. */
  readonly base: string;
  /** Absolute path of the directory that holds it. */
  readonly dir: string;
  /** The file name without its extension. */
  readonly file: string;
}

// C0 controls (NUL included) and DEL have no place in a file name given over HTTP.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

export class RecordingsDirectory {
  /** Absolute path of the directory as configured. */
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** Creates the directory itself when missing. */
  ensure(): void {
    mkdirSync(this.root, { recursive: true });
  }

  /** The directory with symbolic links resolved (it may itself be reached through a link). */
  realRoot(): string {
    try {
      return realpathSync(this.root);
    } catch {
      return this.root;
    }
  }

  /** True when `candidate` (an absolute, link-free path) is the directory or lies under it. */
  contains(candidate: string): boolean {
    for (const root of new Set([this.root, this.realRoot()])) {
      if (candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)) return true;
    }
    return false;
  }

  /**
   * Checks a recording name (without extension) and says where it lives. Throws
   * RecordingNameError; nothing on disk is touched.
   */
  resolve(name: string): ResolvedName {
    if (typeof name !== 'string' || name === '') throw new RecordingNameError('invalid', 'empty recording name');
    if (CONTROL_CHARACTERS.test(name)) throw new RecordingNameError('invalid', 'control character in recording name');
    if (name.startsWith('/') || path.isAbsolute(name)) throw new RecordingNameError('outside', 'absolute recording name');
    const segments = name.split('/');
    for (const segment of segments) {
      if (segment === '..') throw new RecordingNameError('outside', 'recording name leaves the recordings directory');
      if (segment === '' || segment === '.') throw new RecordingNameError('invalid', 'empty path segment in recording name');
    }
    const base = path.resolve(this.root, ...segments);
    if (!base.startsWith(this.root + path.sep)) throw new RecordingNameError('outside', 'recording name leaves the recordings directory');
    const dir = path.dirname(base);
    this.checkExistingAncestor(dir);
    return { name: segments.join('/'), base, dir, file: path.basename(base) };
  }

  /**
   * Creates the missing directories of a checked name, one level at a time, refusing to continue
   * if any level turns out (for instance through a link created meanwhile) to lie outside.
   */
  ensureDir(resolved: ResolvedName): void {
    this.ensure();
    const missing: string[] = [];
    let current = resolved.dir;
    while (lstatOrUndefined(current) === undefined) {
      missing.unshift(current);
      const parent = path.dirname(current);
      if (parent === current) break;
      current = parent;
    }
    this.checkExistingAncestor(current);
    for (const dir of missing) {
      try {
        mkdirSync(dir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // A file where a directory of the name should be.
        if (code === 'ENOTDIR') throw new RecordingNameError('invalid', 'a part of the recording name is a file');
        if (code !== 'EEXIST') throw error;
      }
      if (!this.contains(realpathSync(dir))) throw new RecordingNameError('outside', 'recording directory leaves the recordings directory');
    }
    const stats = lstatOrUndefined(resolved.dir);
    if (!stats || !(stats.isDirectory() || (stats.isSymbolicLink() && this.contains(realpathSync(resolved.dir))))) {
      throw new RecordingNameError('invalid', 'recording directory is not a directory');
    }
  }

  /**
   * A file a recording may be written to: not a symbolic link (writing through one would change
   * whatever it points at) and not a directory.
   */
  checkWritable(file: string): void {
    const stats = lstatOrUndefined(file);
    if (!stats) return;
    if (stats.isSymbolicLink()) throw new RecordingNameError('outside', 'recording file is a symbolic link');
    if (!stats.isFile()) throw new RecordingNameError('invalid', 'recording file is not a regular file');
  }

  /**
   * The real path of an existing file inside the directory, or undefined when it is missing,
   * not a regular file, or (through links) outside the directory.
   */
  realFile(file: string): string | undefined {
    const stats = lstatOrUndefined(file);
    if (!stats) return undefined;
    if (!stats.isFile() && !stats.isSymbolicLink()) return undefined;
    let real: string;
    try {
      real = realpathSync(file);
    } catch {
      return undefined;
    }
    if (!this.contains(real)) return undefined;
    const target = lstatOrUndefined(real);
    return target?.isFile() ? real : undefined;
  }

  private checkExistingAncestor(dir: string): void {
    let current = dir;
    for (;;) {
      if (lstatOrUndefined(current) !== undefined) break;
      // Nothing of the name exists yet, not even the directory: it will be created inside.
      if (current === this.root) return;
      const parent = path.dirname(current);
      if (parent === current) break;
      current = parent;
    }
    let real: string;
    try {
      real = realpathSync(current);
    } catch {
      // A dangling link: whatever it points at is not known to be inside.
      throw new RecordingNameError('outside', 'recording directory cannot be resolved');
    }
    if (!this.contains(real)) throw new RecordingNameError('outside', 'recording name leaves the recordings directory');
  }
}
