// Stored recordings: the files under the recordings directory whose extension is a known format.
// A recording is named by its path relative to the directory without the extension; its format
// is the extension. Every lookup goes through the directory's confinement check, and a name that
// fails it is simply not found: nothing outside the directory is ever read, listed or deleted. A
// file with other hard links is neither downloaded nor copied (403): its bytes may belong elsewhere.
import { constants, copyFileSync, createReadStream, fstatSync, lstatSync, openSync, readdirSync, statSync, unlinkSync, closeSync } from 'node:fs';
import path from 'node:path';
import { getFileFormat } from '../../media/codecs.ts';
import { ConflictError, ForbiddenError, InvalidError, NotFoundError } from '../errors.ts';
import { nameErrorFor, RecordingNameError, storageError, type RecordingsDirectory, type ResolvedName } from './directory.ts';

export interface StoredRecording {
  readonly name: string;
  readonly format: string;
}

/** A stored recording found on disk. */
export interface StoredFile extends StoredRecording {
  /** The directory entry (what deleting removes; it may be a link to a file inside). */
  readonly entry: string;
  /** The real file that holds the media. */
  readonly real: string;
}

export interface StoredMedia {
  readonly contentType: string;
  readonly body: NodeJS.ReadableStream;
  readonly length: number;
}

const NOT_FOUND = 'Recording not found';
const SHARED_FILE = 'Recording file has other hard links';

/**
 * A file with other hard links holds bytes that also live elsewhere (a link planted to a file outside
 * the directory): it is neither served nor copied, as log channels refuse such files.
 */
function refuseSharedFile(file: string): void {
  let links: number;
  try {
    links = statSync(file).nlink;
  } catch {
    throw new NotFoundError(NOT_FOUND);
  }
  if (links > 1) throw new ForbiddenError(SHARED_FILE);
}

/** True for an extension this server can read and write (`wav`, `ulaw`, `sln16`, ...). */
export function isRecordingExtension(extension: string): boolean {
  return extension !== '' && extension === extension.toLowerCase() && getFileFormat(extension) !== undefined;
}

/** Splits `file.ext` at its last dot; undefined when there is no usable extension. */
function splitExtension(fileName: string): { stem: string; extension: string } | undefined {
  const dot = fileName.lastIndexOf('.');
  if (dot <= 0 || dot === fileName.length - 1) return undefined;
  return { stem: fileName.slice(0, dot), extension: fileName.slice(dot + 1) };
}

export class RecordingStore {
  constructor(private readonly directory: RecordingsDirectory) {}

