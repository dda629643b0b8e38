// The recordings directory and the one rule every recording name obeys: it names a file inside
// that directory. A name is checked lexically (no absolute paths, no `.`/`..` or empty segments,
// no control characters such as NUL, valid UTF-8, each segment within the file system's 255 bytes
// and the whole within 1024) and then physically: the deepest part of its directory that
// exists must, after resolving symbolic links, still lie inside the directory's own real path.
// Missing subdirectories are created only after that check, one level at a time, each checked again.
import { lstatSync, mkdirSync, realpathSync, rmdirSync, type Stats } from 'node:fs';
import path from 'node:path';
import { ConflictError, ForbiddenError, UnprocessableError } from '../errors.ts';

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

// C0 controls (NUL included), DEL and the C1 controls have no place in a file name given over HTTP.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
// A lone surrogate (JSON "\ud800") has no UTF-8 form: the file system would get U+FFFD instead.
// U+FFFD itself is what a request's invalid UTF-8 (%ED%A0%80, %FF) was decoded to.
const NOT_UTF8 = /[\ud800-\udfff\ufffd]/u;

/** Longest file or directory name most file systems take, in bytes. */
export const NAME_MAX_BYTES = 255;
/** Longest recording name, in bytes (well under PATH_MAX once the directory is in front). */
export const RECORDING_NAME_MAX_BYTES = 1024;
/** Room kept in the last segment for `.` and the longest format extension (`slin16`). */
const EXTENSION_ROOM = 8;

/**
 * The file-system errors a name can provoke, as a RecordingNameError; undefined for any other
 * error (those are the caller's to map).
 */
export function nameErrorFor(error: unknown): RecordingNameError | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENAMETOOLONG':
      return new RecordingNameError('invalid', 'recording name too long for the file system');
    case 'ENOTDIR':
    case 'EISDIR':
    case 'EILSEQ':
    case 'EINVAL':
      return new RecordingNameError('invalid', 'recording name not usable on the file system');
    case 'ELOOP':
      return new RecordingNameError('outside', 'recording name goes through a link');
    default:
      return undefined;
  }
}

function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw nameErrorFor(error) ?? error;
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
   * A file name the dialplan gave (Record, MixMonitor): a relative one is a recording name; an
   * absolute one is accepted only inside this directory (as configured or with links resolved) and
   * becomes the name relative to it. RecordingNameError for anything outside.
   */
  nameOfPath(name: string): string {
    if (!path.isAbsolute(name)) return name;
    const absolute = path.resolve(name);
    for (const root of new Set([this.root, this.realRoot()])) {
      const relative = path.relative(root, absolute);
      if (relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)) return relative.split(path.sep).join('/');
    }
    throw new RecordingNameError('outside', 'the file lies outside the recordings directory');
  }

  /**
   * Checks a recording name (without extension) and says where it lives. Throws
   * RecordingNameError; nothing on disk is touched.
   */
  resolve(name: string): ResolvedName {
    if (typeof name !== 'string' || name === '') throw new RecordingNameError('invalid', 'empty recording name');
    if (CONTROL_CHARACTERS.test(name)) throw new RecordingNameError('invalid', 'control character in recording name');
    if (NOT_UTF8.test(name)) throw new RecordingNameError('invalid', 'recording name is not valid UTF-8');
    if (Buffer.byteLength(name) > RECORDING_NAME_MAX_BYTES) throw new RecordingNameError('invalid', 'recording name too long');
    if (name.startsWith('/') || path.isAbsolute(name)) throw new RecordingNameError('outside', 'absolute recording name');
    const segments = name.split('/');
    for (const [index, segment] of segments.entries()) {
      if (segment === '..') throw new RecordingNameError('outside', 'recording name leaves the recordings directory');
      if (segment === '' || segment === '.') throw new RecordingNameError('invalid', 'empty path segment in recording name');
      const room = index === segments.length - 1 ? NAME_MAX_BYTES - EXTENSION_ROOM : NAME_MAX_BYTES;
      if (Buffer.byteLength(segment) > room) throw new RecordingNameError('invalid', 'recording name segment too long');
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
  ensureDir(resolved: ResolvedName): string[] {
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
    const created: string[] = [];
    try {
      for (const dir of missing) {
        try {
          mkdirSync(dir);
          created.push(dir);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // A file where a directory of the name should be.
          if (code === 'ENOTDIR') throw new RecordingNameError('invalid', 'a part of the recording name is a file');
          if (code !== 'EEXIST') throw nameErrorFor(error) ?? error;
        }
        if (!this.contains(realpathSync(dir))) throw new RecordingNameError('outside', 'recording directory leaves the recordings directory');
      }
      const stats = lstatOrUndefined(resolved.dir);
      if (!stats || !(stats.isDirectory() || (stats.isSymbolicLink() && this.contains(realpathSync(resolved.dir))))) {
        throw new RecordingNameError('invalid', 'recording directory is not a directory');
      }
    } catch (error) {
      this.removeDirs(created);
      throw error;
    }
    return created;
  }

  /** Removes directories ensureDir created (deepest first) when what they were for failed. */
  removeDirs(created: readonly string[]): void {
    for (const dir of [...created].reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // Not empty (someone else uses it now) or already gone: leave it.
      }
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
    let stats: Stats | undefined;
    try {
      stats = lstatOrUndefined(file);
    } catch {
      return undefined;
    }
    if (!stats) return undefined;
    if (!stats.isFile() && !stats.isSymbolicLink()) return undefined;
    let real: string;
    try {
      real = realpathSync(file);
    } catch {
      return undefined;
    }
    if (!this.contains(real)) return undefined;
    try {
      return lstatSync(real).isFile() ? real : undefined;
    } catch {
      return undefined;
    }
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

/** A file-system failure that is not about the name, as a core error naming its cause. */
export function storageError(error: unknown, what: string): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return error as Error;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new ForbiddenError(`${what}: permission denied`, { cause: error });
    case 'EEXIST':
      return new ConflictError(`${what}: it already exists`, { cause: error });
    default:
      return new UnprocessableError(`${what}: ${code}`, { cause: error });
  }
}
