// Opens an audio file for the writers. Not the 'a' flags: Linux ignores the position of writes on
// an O_APPEND descriptor, and header patches and appends need positioned writes.
import { openSync } from 'node:fs';

/** A fresh (truncated) file, or with `append` the existing file (created when missing). */
export function openForWriting(path: string, append: boolean): number {
  if (!append) return openSync(path, 'w+');
  try {
    return openSync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return openSync(path, 'w+');
    throw error;
  }
}
