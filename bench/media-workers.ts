// Media workers (issue 25): what N SIPp G.711 echo calls (RTP both ways, a 1 kHz u-law tone into
// Answer() + Echo()) cost the server's main thread and its media workers, and whether the echo
// keeps up, with media.workers 0 (every packet on the main thread) and with workers. A real
// Patchbay in a child process carries the calls; once all are up, over a --window of seconds:
// CPU of the whole process and of its main thread (/proc, % of one core), each worker's CPU and
// event-loop utilisation (its load report, GET /metrics); at the window's end the calls' RTP
// statistics (ARI rtp_statistics of every channel): packets received and sent back, the share not
// sent back, the largest interarrival jitter and the packets lost. SIPp shares the machine's cores.
// Bounded: ≤ 1000 calls, windows ≤ 30 s, each run ends within its calls' length plus a minute.
// Usage: npm run bench:media-workers [-- --calls 200,500 --workers 0,1 --window 20]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, rssMiB } from './process-meter.ts';
import { CALL_SCENARIO, runSipTarget, startSipTarget } from './sip-bench-target.ts';
import { runSipp } from './sipp-run.ts';

const { values } = parseArgs({
  options: {
    target: { type: 'boolean', default: false },
    workers: { type: 'string', default: '0,1' },
    calls: { type: 'string', default: '200,500' },
    window: { type: 'string', default: '20' },
  },
});

const SCENARIO = CALL_SCENARIO;
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const list = (value: string, min: number, max: number): number[] =>
  value.split(',').map((item) => Math.min(Math.max(Math.floor(Number(item)) || 0, min), max));

// ---- the target: a real Patchbay in this (child) process ------------------------------------------

async function runTarget(workers: number): Promise<void> {
  await runSipTarget(['[bench-in]', 'exten => 200,1,Answer()', ' same => n,Echo()'], {
    media: { workers },
    sip: { rtp_port_start: 10000, rtp_port_end: 29999, max_calls_per_endpoint: 0 },
    max_channels: 5000,
    config_objects: { res_pjsip: { endpoint: { load: { context: 'bench-in', allow: 'ulaw' } } } },
  });
}

// ---- the benchmark --------------------------------------------------------------------------------

/** user+sys CPU seconds of one thread of a process (the main thread's id is the process's). */
function threadCpuSeconds(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

interface RunResult {
  readonly workers: number;
  readonly calls: number;
  readonly up: number;
  readonly processCpu: number;
  readonly mainCpu: number;
  readonly workerCpu: string;
  readonly workerElu: string;
  readonly received: number;
  readonly sent: number;
  readonly jitterMaxMs: number;
  readonly lost: number;
  readonly failed: number;
  readonly rssMiB: number;
  /** Jitter-buffer late packets and concealed frames, ring drops, since start. */
  readonly late: number;
  readonly concealed: number;
  readonly ringDrops: number;
}

async function api<T>(url: string, path: string): Promise<T> {
  const response = await fetch(`${url}${path}`, { headers: { authorization: AUTH }, signal: AbortSignal.timeout(10_000) });
  return (await response.json()) as T;
}

function total(text: string, name: string): number {
  return text.split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`)).reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

function metric(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`)).map((line) => Number(line.split(' ').pop()).toFixed(2));
}

