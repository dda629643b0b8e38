// The process's open-file limit, for bounds that must stay below it (connections, channels): a
// server that reaches it can no longer accept, open recordings or write logs.
import { readFileSync } from 'node:fs';

/** Assumed when the limit cannot be read (not Linux): the usual soft limit. */
const FALLBACK_LIMIT = 1024;

/** The soft RLIMIT_NOFILE of this process, read from /proc/self/limits; 1024 when unknown. */
export function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
    const value = Number(soft);
    return Number.isSafeInteger(value) && value > 0 ? value : FALLBACK_LIMIT;
  } catch {
    return FALLBACK_LIMIT;
  }
}
