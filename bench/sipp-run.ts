// Runs SIPp once against a target (a scenario file, its own free UDP port, statistics to a CSV) and
// reads back its final counts: what the SIP benchmarks share.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A UDP port free on 127.0.0.1 (for SIPp's own signalling). */
async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, '127.0.0.1');
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

/** Runs SIPp to completion (killed at the phase limit) and reads its final statistics line. */
export async function runSipp(work: string, sipTarget: string, scenario: string, args: string[], limitMs: number): Promise<SippResult> {
  const port = await freeUdpPort();
  const statFile = join(work, `stat-${port}.csv`);
  const started = performance.now();
  const child = spawn(
    'sipp',
    [sipTarget, '-sf', scenario, '-i', '127.0.0.1', '-p', String(port), '-nostdin',
      '-mi', '127.0.0.1', '-mp', '30000', '-trace_stat', '-stf', statFile, '-fd', '1',
      '-timeout', `${Math.round(limitMs / 1000) - 2}s`, '-timeout_error', ...args],
    { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer): void => void (output = (output + chunk.toString()).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const [code] = (await once(child, 'exit')) as [number | null];
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
}

