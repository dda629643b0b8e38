// Facts about the running server that ARI's system information reports: what build this is,
// and which account the process runs as.
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';

const PACKAGE_JSON = new URL('../../package.json', import.meta.url);

export interface BuildDescription {
  os: string;
  kernel: string;
  options: string;
  machine: string;
  date: string;
  user: string;
}

export interface ProcessIdentity {
  user: string;
  group: string;
}

let cachedVersion: string | undefined;

/** The version in package.json, the one place it is maintained. */
export function patchbayVersion(): string {
  cachedVersion ??= (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;
  return cachedVersion;
}

/**
 * Patchbay runs from source, so its "build" is the installed tree on this host: the date is when
 * package.json was last written (installed or checked out), in Asterisk's `YYYY-MM-DD HH:MM:SS UTC` form.
 */
let cachedBuild: BuildDescription | undefined;
let cachedIdentity: ProcessIdentity | undefined;

export function describeBuild(): BuildDescription {
  cachedBuild ??= {
    os: os.type(),
    kernel: os.release(),
    options: '',
    machine: os.arch(),
    date: statSync(PACKAGE_JSON).mtime.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'),
    user: processIdentity().user,
  };
  return cachedBuild;
}

/** The process never changes identity, so the lookups (one reads /etc/group) run once. */
export function processIdentity(): ProcessIdentity {
  cachedIdentity ??= { user: safeUserName(), group: groupName() };
  return cachedIdentity;
}

function safeUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    // A uid with no passwd entry (common in containers) has no name to report.
    return String(process.getuid?.() ?? '');
  }
}

/** Node has no group lookup, so the name comes from /etc/group; the numeric id stands in when absent. */
function groupName(): string {
  const gid = process.getgid?.();
  if (gid === undefined) return '';
  try {
    for (const line of readFileSync('/etc/group', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (id !== undefined && Number(id) === gid) return name;
    }
  } catch {
    // No /etc/group: fall through to the numeric id.
  }
  return String(gid);
}
