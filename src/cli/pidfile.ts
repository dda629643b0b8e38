// The server's pidfile, `<data>/patchbay.pid`: written by the server at start, removed at exit, and
// read by `patchbay stop` (the admin CLI runs on the server's host; ARI has no stop operation, and
// a signal is the server's documented way to stop: SIGTERM ends it cleanly).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PIDFILE_NAME = 'patchbay.pid';

export function pidFilePath(dataDir: string): string {
  return join(dataDir, PIDFILE_NAME);
}

/** Writes this process's pid; returns a function that removes the file if it still names us. */
export function writePidFile(dataDir: string, pid: number = process.pid): () => void {
  const file = pidFilePath(dataDir);
  writeFileSync(file, `${pid}\n`);
  return () => {
    if (readPidFile(dataDir) === pid) rmSync(file, { force: true });
  };
}

/** The pid in the file, or null when there is no (valid) file. */
export function readPidFile(dataDir: string): number | null {
  let text: string;
  try {
    text = readFileSync(pidFilePath(dataDir), 'utf8');
  } catch {
    return null;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}
