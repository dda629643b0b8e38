// Originate-cycle benchmark: against a real Patchbay in a child process (developer mode off, log
// level warn) with a real event WebSocket registering the app `bench`, one cycle is
//   POST /ari/channels?endpoint=Local/answer@default&app=bench → StasisStart of that channel
//   → DELETE /ari/channels/{id} → ChannelDestroyed of that channel.
// Phases: a short warm-up (discarded), N sequential cycles, then M cycles with 50 in flight.
// Prints per-cycle p50/p99 and cycles per second per phase. Bounded in count and in time.
// Usage: npm run bench:originate [-- --sequential 500 --concurrent 2000 --inflight 50 --profile]
//   --profile  runs the target under `node --cpu-prof` and prints its hottest functions.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { ariRequest, type AriAnswer } from './ari-request.ts';
import { runTarget } from './target.ts';

const { values } = parseArgs({
  options: {
    target: { type: 'boolean', default: false },
    sequential: { type: 'string', default: '500' },
    concurrent: { type: 'string', default: '2000' },
    inflight: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '1000' },
    profile: { type: 'boolean', default: false },
    'profile-dir': { type: 'string' },
  },
});

const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);

if (values.target) await runTarget();
else await runBench();

// ---- the target: a real Patchbay in this (child) process ------------------------------------------


// ---- the benchmark client -----------------------------------------------------------------------

async function runBench(): Promise<void> {
  const sequential = clamp(values.sequential, 1, 20_000);
  const concurrent = clamp(values.concurrent, 1, 50_000);
  const inflight = clamp(values.inflight, 1, 200);
  const warmup = clamp(values.warmup, 0, 5_000);
  /** No single wait (HTTP answer or event) takes longer than this. */
  const STEP_TIMEOUT_MS = 5_000;
  /** The whole run stops here, whatever is left. */
  const RUN_DEADLINE = Date.now() + 120_000;
  const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;

  const profileDir = values.profile ? (values['profile-dir'] ?? mkdtempSync(join(os.tmpdir(), 'patchbay-prof-'))) : undefined;
  const target = await startTarget(profileDir);
  const base = new URL(target.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: inflight + 4 });

  /** One HTTP request with keep-alive; resolves with status and body text. */
  const request = (method: string, path: string): Promise<AriAnswer> => ariRequest({ base, authorization: AUTH, timeoutMs: STEP_TIMEOUT_MS, agent }, method, path);

  // Events may arrive before the HTTP answer naming the channel: remember what each channel saw.
  type Wanted = 'StasisStart' | 'ChannelDestroyed';
  const seen = new Map<string, Set<Wanted>>();
  const waiters = new Map<string, { type: Wanted; resolve: () => void }>();
  let eventCount = 0;

  const socket = new WebSocket(`${target.url.replace('http', 'ws')}/ari/events?app=bench`, { headers: { authorization: AUTH } });
  socket.on('message', (data) => {
    eventCount++;
    const text = String(data);
    // Only two event types matter here; skip parsing the others (the client shares the machine).
    if (!text.includes('"StasisStart"') && !text.includes('"ChannelDestroyed"')) return;
    const event = JSON.parse(text) as { type: string; channel?: { id: string } };
    if ((event.type !== 'StasisStart' && event.type !== 'ChannelDestroyed') || !event.channel) return;
    const id = event.channel.id;
    const waiter = waiters.get(id);
    if (waiter && waiter.type === event.type) {
      waiters.delete(id);
      waiter.resolve();
      return;
    }
    let types = seen.get(id);
    if (!types) seen.set(id, (types = new Set()));
    types.add(event.type);
  });
  await Promise.race([
    once(socket, 'open'),
    once(socket, 'unexpected-response').then(() => Promise.reject(new Error('event WebSocket refused'))),
  ]);

  function waitFor(id: string, type: Wanted): Promise<void> {
    const types = seen.get(id);
    if (types?.delete(type)) {
      if (types.size === 0) seen.delete(id);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(id);
        reject(new Error(`no ${type} for ${id} within ${STEP_TIMEOUT_MS} ms`));
      }, STEP_TIMEOUT_MS);
      waiters.set(id, {
        type,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** One cycle; resolves with its duration in ms. */
  async function cycle(): Promise<number> {
    const started = process.hrtime.bigint();
    const created = await request('POST', '/ari/channels?endpoint=Local/answer@default&app=bench');
    if (created.status !== 200) throw new Error(`originate answered ${created.status}: ${created.body}`);
    const id = (JSON.parse(created.body) as { id: string }).id;
    await waitFor(id, 'StasisStart');
    const deleted = await request('DELETE', `/ari/channels/${encodeURIComponent(id)}`);
    if (deleted.status !== 204) throw new Error(`hangup answered ${deleted.status}: ${deleted.body}`);
    await waitFor(id, 'ChannelDestroyed');
    seen.delete(id);
    return Number(process.hrtime.bigint() - started) / 1e6;
  }

  interface PhaseResult {
    readonly label: string;
    readonly durations: number[];
    readonly seconds: number;
    readonly clientCpuMs: number;
    /** NaN where the target's CPU time cannot be read (no /proc). */
    readonly serverCpuMs: number;
  }

  async function phase(label: string, total: number, parallel: number): Promise<PhaseResult> {
    const durations: number[] = [];
    let started = 0;
    const clientCpuBefore = process.cpuUsage();
    const serverCpuBefore = target.cpuMs();
    const began = process.hrtime.bigint();
    const worker = async (): Promise<void> => {
      while (started < total && Date.now() < RUN_DEADLINE) {
        started++;
        durations.push(await cycle());
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, total) }, worker));
    const seconds = Number(process.hrtime.bigint() - began) / 1e9;
    const clientCpu = process.cpuUsage(clientCpuBefore);
    const serverCpuMs = target.cpuMs() - serverCpuBefore;
    return { label, durations, seconds, clientCpuMs: (clientCpu.user + clientCpu.system) / 1000, serverCpuMs };
  }

  const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const rows: string[] = [];
  let failure: unknown;
  try {
    if (warmup > 0) await phase('warm-up', warmup, 1);
    for (const result of [await phase('sequential', sequential, 1), await phase(`${inflight} in flight`, concurrent, inflight)]) {
      const sorted = [...result.durations].sort((a, b) => a - b);
      rows.push(
        `${result.label.padEnd(14)} ${String(sorted.length).padStart(6)} cycles  p50 ${percentile(sorted, 50).toFixed(3).padStart(7)} ms  p99 ${percentile(sorted, 99)
          .toFixed(3)
          .padStart(7)} ms  ${(sorted.length / result.seconds).toFixed(0).padStart(6)} cycles/s  CPU/cycle: server ${(result.serverCpuMs / sorted.length).toFixed(3)} ms, client ${(
          result.clientCpuMs / sorted.length
        ).toFixed(3)} ms`,
      );
    }
    const left = await request('GET', '/ari/channels');
    rows.push(`channels left on the server: ${(JSON.parse(left.body) as unknown[]).length}; events received: ${eventCount}`);
  } catch (error) {
    failure = error;
  } finally {
    socket.terminate();
    agent.destroy();
    await target.stop();
  }
  process.stdout.write(`originate cycle: POST /channels (Local/answer@default, app) → StasisStart → DELETE → ChannelDestroyed\n${rows.join('\n')}\n`);
  if (profileDir) printProfile(profileDir);
  if (failure) {
    console.error(failure);
    process.exitCode = 1;
  }
}

