// The driver's side of bench/request-cpu-target.ts: starts one target process (`server`, `floor`
// or `hosted`), reads the URL it sends, asks it `stats` or `gc` over the IPC channel (one message
// back) and stops it by closing the channel. Also the measure the CPU benches share: pings against a
// target with its own CPU read before and after. Used by request-cpu.ts, ping-gap.ts and
// ping-allocations.ts, so the line protocol and the ping measure live in one place.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

export type TargetRole = 'server' | 'floor' | 'hosted';

export interface TargetLaunch {
  /** Named in errors. */
  readonly name: string;
  readonly role: TargetRole;
  /** request-cpu-target.ts's third argument (the floor's events per cycle); left out when undefined. */
  readonly floorMode?: string;
  /** Node.js flags before the script's; --expose-gc is always given (the `gc` command needs it). */
  readonly nodeArgs?: readonly string[];
  /** The Node.js that runs it; this process's by default. */
  readonly node?: string;
  /** Its environment; this process's by default. */
  readonly env?: NodeJS.ProcessEnv;
  /** How long its URL or an answer may take before it is killed (ms); none by default. */
  readonly answerTimeoutMs?: number;
}

export interface TargetProcess {
  readonly url: string;
  /**
   * Lines it printed that are none of the protocol's (V8's --trace-gc, --trace-deopt …), in
   * order: the protocol's are a URL or JSON.
   */
  readonly traceLines: string[];
  /** Sends `command` and returns the JSON line it answers. */
  ask<T>(command: 'stats' | 'gc'): Promise<T>;
  /** Closes its IPC channel and waits for it to exit (killed after 10 s). */
  stop(): Promise<void>;
}

export async function startTargetProcess(launch: TargetLaunch): Promise<TargetProcess> {
  const script = new URL('./request-cpu-target.ts', import.meta.url).pathname;
  const args = [...(launch.nodeArgs ?? []), '--expose-gc', '--import', 'tsx', script, launch.role, ...(launch.floorMode === undefined ? [] : [launch.floorMode])];
  // The figures come over the IPC channel (request-cpu-target.ts says why); stdout carries only
  // what V8 prints (--trace-gc, --trace-deopt …).
  const child = spawn(launch.node ?? process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], env: launch.env ?? process.env });
  // Read by a listener, never paused: an iterator's backpressure (it pauses past 1,024 unread lines)
  // would fill the pipe while the driver awaits a round and block the target mid-round.
  const traceLines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => void traceLines.push(line));
  const answers: unknown[] = [];
  let waiting: ((message: unknown) => void) | undefined;
  let exited = false;
  child.on('message', (message) => {
    if (waiting) waiting(message);
    else answers.push(message);
  });
  child.on('exit', () => {
    exited = true;
    waiting?.(undefined);
  });
  const next = async (): Promise<unknown> => {
    const timer = launch.answerTimeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), launch.answerTimeoutMs);
    try {
      if (answers.length > 0) return answers.shift();
      if (exited) throw new Error(`the ${launch.name} target exited`);
      const message = await new Promise<unknown>((resolve) => (waiting = resolve));
      waiting = undefined;
      if (message === undefined) throw new Error(`the ${launch.name} target exited`);
      return message;
    } finally {
      clearTimeout(timer);
    }
  };
  const { url } = (await next()) as { url: string };
  return {
    url,
    traceLines,
    async ask<T>(command: 'stats' | 'gc'): Promise<T> {
      child.send(command);
      return (await next()) as T;
    },
    async stop() {
      if (exited) return;
      const exit = once(child, 'exit');
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

export interface PingRun {
  /** The target's CPU over the pings (µs, as its `cpuUs` reads it). */
  readonly cpuUs: number;
  readonly requests: number;
  /** Wall time of the pings. */
  readonly seconds: number;
  /** Latency p99 (ms). */
  readonly p99: number;
}

export interface PingOptions {
  /** The target's base URL (GET /ari/asterisk/ping is asked). */
  readonly url: string;
  readonly authorization: string;
  readonly connections: number;
  readonly amount: number;
  /** The target's CPU so far, in µs. */
  cpuUs(): Promise<number>;
  /** Called once the CPU before is read, just before the first ping (to mark what comes after). */
  started?(): void;
}

/** `amount` keep-alive pings and what CPU the target spent on them; an error or non-2xx throws. */
export async function measurePings(options: PingOptions): Promise<PingRun> {
  const url = `${options.url}/ari/asterisk/ping`;
  const before = await options.cpuUs();
  options.started?.();
  const began = performance.now();
  // autocannon ends a run of `amount` requests only at its next sample tick (1 s by default): at 10,000
  // req/s that made the wall time, and so req/s, up to 50 % off. Ticks of 10 ms keep it within 1 %.
  const result = await autocannon({ url, connections: options.connections, amount: options.amount, headers: { authorization: options.authorization }, sampleInt: 10 });
  const seconds = (performance.now() - began) / 1000;
  const after = await options.cpuUs();
  if (result.errors + result.non2xx > 0) throw new Error(`ping: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return { cpuUs: after - before, requests: result.requests.total, seconds, p99: result.latency.p99 };
}
