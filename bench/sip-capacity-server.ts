// The Patchbay a SIP capacity bench measures: bench/sip-capacity-target.ts in a child process with
// its open-file limit raised, started and stopped here (bench/sip-capacity.ts and
// bench/sip-side-by-side.ts). `track` registers its kill for the bench's clean-up on Ctrl-C or error.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TargetPlan } from './sip-capacity-target.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));

export interface Target {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly url: string;
  readonly sipPort: number;
  readonly workers: string;
  log(): string;
  stop(): Promise<void>;
}

/** Starts the server with its soft open-file limit raised to the hard one (2,000 calls need ~8,000 descriptors). */
export async function startTarget(track: (kill: () => void) => () => void, plan: TargetPlan): Promise<Target> {
  const script = join(HERE, 'sip-capacity-target.ts');
  const child = spawn('sh', ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', process.execPath, '--import', 'tsx', script, JSON.stringify(plan)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const forget = track(() => child.kill('SIGKILL'));
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000)));
  const hello = await new Promise<{ url: string; sipPort: number; workers: string }>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start in 60 s: ${log.slice(-2000)}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      resolve(JSON.parse(buffered.slice(0, newline)) as { url: string; sipPort: number; workers: string });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}: ${log.slice(-2000)}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    ...hello,
    log: () => log,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return forget();
      const exited = once(child, 'exit');
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      forget();
    },
  };
}