interface Target {
  readonly url: string;
  /** CPU time (user + system) the target has used so far, in ms; NaN without /proc. */
  cpuMs(): number;
  stop(): Promise<void>;
}

async function startTarget(profileDir: string | undefined): Promise<Target> {
  const nodeArgs = ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, new URL(import.meta.url).pathname, '--target'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // The target prints its URL once it listens; it may also die first, or hang.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the target did not start within 30 s'));
    }, 30_000);
    child.stdout!.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(String(chunk).trim());
    });
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`the target exited (${code}) before listening`));
    };
    child.once('exit', onExit);
  });
  return {
    url,
    cpuMs() {
      try {
        // Fields 14 and 15 of /proc/<pid>/stat: utime and stime in clock ticks (100 per second on Linux).
        const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
      } catch {
        return Number.NaN;
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The target's hottest functions by self time, from the .cpuprofile written at its exit. */
function printProfile(dir: string): void {
  // The tsx loader runs in a worker thread with a profile of its own; the main thread's is the largest.
  const file = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
  if (!file) {
    console.log(`no profile written in ${dir}`);
    return;
  }
  interface ProfileNode {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byNode.get(profile.samples[i])!;
    const delta = profile.timeDeltas[i] ?? 0;
    totalUs += delta;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.replace(/^file:\/\//, '').replace(process.cwd() + '/', '')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
  }
  const top = [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, 25);
  console.log(`\ntarget CPU profile (${join(dir, file)}), ${(totalUs / 1e6).toFixed(2)} s sampled; top self time:`);
  for (const [key, us] of top) console.log(`${((us / totalUs) * 100).toFixed(1).padStart(5)}%  ${key}`);
}
