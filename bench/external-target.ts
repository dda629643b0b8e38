// Another ARI server as a target of bench/request-cpu.ts (issue 25: figures side by side with an
// ARI server the bench did not start, such as an Asterisk on the same machine). The bench only
// knows its base URL, its credentials and its process id: its CPU comes from /proc/<pid>/stat (all
// its threads, user + kernel, in the kernel's clock ticks — 10 ms each, so runs must be long enough
// for that to vanish) and its memory from /proc/<pid>/status. It is never started nor stopped here.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

/** The options naming an external target: `--external URL --external-pid PID [--external-auth user:password --external-name NAME]`. */
export interface ExternalOptions {
  readonly url: string;
  readonly pid: number;
  /** `user:password` for HTTP Basic, as the server's ARI user has it. */
  readonly auth: string;
  /** What the rows call it (letters, digits, `-`; `external` by default). */
  readonly name: string;
}

/** The figures bench/request-cpu.ts reads from a target; the V8 ones are 0 for a process that has none. */
export interface ExternalStats {
  cpuUs: number;
  systemUs: number;
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** Checks what the command line gave; undefined when no external target was asked for. */
export function externalOptions(values: { external?: string; 'external-pid'?: string; 'external-auth'?: string; 'external-name'?: string }): ExternalOptions | undefined {
  if (values.external === undefined && values['external-pid'] === undefined) return undefined;
  if (values.external === undefined || values['external-pid'] === undefined) throw new Error('--external URL and --external-pid PID go together');
  const url = new URL(values.external);
  if (url.protocol !== 'http:') throw new Error('--external is an http:// base URL (the ARI server, without /ari)');
  const pid = Number(values['external-pid']);
  if (!Number.isInteger(pid) || pid <= 1) throw new Error('--external-pid is the server process id');
  const auth = values['external-auth'] ?? 'asterisk:asterisk';
  if (!auth.includes(':')) throw new Error('--external-auth is user:password');
  const name = values['external-name'] ?? 'external';
  if (!/^[A-Za-z0-9-]{1,16}$/.test(name)) throw new Error('--external-name is 1–16 letters, digits or -');
  // Read once now, so a wrong pid fails before any round rather than in the middle of one.
  externalStats(pid);
  return { url: url.origin, pid, auth, name };
}

/** CPU (µs, all threads) and memory of the process now. */
export function externalStats(pid: number): ExternalStats {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces and parentheses) start at field 3; utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksToUs = 1_000_000 / CLK_TCK;
  const userUs = Number(fields[11]) * ticksToUs;
  const systemUs = Number(fields[12]) * ticksToUs;
  const rssKiB = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { cpuUs: userUs + systemUs, systemUs, rss: rssKiB * 1024, heapUsed: 0, external: 0, arrayBuffers: 0 };
}
