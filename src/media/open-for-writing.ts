// Opens an audio file for the writers. Not the 'a' flags: Linux ignores the position of writes on
// an O_APPEND descriptor, and header patches and appends need positioned writes.
import { closeSync, constants, fstatSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';

export interface OpenForWritingOptions {
  /** Continue the existing file (created when missing) instead of truncating it. */
  readonly append?: boolean;
  /**
   * Create a new file: fails with EEXIST when anything has the name, a link (even a dangling one)
   * included, so nothing is ever written through an entry that was already there.
   */
  readonly exclusive?: boolean;
  /**
   * With `exclusive`: the new file starts as a copy of this one's bytes (nothing when it is
   * missing). A link at that name is refused (ELOOP), and so is anything but a regular file.
   * This is how a file is appended to without writing into it: copy, append, rename over.
   */
  readonly copyFrom?: string;
}

const COPY_CHUNK = 64 * 1024;

/** A descriptor open for positioned reads and writes; see the options. */
export function openForWriting(path: string, options: OpenForWritingOptions = {}): number {
  if (options.exclusive) {
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o666);
    if (options.copyFrom === undefined) return fd;
    try {
      copyInto(options.copyFrom, fd);
      return fd;
    } catch (error) {
      closeSync(fd);
      removeCreated(path);
      throw error;
    }
  }
  if (!options.append) return openSync(path, 'w+');
  try {
    return openSync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return openSync(path, 'w+');
    throw error;
  }
}

/**
 * Opens `path` as openForWriting does and hands the descriptor to `prepare` (read what is there,
 * write a header, make the writer). When that throws, the descriptor is closed, and a file created
 * exclusively removed, before the error goes on: a failed open leaves nothing behind.
 */
export function openPrepared<T>(path: string, options: OpenForWritingOptions, prepare: (fd: number) => T): T {
  const fd = openForWriting(path, options);
  try {
    return prepare(fd);
  } catch (error) {
    closeSync(fd);
    if (options.exclusive) removeCreated(path);
    throw error;
  }
}

/** Removes a file this process created exclusively and could not finish setting up. */
export function removeCreated(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone, or the directory cannot be written: nothing more to do.
  }
}

function copyInto(source: string, fd: number): void {
  let input: number;
  try {
    input = openSync(source, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if (!fstatSync(input).isFile()) throw Object.assign(new Error(`not a regular file: ${source}`), { code: 'EISDIR' });
    const buffer = Buffer.alloc(COPY_CHUNK);
    let position = 0;
    for (;;) {
      const read = readSync(input, buffer, 0, buffer.length, position);
      if (read === 0) break;
      let written = 0;
      while (written < read) written += writeSync(fd, buffer, written, read - written, position + written);
      position += read;
    }
  } finally {
    closeSync(input);
  }
}
