// Recordings a server was killed in the middle of (SIGKILL, power loss, a full disk): a recording that
// replaces or extends a file is written to a hidden `.<name>.<random>.partial` beside it and renamed
// into place when it ends, so a killed server leaves the hidden file behind, never listed and never
// cleaned. At start each one is finished as the recording would have been — a WAV header made to
// describe every whole sample on disk — and moved to its name, or beside it when that is taken.
import { closeSync, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync, renameSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { parseWavLayout } from '../../media/wav.ts';
import { WavWriter } from '../../media/wav-writer.ts';
import { isRecordingExtension } from './store.ts';

/** `.<name>.<12 hex>.partial`, as LiveRecording names them (`.recording.<hex>.partial` when the name was too long). */
const PARTIAL_RE = /^\.(.+)\.([0-9a-f]{12})\.partial$/;
/** The walk stops after this many directory entries: a start must not hang on a huge tree. */
const MAX_ENTRIES = 200_000;
const MAX_DEPTH = 32;

export interface RecoveryResult {
  /** Recovered recordings, as paths relative to the recordings directory. */
  readonly recovered: string[];
  /** Empty partial files removed. */
  readonly removed: number;
}

export function recoverPartialRecordings(root: string, failed: (file: string, err: unknown) => void): RecoveryResult {
  const result = { recovered: [] as string[], removed: 0 };
  let budget = MAX_ENTRIES;
  const walk = (dir: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (--budget < 0) return;
      const full = path.join(dir, entry.name);
      // Links are never followed nor touched: only what the server itself wrote here is recovered.
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) walk(full, depth + 1);
        continue;
      }
      const match = entry.isFile() ? PARTIAL_RE.exec(entry.name) : null;
      if (!match) continue;
      try {
        const outcome = recoverOne(full, match[1]!, match[2]!);
        if (outcome === 'removed') result.removed += 1;
        else if (outcome !== undefined) result.recovered.push(path.relative(root, outcome).split(path.sep).join('/'));
      } catch (err) {
        failed(full, err);
      }
    }
  };
  walk(root, 0);
  return result;
}

/** The file it was moved to, 'removed' for an empty one, undefined when it is left alone. */
function recoverOne(partial: string, name: string, random: string): string | 'removed' | undefined {
  const stats = lstatSync(partial);
  // Another link to it means someone else put it there.
  if (!stats.isFile() || stats.nlink > 1) return undefined;
  if (stats.size === 0) {
    unlinkSync(partial);
    return 'removed';
  }
  const isWav = startsWithRiff(partial);
  const dot = name.lastIndexOf('.');
  let stem = dot > 0 ? name.slice(0, dot) : name;
  let extension = dot > 0 ? name.slice(dot + 1) : '';
  if (!isRecordingExtension(extension)) {
    // `.recording.<hex>.partial`: the name did not fit; a WAV can still be told by its header.
    if (!isWav) return undefined;
    stem = name;
    extension = 'wav';
  }
  if (extension === 'wav') {
    if (!isWav) return undefined;
    finishWavHeader(partial);
  }
  const dir = path.dirname(partial);
  let target = path.join(dir, `${stem}.${extension}`);
  if (existsSync(target)) target = path.join(dir, `${stem}-recovered-${random}.${extension}`);
  if (existsSync(target)) return undefined;
  renameSync(partial, target);
  return target;
}

function startsWithRiff(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.toString('latin1') === 'RIFF';
  } finally {
    closeSync(fd);
  }
}

/** Makes the header describe every whole sample after it (the writer patches it only at each flush). */
function finishWavHeader(file: string): void {
  const fd = openSync(file, 'r');
  let rate: number;
  try {
    const length = fstatSync(fd).size;
    rate = parseWavLayout((offset, size) => {
      const buffer = Buffer.alloc(size);
      return buffer.subarray(0, readSync(fd, buffer, 0, size, offset));
    }, length).format.sampleRate;
  } finally {
    closeSync(fd);
  }
  // Opening to append does the work: it counts the unpatched samples and writes the sizes.
  WavWriter.open(file, { rate, append: true }).finalize();
}
