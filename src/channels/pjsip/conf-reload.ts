// pjsip.conf read again at reload (SIGHUP, `module reload chan_pjsip.so`), as Asterisk's res_pjsip
// reload: endpoints, auths, aors, identifies, registrations and the global section follow the file
// (added, changed, removed) while calls go on; transports stay as they were started (a listener
// cannot move under its calls) and a changed one is named as needing a restart. A file with any
// error is refused whole: the running objects stay, the errors are logged and the reload fails.
import type { Logger } from 'pino';
import type { ConfigObjectTree } from '../../core/dynamic-config/file-backend.ts';
import { readPjsipConfObjects } from './objects.ts';

const CONFIG_CLASS = 'res_pjsip';

export interface PjsipConfReload {
  /** The tree now in force (the previous one when the reload was refused). */
  readonly tree: ConfigObjectTree;
  /** Objects added, changed or removed. */
  readonly changed: number;
}

/**
 * Reads `file` again and hands the new objects to `replace` (the core's file layer), transports
 * kept from `running`. Throws (naming the first error) when the file cannot be used.
 */
export function reloadPjsipConf(file: string, running: ConfigObjectTree, replace: (tree: ConfigObjectTree) => number, log: Logger): PjsipConfReload {
  const read = readPjsipConfObjects(file);
  const problems = [...read.errors, ...read.invalid];
  if (problems.length > 0) {
    for (const line of problems) log.error(line);
    throw new Error(`${file}: ${problems.length} error(s), the first: ${problems[0]}; the running SIP configuration stays`);
  }
  for (const line of read.warnings) log.warn(line);
  const before = transportsOf(running);
  const after = transportsOf(read.tree);
  if (JSON.stringify(sorted(before)) !== JSON.stringify(sorted(after))) {
    log.warn(`${file}: transports changed (${describeChange(before, after)}); transports are read at start: restart to apply`);
  }
  const next: ConfigObjectTree = { ...read.tree, [CONFIG_CLASS]: { ...(read.tree[CONFIG_CLASS] ?? {}), transport: before } };
  const changed = replace(next);
  log.info({ file, changed }, `pjsip.conf reloaded: ${changed} object(s) added, changed or removed`);
  return { tree: next, changed };
}

type Objects = Readonly<Record<string, Readonly<Record<string, string>>>>;

function transportsOf(tree: ConfigObjectTree): Objects {
  const types = Object.hasOwn(tree, CONFIG_CLASS) ? tree[CONFIG_CLASS] : undefined;
  return types && Object.hasOwn(types, 'transport') ? types.transport : {};
}

function sorted(objects: Objects): [string, [string, string][]][] {
  return Object.keys(objects)
    .sort()
    .map((id) => [id, Object.entries(objects[id]).sort(([a], [b]) => a.localeCompare(b))]);
}

function describeChange(before: Objects, after: Objects): string {
  const ids = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return ids
    .filter((id) => JSON.stringify(before[id] ?? null) !== JSON.stringify(after[id] ?? null))
    .slice(0, 10)
    .map((id) => (before[id] === undefined ? `${id} added` : after[id] === undefined ? `${id} removed` : `${id} changed`))
    .join(', ');
}
