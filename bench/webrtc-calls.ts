// WebRTC call capacity (issue 25): N concurrent WebRTC calls into a real Patchbay (bench/
// sip-capacity-target.ts in a child process: SIP over WebSocket on /ws, a webrtc=yes endpoint
// allowing G.711 µ-law, or Opus with --codec opus), with media.workers 0 and others, step by step. Each call is placed by a
// browser-like caller without a browser (bench/webrtc-caller.ts: SIP over its own WebSocket, ICE
// checks, DTLS-SRTP, SRTP; werift's STUN and DTLS, our SRTP engine), spread over --clients
// processes (bench/webrtc-callers-process.ts) so that the callers are not the limit; their CPU is
// measured and printed, not subtracted. Each call dials Echo() (or a Playback loop) and sends a
// 20 ms packet 50 times a second for --hold seconds.
// Per step and worker count (the worker counts alternate within a step, on a fresh server each):
// calls up and failed, the set-up (INVITE to SRTP keys) and the DTLS handshake proper (first
// answered ICE check to keys) at p50/p99, the set-up rate, the server's main thread and its media
// workers in % of one core, the callers' processes likewise, RSS per call, the server's RTP figures
// over the window (received, sent, lost, late: clean is 0 failed and < 0.1 % lost or late, as
// bench/sip-capacity.ts judges), what came back to the callers authentic, and after the hang-up
// whatever the server still holds (channels, worker streams): a leak if it stays.
// Usage: npm run bench:webrtc-calls [-- --calls 10,25,50,100 --hold 10 --workers 0,2 --clients 2
//        --rate 20 --scenario echo|playback --codec ulaw|opus --json]
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CpuMeter, rssMiB, RunQueueMeter, ThreadCpuMeter } from './process-meter.ts';
import { scrapeMetrics, type MetricsSnapshot } from './prometheus-text.ts';
import { CLEAN_PERCENT } from './sip-capacity-step.ts';
import { startTarget, type Target } from './sip-capacity-server.ts';
import { EXTENSIONS } from './sip-capacity-target.ts';
import type { CallerCodec } from './webrtc-audio.ts';
import type { CallerFigures } from './webrtc-caller.ts';
import type { CallersCommand, CallersReply, ClockFigures } from './webrtc-callers-process.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '10,25,50,100' },
    hold: { type: 'string', default: '10' },
    workers: { type: 'string', default: '0,2' },
    /** Caller processes; the step's calls are shared out between them. */
    clients: { type: 'string', default: '2' },
    /** Calls placed per second, all processes together. */
    rate: { type: 'string', default: '20' },
    scenario: { type: 'string', default: 'echo' },
    /** ulaw, or opus (the endpoint then allows opus only; Echo() sends the frames back as they came, Playback codes them). */
    codec: { type: 'string', default: 'ulaw' },
    json: { type: 'boolean', default: false },
  },
});

/** Bounds: a step of at most this many calls, held at most this long, over at most this many processes. */
const MAX_CALLS = 1000;
const MAX_HOLD_SECONDS = 600;
const MAX_CLIENTS = 8;
const PACKETS_PER_SECOND = 50;
const HERE = fileURLToPath(new URL('.', import.meta.url));
const UP_SERIES = 'patchbay_channels{technology="PJSIP",state="Up"}';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const clamp = (value: number, low: number, high: number): number => Math.min(Math.max(Number.isFinite(value) ? value : low, low), high);
const list = (text: string, max: number): number[] => text.split(',').map((part) => clamp(Math.floor(Number(part)), 0, max));
const percent = (part: number, whole: number): number => (whole > 0 ? (part / whole) * 100 : 0);

/** GET /metrics with time to spare: a server busy with hundreds of handshakes answers late, not never. */
const SCRAPE_TIMEOUT_MS = 60_000;
const scrape = (url: string): Promise<MetricsSnapshot> => scrapeMetrics(url, SCRAPE_TIMEOUT_MS);

/** The value at quantile `q` (0..1) of `samples`, NaN for none. */
function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** One forked caller process and its replies, awaited in order. */
class CallersClient {
  readonly child: ChildProcess;
  readonly #replies: CallersReply[] = [];
  #waiter: (() => void) | undefined;

