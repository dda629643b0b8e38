// Runs SIPp against a target (a scenario file, its own free UDP port, statistics to a CSV) and
// reads back its final counts: what the SIP benchmarks share. `startSipp` gives the running
// process (its pid for CPU figures, a kill for clean-up); `runSipp` waits for it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A UDP port free on `address` (for SIPp's own signalling). */
export async function freeUdpPort(address = '127.0.0.1'): Promise<number> {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, address);
  await once(socket, 'listening');
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

export interface SippResult {
  readonly code: number | null;
  readonly created: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly wallSeconds: number;
  readonly output: string;
  readonly stats: Record<string, string>;
}

export interface SippLaunch {
  /** Working directory: audio files, statistics and logs. */
  readonly work: string;
  /** `host:port` to call; absent for a UAS that only answers. */
  readonly target?: string;
  readonly scenario: string;
  readonly args: readonly string[];
  /** SIPp is told to stop 2 s before this and killed at it. */
  readonly limitMs: number;
  /** Local address for signalling and media (a distinct 127.0.0.x plays another host). Default 127.0.0.1. */
  readonly address?: string;
  /** Local SIP port; default a free one. */
  readonly port?: number;
  /** SIPp's media port (rtp_stream sends from it, -rtp_echo answers on it). Default 30000. */
  readonly mediaPort?: number;
}

export interface SippProcess {
  readonly pid: number;
  readonly port: number;
  readonly done: Promise<SippResult>;
  kill(): void;
}

/** Starts SIPp; `done` settles when it exits (it is killed at the limit). */
export async function startSipp(launch: SippLaunch): Promise<SippProcess> {
  const address = launch.address ?? '127.0.0.1';
  const port = launch.port ?? (await freeUdpPort(address));
  const statFile = join(launch.work, `stat-${address}-${port}.csv`);
  const started = performance.now();
  const child = spawn(
    'sipp',
    [...(launch.target ? [launch.target] : []), '-sf', launch.scenario, '-i', address, '-p', String(port), '-nostdin',
      '-mi', address, '-mp', String(launch.mediaPort ?? 30000), '-trace_stat', '-stf', statFile, '-fd', '1',
      '-timeout', `${Math.max(1, Math.round(launch.limitMs / 1000) - 2)}s`, '-timeout_error', ...launch.args],
    { cwd: launch.work, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer): void => void (output = (output + chunk.toString()).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = once(child, 'exit') as Promise<[number | null]>;
  if (child.pid === undefined) {
    // `exited` rejects with the same error.
    exited.catch(() => undefined);
    const [error] = (await once(child, 'error')) as [Error];
    throw new Error(`sipp did not start: ${error.message}`);
  }
  const pid = child.pid;
  const timer = setTimeout(() => child.kill('SIGKILL'), launch.limitMs);
  const done = exited.then(([code]): SippResult => {
    clearTimeout(timer);
    const wallSeconds = (performance.now() - started) / 1000;
    const stats: Record<string, string> = {};
    try {
      const lines = readFileSync(statFile, 'utf8').trim().split('\n');
      const head = lines[0]!.split(';');
      const last = lines[lines.length - 1]!.split(';');
      head.forEach((name, i) => (stats[name] = last[i] ?? ''));
    } catch {
      // No statistics file: SIPp did not start; its output says why.
    }
    return {
      code,
      created: Number(stats['TotalCallCreated'] ?? 0),
      succeeded: Number(stats['SuccessfulCall(C)'] ?? 0),
      failed: Number(stats['FailedCall(C)'] ?? 0),
      wallSeconds,
      output,
      stats,
    };
  });
  return {
    pid,
    port,
    done,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Runs SIPp to completion (killed at the phase limit) from 127.0.0.1 and reads its final statistics line. */
export async function runSipp(work: string, sipTarget: string, scenario: string, args: string[], limitMs: number): Promise<SippResult> {
  return (await startSipp({ work, target: sipTarget, scenario, args, limitMs })).done;
}