async function runOnce(work: string, workers: number, calls: number, window: number): Promise<RunResult> {
  const target = await startSipTarget(fileURLToPath(import.meta.url), ['--target', '--workers', String(workers)]);
  try {
    const { url, sipPort, pid } = target;
    const rate = 50;
    const holdMs = (Math.ceil(calls / rate) + window + 12) * 1000;
    const sipp = runSipp(work, `127.0.0.1:${sipPort}`, SCENARIO, ['-set', 'caller', 'load', '-s', '200', '-d', String(holdMs), '-r', String(rate), '-m', String(calls), '-l', String(calls)], holdMs + 60_000);
    const deadline = performance.now() + Math.ceil(calls / rate) * 1000 + 20_000;
    let up = 0;
    while (performance.now() < deadline) {
      up = (await api<Array<{ state: string }>>(url, '/ari/channels')).filter((channel) => channel.state === 'Up').length;
      if (up >= calls) break;
      await sleep(500);
    }
    // The jitter buffers settle before the window opens.
    await sleep(2000);
    const cpu0 = cpuSeconds(pid);
    const main0 = threadCpuSeconds(pid, pid);
    const t0 = performance.now();
    await sleep(window * 1000);
    const wall = (performance.now() - t0) / 1000;
    const processCpu = ((cpuSeconds(pid) - cpu0) / wall) * 100;
    const mainCpu = ((threadCpuSeconds(pid, pid) - main0) / wall) * 100;
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: AUTH } })).text();
    const channels = await api<Array<{ id: string }>>(url, '/ari/channels');
    let received = 0;
    let sent = 0;
    let jitterMax = 0;
    let lost = 0;
    for (const channel of channels) {
      const stats = await api<{ rxcount?: number; txcount?: number; rxjitter?: number; rxploss?: number }>(url, `/ari/channels/${channel.id}/rtp_statistics`).catch(() => ({}) as Record<string, number>);
      received += stats.rxcount ?? 0;
      sent += stats.txcount ?? 0;
      jitterMax = Math.max(jitterMax, stats.rxjitter ?? 0);
      lost += stats.rxploss ?? 0;
    }
    const rss = rssMiB(pid);
    const result = await sipp;
    return {
      workers,
      calls,
      up,
      processCpu,
      mainCpu,
      workerCpu: metric(metrics, 'patchbay_media_worker_cpu_cores').map((cores) => `${(Number(cores) * 100).toFixed(0)}%`).join('/') || '-',
      workerElu: metric(metrics, 'patchbay_media_worker_utilization').join('/') || '-',
      received,
      sent,
      jitterMaxMs: jitterMax * 1000,
      lost,
      failed: result.failed,
      rssMiB: rss,
      late: total(metrics, 'patchbay_sip_jitterbuffer_late_packets_total'),
      concealed: total(metrics, 'patchbay_sip_jitterbuffer_concealed_frames_total'),
      ringDrops: total(metrics, 'patchbay_media_worker_ring_drops'),
    };
  } finally {
    await target.stop(10_000);
  }
}

async function runBench(): Promise<void> {
  if (spawnSync('sipp', ['-v']).error) return console.log('bench:media-workers: sipp is not installed; nothing measured');
  if (spawnSync('sox', ['--version']).error) return console.log('bench:media-workers: sox is not installed; nothing measured');
  const workerCounts = list(values.workers, 0, 16);
  const callCounts = list(values.calls, 1, 1000);
  const window = list(values.window, 5, 30)[0];
  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-media-workers-'));
  spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '10', 'sine', '1000', 'vol', '0.5']);
  console.log(`bench:media-workers — SIPp G.711 echo calls, ${window} s window once all are up; machine: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (shared: figures are noisy)`);
  console.log('workers  calls  up    process%  main%  worker cpu  worker elu  received  sent back  not sent back  jitter max  lost  failed  RSS MiB  jb late  concealed  ring drops');
  try {
    for (const calls of callCounts) {
      for (const workers of workerCounts) {
        const r = await runOnce(work, workers, calls, window);
        const missing = r.received > 0 ? ((r.received - r.sent) / r.received) * 100 : 0;
        console.log(
          `${String(r.workers).padEnd(8)} ${String(r.calls).padEnd(6)} ${String(r.up).padEnd(5)} ${r.processCpu.toFixed(1).padStart(8)}  ${r.mainCpu.toFixed(1).padStart(5)}  ${r.workerCpu.padStart(10)}  ${r.workerElu.padStart(10)}  ${String(r.received).padStart(8)}  ${String(r.sent).padStart(9)}  ${missing.toFixed(2).padStart(12)}%  ${r.jitterMaxMs.toFixed(1).padStart(7)} ms  ${String(r.lost).padStart(4)}  ${String(r.failed).padStart(6)}  ${r.rssMiB.toFixed(0).padStart(7)}  ${String(r.late).padStart(7)}  ${String(r.concealed).padStart(9)}  ${String(r.ringDrops).padStart(10)}`,
        );
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (values.target) await runTarget(list(values.workers, 0, 16)[0]);
else await runBench();
