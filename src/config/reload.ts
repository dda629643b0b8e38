// What a configuration reload (SIGHUP) changes. The server applies the settings it can change
// while running and names the others, which take effect at the next start — never silently.
import type { PatchbayConfig } from './config.ts';

/** Settings a running server takes over on reload (dotted paths of the loaded configuration). */
export const LIVE_SETTINGS: readonly string[] = ['ari.users', 'ari.acls', 'logging.level', 'ari.outbound_websockets', 'websocket_clients', 'cdr', 'cel'];

/** The dotted paths (YAML spelling) whose values differ between two loaded configurations. */
export function changedSettings(before: PatchbayConfig, after: PatchbayConfig): string[] {
  const changed = new Set<string>();
  compare(before, after, [], changed, 0);
  return [...changed].sort();
}

/** Groups changed paths by whether reload applies them (`live`) or a restart does (`atRestart`). */
export function classifyChanges(changed: readonly string[]): { live: string[]; atRestart: string[] } {
  const live: string[] = [];
  const atRestart: string[] = [];
  for (const key of changed) (LIVE_SETTINGS.some((l) => key === l || key.startsWith(`${l}.`) || key.startsWith(`${l}[`)) ? live : atRestart).push(key);
  return { live, atRestart };
}

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Compares leaves; an array or a mapping that differs in shape is reported at its own path. Bounded depth. */
function compare(a: unknown, b: unknown, path: string[], out: Set<string>, depth: number): void {
  if (Object.is(a, b)) return;
  // Mappings of user-chosen names are held in Maps (ari.acls): compare them by their entries.
  if (a instanceof Map || b instanceof Map) {
    const entries = (m: unknown): unknown => (m instanceof Map ? Object.fromEntries(m) : m);
    return compare(entries(a), entries(b), path, out, depth);
  }
  const key = path.join('.');
  if (depth > 8 || typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.add(key);
    return;
  }
  if (Array.isArray(a)) {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.add(key);
    return;
  }
  const names = new Set([...Object.keys(a), ...Object.keys(b as object)]);
  for (const name of names) {
    if (depth === 0 && (name === 'usingDefaultPassword' || name === 'configFile' || name === 'origin')) continue;
    compare((a as Record<string, unknown>)[name], (b as Record<string, unknown>)[name], [...path, snake(name)], out, depth + 1);
  }
}