  constructor() {
    this.child = fork(join(HERE, 'webrtc-callers-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (reply: CallersReply) => {
      this.#replies.push(reply);
      this.#waiter?.();
    });
    this.child.on('exit', () => this.#waiter?.());
  }

  async ask<T extends CallersReply['type']>(command: CallersCommand, answer: T, timeoutMs: number): Promise<Extract<CallersReply, { type: T }>> {
    this.child.send(command);
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const index = this.#replies.findIndex((reply) => reply.type === answer);
      if (index >= 0) return this.#replies.splice(index, 1)[0] as Extract<CallersReply, { type: T }>;
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`a caller process exited (${this.child.exitCode ?? this.child.signalCode})`);
      if (performance.now() > deadline) throw new Error(`a caller process did not answer ${command.type} in ${timeoutMs / 1000} s`);
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
        setTimeout(resolve, 1000);
      });
      this.#waiter = undefined;
    }
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

interface RunPlan {
  readonly calls: number;
  readonly workers: number;
  readonly holdSeconds: number;
  readonly clients: number;
  readonly rate: number;
  readonly scenario: 'echo' | 'playback';
  readonly codec: CallerCodec;
}

interface RunResult {
  readonly calls: number;
  readonly workers: number;
  readonly scenario: string;
  readonly codec: CallerCodec;
  readonly up: number;
  readonly failed: number;
  /** Why calls failed, with how many each. */
  readonly failures: Readonly<Record<string, number>>;
  readonly setupMs: { readonly p50: number; readonly p99: number };
  readonly handshakeMs: { readonly p50: number; readonly p99: number };
  /** Calls keyed per second, from the first INVITE to the last keys. */
  readonly setupRate: number;
  /** In % of one core over the window. */
  readonly cpu: { readonly main: number; readonly workers: number | null; readonly server: number; readonly callers: number; readonly serverWaited: number };
  readonly rss: { readonly idleMiB: number; readonly serverMiB: number; readonly perCallKiB: number };
  readonly rtp: { readonly received: number; readonly sent: number; readonly lostPercent: number; readonly latePercent: number; readonly shortPercent: number };
  /** What the callers sent, and got back authentic (Echo: of what they sent; Playback: of 50/s a call). */
  readonly callers: {
    readonly sent: number;
    readonly backPercent: number;
    readonly refused: number;
    /** Calls that got back less than half of what they should have: whether a shortfall is a few calls' or every call's. */
    readonly shortCalls: number;
    readonly clock: ClockFigures;
  };
  readonly streamsInWorkers: number;
  readonly endedByServer: number;
  /** Left on the server 15 s after the last BYE (0 and 0 unless something leaks). */
  readonly leftAfter: { readonly channels: number; readonly workerStreams: number };
  readonly windowSeconds: number;
  readonly load: number;
  readonly clean: boolean;
  readonly problems: readonly string[];
  /** The server's last log lines about WebRTC, DTLS, ICE or workers when the run is not clean. */
  readonly serverNotes: readonly string[];
}