  /** Every stored recording, sorted by name then format. Links to directories are not followed. */
  list(): StoredRecording[] {
    const found: StoredRecording[] = [];
    const walk = (dir: string, prefix: string): void => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          walk(full, relative);
          continue;
        }
        if (!entry.isFile() && !entry.isSymbolicLink()) continue;
        const parts = splitExtension(entry.name);
        if (!parts || !isRecordingExtension(parts.extension)) continue;
        if (entry.isSymbolicLink() && this.directory.realFile(full) === undefined) continue;
        found.push({ name: relative.slice(0, relative.length - parts.extension.length - 1), format: parts.extension });
      }
    };
    walk(this.directory.root, '');
    return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.format < b.format ? -1 : a.format > b.format ? 1 : 0));
  }

  /** The stored recording of that name in any format; undefined for unknown or refused names. */
  find(name: string): StoredFile | undefined {
    let resolved: ResolvedName;
    try {
      resolved = this.directory.resolve(name);
    } catch (error) {
      if (error instanceof RecordingNameError) return undefined;
      throw error;
    }
    return this.findResolved(resolved);
  }

  /** Any file of this (checked) name, whatever its format. */
  findResolved(resolved: ResolvedName): StoredFile | undefined {
    let entries: string[];
    try {
      entries = readdirSync(resolved.dir).sort();
    } catch {
      return undefined;
    }
    for (const entry of entries) {
      const parts = splitExtension(entry);
      if (!parts || parts.stem !== resolved.file || !isRecordingExtension(parts.extension)) continue;
      const full = path.join(resolved.dir, entry);
      const real = this.directory.realFile(full);
      if (real === undefined) continue;
      return { name: resolved.name, format: parts.extension, entry: full, real };
    }
    return undefined;
  }

  get(name: string): StoredRecording {
    const found = this.find(name);
    if (!found) throw new NotFoundError(NOT_FOUND);
    return { name: found.name, format: found.format };
  }

  delete(name: string): void {
    const found = this.find(name);
    if (!found) throw new NotFoundError(NOT_FOUND);
    // The entry, never what a link points at.
    unlinkSync(found.entry);
  }

  /**
   * Copies a recording under a new name (an extension on it is dropped; the copy keeps the
   * source's format). A malformed destination is InvalidError, one outside the directory
   * ForbiddenError, an existing one ConflictError.
   */
  copy(name: string, destinationName: string): StoredRecording {
    const source = this.find(name);
    if (!source) throw new NotFoundError(NOT_FOUND);
    const destination = this.resolveDestination(destinationName);
    if (this.findResolved(destination) !== undefined) {
      throw new ConflictError('A recording with the same name already exists on the system');
    }
    refuseSharedFile(source.real);
    const target = `${destination.base}.${source.format}`;
    let created: string[] = [];
    let copying = false;
    try {
      this.directory.checkWritable(target);
      created = this.directory.ensureDir(destination);
      copying = true;
      // EXCL: never replaces anything, not even a dangling link that appeared meanwhile.
      copyFileSync(source.real, target, constants.COPYFILE_EXCL);
    } catch (error) {
      // Nothing of a failed copy stays behind: no partial file (with EXCL, whatever has the
      // name now was made by this copy), no directory made for it.
      if (copying && (error as NodeJS.ErrnoException).code !== 'EEXIST') {
        try {
          this.removeFile(target);
        } catch {
          // It could not be made, or cannot be removed: nothing more to do.
        }
      }
      this.directory.removeDirs(created);
      const problem = error instanceof RecordingNameError ? error : nameErrorFor(error);
      if (problem) throw this.destinationError(problem);
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new ConflictError('A recording with the same name already exists on the system');
      throw storageError(error, 'Recording could not be copied');
    }
    return { name: destination.name, format: source.format };
  }

  /** Opens the media of a recording for download. */
  open(name: string): StoredMedia {
    const found = this.find(name);
    if (!found) throw new NotFoundError(NOT_FOUND);
    let fd: number;
    try {
      fd = openSync(found.real, 'r');
    } catch {
      throw new ForbiddenError('Recording could not be opened');
    }
    let length: number;
    try {
      const stats = fstatSync(fd);
      // Checked on the open file: a link made between the lookup and the open is caught too.
      if (stats.nlink > 1) throw new ForbiddenError(SHARED_FILE);
      length = stats.size;
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return { contentType: `audio/${found.format}`, body: createReadStream('', { fd, autoClose: true }), length };
  }

  /** Removes a recording file written by a live recording (cancel); missing files are fine. */
  removeFile(file: string): void {
    try {
      if (lstatSync(file).isFile()) unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  private resolveDestination(destinationName: string): ResolvedName {
    let name = destinationName;
    const slash = name.lastIndexOf('/');
    const dot = name.lastIndexOf('.');
    const last = name.slice(slash + 1);
    if (dot > slash + 1 && last !== '..') name = name.slice(0, dot);
    try {
      return this.directory.resolve(name);
    } catch (error) {
      if (error instanceof RecordingNameError) throw this.destinationError(error);
      throw error;
    }
  }

  private destinationError(error: RecordingNameError): Error {
    return error.problem === 'outside'
      ? new ForbiddenError('Destination file path is forbidden')
      : new InvalidError('Invalid destination recording name');
  }
}
