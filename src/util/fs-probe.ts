// File-system questions asked while indexing prompts and music: answered false/empty instead of
// throwing, because a missing or unreadable entry simply is not there for those indexes.
import { readdirSync, statSync } from 'node:fs';

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The names in a directory, sorted; empty when it cannot be read. */
export function listDirectory(path: string): string[] {
  try {
    return readdirSync(path).sort();
  } catch {
    return [];
  }
}