async function run(plan: RunPlan, track: (kill: () => void) => () => void): Promise<RunResult> {
  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-webrtc-'));
  const target = await startTarget(track, { maxCalls: plan.calls, uas: '127.0.0.1:9', workers: plan.workers, dataDir: join(work, 'server'), webrtc: { allow: plan.codec } });
  const clients: CallersClient[] = [];
  const untrack: Array<() => void> = [];
  try {
    // The idle figure a call's share is measured from, once start-up's garbage has had a moment to go.
    await sleep(1_000);
    const idleMiB = rssMiB(target.pid);
    const shares = Array.from({ length: plan.clients }, (_, i) => Math.floor(plan.calls / plan.clients) + (i < plan.calls % plan.clients ? 1 : 0)).filter((n) => n > 0);
    for (let i = 0; i < shares.length; i++) {
      const client = new CallersClient();
      clients.push(client);
      untrack.push(track(() => client.kill()));
    }
    const url = `${target.url.replace(/^http/, 'ws')}/ws`;
    const extension = EXTENSIONS[plan.scenario];
    const placeSeconds = plan.calls / plan.rate;
    const placed = await Promise.all(
      clients.map((client, i) => client.ask({ type: 'place', url, extension, user: 'webrtc', codec: plan.codec, count: shares[i]!, perSecond: (plan.rate * shares[i]!) / plan.calls }, 'placed', placeSeconds * 3000 + 120_000)),
    );
    const setupFigures = placed.flatMap((reply) => reply.figures);
    const keyed = setupFigures.filter((figures) => figures.keyedMs !== undefined);
    // From the first INVITE to the last keys, across the processes (wall clock: the one they share).
    const setupSeconds = keyed.length > 0 ? (Math.max(...keyed.map((figures) => figures.keyedAt!)) - Math.min(...setupFigures.map((figures) => figures.invitedAt ?? Infinity))) / 1000 : 0;
    const problems: string[] = [];
    const failures: Record<string, number> = {};
    for (const figures of setupFigures) if (figures.failure) failures[figures.failure] = (failures[figures.failure] ?? 0) + 1;
    if (keyed.length < plan.calls) problems.push(`${plan.calls - keyed.length} failed call(s): ${JSON.stringify(failures)}`);

    // Media flows from each call's keys; a second or two for the last ones' first packets (which may
    // beat the keys to a worker), then the window.
    await sleep(2_000);
    await Promise.all(clients.map((client) => client.ask({ type: 'reset' }, 'reset', 30_000)));
    const before = await scrape(target.url);
    const serverCpu = new CpuMeter(target.pid);
    const mainCpu = new ThreadCpuMeter(target.pid);
    const serverWait = new RunQueueMeter(target.pid);
    const callerCpu = clients.map((client) => new CpuMeter(client.child.pid!));
    const workerSamples: number[] = [];
    let streamsInWorkers = 0;
    let serverMiB = rssMiB(target.pid);
    const windowEnd = performance.now() + plan.holdSeconds * 1000;
    while (performance.now() < windowEnd) {
      await sleep(Math.min(1000, Math.max(0, windowEnd - performance.now())));
      serverMiB = Math.max(serverMiB, rssMiB(target.pid));
      const metrics = await scrape(target.url);
      const cores = metrics.sum('patchbay_media_worker_cpu_cores');
      if (cores !== undefined && cores >= 0) workerSamples.push(cores * 100);
      streamsInWorkers = Math.max(streamsInWorkers, metrics.sum('patchbay_media_worker_streams') ?? 0);
    }
    const cpu = {
      main: mainCpu.percent(),
      workers: workerSamples.length > 0 ? workerSamples.reduce((sum, value) => sum + value, 0) / workerSamples.length : null,
      server: serverCpu.percent(),
      callers: callerCpu.reduce((sum, meter) => sum + meter.percent(), 0),
      serverWaited: serverWait.percent(),
    };
    const after = await scrape(target.url);
    const reports = await Promise.all(clients.map((client) => client.ask({ type: 'report' }, 'report', 30_000)));
    const held = reports.flatMap((report) => report.figures);
    const clock = reports.reduce((sum, report) => ({ ticks: sum.ticks + report.clock.ticks, lateTicks: sum.lateTicks + report.clock.lateTicks, skippedFrames: sum.skippedFrames + report.clock.skippedFrames }), { ticks: 0, lateTicks: 0, skippedFrames: 0 });
    const endedByServer = held.filter((figures) => figures.endedByServer).length;
    if (endedByServer > 0) problems.push(`${endedByServer} call(s) ended by the server during the hold`);
    const windowSeconds = (after.at - before.at) / 1000;
    const rtp = rtpFigures(plan.scenario, before, after, keyed.length, windowSeconds);
    const measured = before.value(UP_SERIES) >= keyed.length && after.value(UP_SERIES) >= keyed.length && keyed.length > 0;
    if (!measured) problems.push(`channels Up ${before.value(UP_SERIES)} → ${after.value(UP_SERIES)} over the window, ${keyed.length} calls keyed`);
    if (rtp.lostPercent + rtp.latePercent >= CLEAN_PERCENT) problems.push(`${(rtp.lostPercent + rtp.latePercent).toFixed(3)} % lost or late`);
    if (rtp.shortPercent >= CLEAN_PERCENT) problems.push(`${rtp.shortPercent.toFixed(3)} % ${plan.scenario === 'playback' ? 'below 50 packets/s' : 'not sent back'}`);
    const sent = held.reduce((sum, figures) => sum + figures.sent, 0);
    const back = held.reduce((sum, figures) => sum + figures.back, 0);
    const refused = held.reduce((sum, figures) => sum + figures.refused, 0);
    const expectedBack = plan.scenario === 'playback' ? keyed.length * PACKETS_PER_SECOND * windowSeconds : sent;
    const expectedBackOf = (figures: CallerFigures): number => (plan.scenario === 'playback' ? PACKETS_PER_SECOND * windowSeconds : figures.sent);
    const shortCalls = held.filter((figures) => figures.keyedMs !== undefined && figures.back < expectedBackOf(figures) / 2).length;

    await Promise.all(clients.map((client) => client.ask({ type: 'hangup' }, 'hungup', 60_000).catch(() => client.kill())));
    const leftAfter = await leftOnServer(target);
    if (leftAfter.channels > 0 || leftAfter.workerStreams > 0) problems.push(`left on the server 15 s after the hang-up: ${leftAfter.channels} channel(s), ${leftAfter.workerStreams} worker stream(s)`);
    // What the server logged about it (warnings and errors reach the bench on its stderr).
    const notes = problems.length === 0 ? [] : target.log().split('\n').filter((entry) => /DTLS|WebRTC|ICE|consent|worker|cause|"level":50/i.test(entry)).slice(-4);
    return {
      calls: plan.calls,
      workers: plan.workers,
      scenario: plan.scenario,
      codec: plan.codec,
      up: keyed.length,
      failed: plan.calls - keyed.length,
      failures,
      setupMs: { p50: quantile(keyed.map((figures) => figures.keyedMs!), 0.5), p99: quantile(keyed.map((figures) => figures.keyedMs!), 0.99) },
      handshakeMs: { p50: quantile(keyed.map((figures) => figures.handshakeMs!), 0.5), p99: quantile(keyed.map((figures) => figures.handshakeMs!), 0.99) },
      // At most --rate: the callers pace their INVITEs.
      setupRate: keyed.length / Math.max(setupSeconds, 0.001),
      cpu,
      rss: { idleMiB, serverMiB, perCallKiB: keyed.length > 0 ? ((serverMiB - idleMiB) * 1024) / keyed.length : 0 },
      rtp,
      callers: { sent, backPercent: percent(back, expectedBack), refused, shortCalls, clock },
      streamsInWorkers,
      endedByServer,
      leftAfter,
      windowSeconds,
      load: os.loadavg()[0]!,
      clean: problems.length === 0,
      problems,
      serverNotes: notes,
    };
  } finally {
    for (const client of clients) client.kill();
    for (const forget of untrack) forget();
    await target.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The server's RTP figures between two scrapes with `calls` calls up throughout. */
function rtpFigures(scenario: 'echo' | 'playback', before: MetricsSnapshot, after: MetricsSnapshot, calls: number, seconds: number): RunResult['rtp'] {
  const delta = (series: string): number => after.value(series) - before.value(series);
  const received = delta('patchbay_sip_rtp_received_packets');
  const sent = delta('patchbay_sip_rtp_sent_packets');
  const lost = Math.max(0, delta('patchbay_sip_rtp_lost_packets'));
  const late = delta('patchbay_sip_jitterbuffer_late_packets_total');
  // Echo sends back what it receives; Playback 50 packets a second a call. A scrape at an instant may
  // split a packet between received and sent on any call: one a call is allowed.
  const expectedSent = scenario === 'playback' ? calls * PACKETS_PER_SECOND * seconds : received;
  return {
    received,
    sent,
    lostPercent: percent(lost, received + lost),
    latePercent: percent(late, received),
    shortPercent: Math.max(0, percent(expectedSent - sent - calls, expectedSent)),
  };
}

/** Channels and worker streams still on the server once the calls have hung up (waits up to 15 s for them to go). */
async function leftOnServer(target: Target): Promise<RunResult['leftAfter']> {
  let left = { channels: 0, workerStreams: 0 };
  for (let waited = 0; waited <= 15_000; waited += 500) {
    const metrics = await scrape(target.url);
    left = { channels: metrics.sum('patchbay_channels') ?? 0, workerStreams: metrics.sum('patchbay_media_worker_streams') ?? 0 };
    if (left.channels === 0 && left.workerStreams === 0) break;
    await sleep(500);
  }
  return left;
}

function line(result: RunResult): string {
  const f = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');
  return (
    `webrtc-calls ${result.scenario} ${result.codec}: ${String(result.calls).padStart(4)} calls, workers ${result.workers}: ${result.up} up, ${result.failed} failed; ` +
    `set-up p50 ${f(result.setupMs.p50, 0)} / p99 ${f(result.setupMs.p99, 0)} ms, DTLS p50 ${f(result.handshakeMs.p50, 0)} / p99 ${f(result.handshakeMs.p99, 0)} ms, ${f(result.setupRate)} calls/s; ` +
    `CPU main ${f(result.cpu.main)} %, workers ${result.cpu.workers === null ? '-' : f(result.cpu.workers)} %, server ${f(result.cpu.server)} % (waited ${f(result.cpu.serverWaited)} %), callers ${f(result.cpu.callers)} %; ` +
    `RSS ${f(result.rss.serverMiB, 0)} MiB (${f(result.rss.perCallKiB, 0)} KiB a call); RTP in ${result.rtp.received} out ${result.rtp.sent}, lost ${f(result.rtp.lostPercent, 3)} %, late ${f(result.rtp.latePercent, 3)} %, short ${f(result.rtp.shortPercent, 3)} %; ` +
    `back to callers ${f(result.callers.backPercent, 2)} % (${result.callers.shortCalls} calls below half, ${result.callers.refused} refused, caller clock late ${f(percent(result.callers.clock.lateTicks, result.callers.clock.ticks))} %, ${result.callers.clock.skippedFrames} frames skipped); ` +
    `${result.streamsInWorkers} streams in workers; load ${f(result.load, 2)}: ${result.clean ? 'clean' : result.problems.join('; ')}`
  );
}

async function main(): Promise<void> {
  const kills = new Set<() => void>();
  const track = (kill: () => void): (() => void) => {
    kills.add(kill);
    return () => kills.delete(kill);
  };
  process.on('SIGINT', () => {
    for (const kill of kills) kill();
    process.exit(130);
  });
  const scenario = values.scenario === 'playback' ? 'playback' : 'echo';
  const holdSeconds = clamp(Number(values.hold), 2, MAX_HOLD_SECONDS);
  const clients = clamp(Math.floor(Number(values.clients)), 1, MAX_CLIENTS);
  const rate = clamp(Number(values.rate), 1, 500);
  const codec: CallerCodec = values.codec === 'opus' ? 'opus' : 'ulaw';
  const results: RunResult[] = [];
  try {
    for (const calls of list(values.calls, MAX_CALLS).filter((n) => n > 0)) {
      for (const workers of list(values.workers, 16)) {
        let result: RunResult;
        try {
          result = await run({ calls, workers, holdSeconds, clients, rate, scenario, codec }, track);
        } catch (error) {
          // One step that could not be measured (the server stopped answering, a caller process died) ends no others.
          console.log(`webrtc-calls ${scenario} ${codec}: ${String(calls).padStart(4)} calls, workers ${workers}: not measured: ${error instanceof Error ? error.message : String(error)} (load ${os.loadavg()[0]!.toFixed(2)})`);
          continue;
        }
        results.push(result);
        console.log(line(result));
        for (const note of result.serverNotes) console.log(`  server: ${note.slice(0, 400)}`);
      }
    }
  } finally {
    for (const kill of kills) kill();
  }
  if (values.json) console.log(JSON.stringify(results));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
