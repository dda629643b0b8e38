// SIP capacity (issue 25): how many concurrent G.711 calls with RTP both ways a real Patchbay carries
// cleanly, driven by SIPp, for three scenarios:
//   echo      SIPp → Answer() + Echo()
//   playback  SIPp → Answer() + Playback(tt-monkeys) over and over
//   b2bua     SIPp → Dial(PJSIP/uas/…) → a second SIPp that answers and echoes every RTP packet
//   conference SIPp → Answer() + Stasis(conf): the bench's ARI application puts each three calls in
//             a mixing bridge of their own (N/3 bridges of three; the step's N is calls)
//   record    SIPp → Answer() + Record(…wav) of each call until it hangs up (nothing sent back)
// For each scenario the number of calls ramps through --steps; each step holds all its calls for
// --hold seconds (bench/sip-capacity-step.ts says what is measured) and prints failed calls, lost,
// late and not-sent-back packets (the server's RTP statistics from GET /metrics; SIPp 3.6 keeps RTP
// counts only on its interactive screen, so its side is what reached the server from it), CPU of
// the server per 100 calls and of each SIPp, RSS per call, and the call set-up rate reached. A step that is not clean (a failed call, ≥ 0.1 % lost + late, ≥ 0.1 %
// not echoed) ends its scenario's ramp. At the end: per scenario, the largest clean step.
// The server runs in a child process (bench/sip-capacity-target.ts) with its open-file limit raised
// to the hard limit, RTP ports 10000–29999, no per-endpoint call limit and a channel limit made for
// the largest step; SIPp's media ports are 40000 and up on 127.0.0.2 and 127.0.0.3.
// --workers N passes media.workers (issue 25; a build without the setting says so and runs without).
// --relay off sets media.worker_relay false: a B2BUA call's frames all cross the main thread, as
// before the two-party relay (the figures to compare with). The B2BUA step also prints each leg's
// loss (ARI rtp_statistics), the CPU of the server's main thread and of its media workers apart,
// and how many streams the workers relayed. --worker-playback off sets media.worker_playback false:
// every playback frame is made on the main thread, as before the playback fast path.
// --worker-mix off sets media.worker_mix false: every conference bridge mixes on the main thread, as
// before the worker mix; the conference step prints the streams the workers mixed.
// --worker-recording off sets media.worker_recording false: every recording (the record scenario's)
// is written on the main thread, as before the recording fast path.
// Bounded: every step ends within its calls' length plus a minute; Ctrl-C and errors kill every
// process the bench started. --json prints the results as one JSON line at the end.
// Usage: npm run bench:sip-capacity [-- --steps 100,200,500 --hold 20 --scenarios echo,playback,b2bua,conference --rate 100 --workers 2 --relay off --worker-playback off --worker-mix off --worker-recording off --server dist]
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, rssMiB } from './process-meter.ts';
import { scrapeMetrics } from './prometheus-text.ts';
import { describeMemorySplit, memorySplit, type MemorySplit } from './memory-split.ts';
import { freeUdpPort } from './sipp-run.ts';
import { ANSWERER, CLEAN_PERCENT, runStep, type ScenarioName, type StepResult } from './sip-capacity-step.ts';
import { EXTENSIONS, SERVER_RTP_PORTS } from './sip-capacity-target.ts';
import { startTarget } from './sip-capacity-server.ts';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '100,200,500,1000,1500,2000' },
    hold: { type: 'string', default: '60' },
    scenarios: { type: 'string', default: 'echo,playback,b2bua' },
    rate: { type: 'string', default: '100' },
    workers: { type: 'string' },
    relay: { type: 'string', default: 'on' },
    'worker-playback': { type: 'string', default: 'on' },
    'worker-mix': { type: 'string', default: 'on' },
    'worker-recording': { type: 'string', default: 'on' },
    json: { type: 'boolean', default: false },
    // A compiled server (npm run build's dist/): what production runs. Without it the server runs
    // from the sources through tsx, whose compiler costs memory a production server does not hold.
    server: { type: 'string' },
  },
});
if (values.server !== undefined) process.env.PATCHBAY_BENCH_ROOT = resolvePath(values.server);

const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const MAX_CALLS = 5000;
const HERE = fileURLToPath(new URL('.', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything the bench started, killed on Ctrl-C, on error and at the end. */
const running = new Set<() => void>();
const track = (kill: () => void): (() => void) => {
  running.add(kill);
  return () => running.delete(kill);
};
function killEverything(): void {
  // The newest first: processes go before the directory they write in.
  for (const kill of [...running].reverse()) kill();
  running.clear();
}

function whyNot(): string | undefined {
  if (spawnSync('sipp', ['-v']).error) return 'sipp is not installed (Debian package sip-tester)';
  if (spawnSync('sox', ['--version']).error) return 'sox is not installed';
  return undefined;
}

/** Waits (at most `timeoutMs`) until the server has no SIP call left: the next step starts from none. */
async function waitIdle(url: string, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let calls = Infinity;
  while (performance.now() < deadline && (calls = (await scrapeMetrics(url)).value('patchbay_sip_calls')) > 0) await sleep(500);
  return calls;
}

const fixed = (value: number, digits: number): string => value.toFixed(digits);
const maybe = (value: number | null, digits: number, unit = ''): string => (value === null ? '-' : `${value.toFixed(digits)}${unit}`);

function printStep(step: StepResult, idleMemory: MemorySplit): void {
  const { rtp, cpu, rss } = step;
  console.log(`  ${step.scenario} ${step.calls} calls: ${step.upChannels}/${step.expectedChannels} channels Up in ${fixed(step.setupSeconds, 1)} s (${fixed(step.setupRate, 1)} calls/s), failed ${step.failed} — ${step.clean ? 'clean' : `NOT CLEAN: ${step.problems.join('; ')}`}`);
  if (!step.measured) {
    console.log(`    not measured: the calls were not all Up together for 2 s (window ${fixed(step.windowSeconds, 1)} s)`);
    return;
  }
  console.log(`    server RTP over ${fixed(step.windowSeconds, 1)} s: ${rtp.received} in, ${rtp.sent} out; lost ${fixed(rtp.lostPercent, 3)} %, late ${fixed(rtp.latePercent, 3)} %, ${step.scenario === 'playback' ? 'below 50/s' : 'not sent back'} ${fixed(rtp.shortPercent, 3)} % (beyond the reading's ±1 packet a channel); concealed ${fixed(rtp.concealedPercent, 3)} %; max jitter ${fixed(rtp.jitterMaxMs, 1)} ms; clock wake-ups > 20 ms late ${fixed(rtp.clockLatePercent, 2)} %, ticks dropped ${rtp.clockSkippedTicks}; event-loop lag p99 ${fixed(rtp.eventLoopLagP99Ms, 1)} ms`);
  console.log(`    CPU (% of one core): server ${fixed(cpu.server, 1)} (${fixed(cpu.perHundredCalls, 1)} per 100 calls; main thread ${fixed(cpu.main, 1)}, media workers ${maybe(cpu.workers, 1)}), SIPp caller ${fixed(cpu.caller, 1)}, SIPp answerer ${maybe(cpu.answerer, 1)}; the server's main thread waited for a core ${fixed(cpu.serverWaited, 1)} % of the time; server RSS ${fixed(rss.serverMiB, 0)} MiB (peak ${fixed(rss.peakMiB, 0)}, ${fixed(rss.perCallKiB, 0)} KiB per call)`);
  console.log(`    memory: ${describeMemorySplit(step.memory, idleMemory, step.calls)}`);
  if (step.legs) {
    const legs = Object.entries(step.legs).map(([leg, figures]) => `${leg} ${figures.legs} legs: ${figures.received} in, ${figures.sent} out, lost ${fixed(figures.lostPercent, 3)} %`);
    console.log(`    per leg: ${legs.join('; ')}; streams relayed in the workers: ${step.relayedStreams}`);
  }
  if (step.scenario === 'conference') console.log(`    bridges of three made: ${step.bridges}; streams mixed in the workers: ${step.mixedStreams}`);
  console.log(`    RTP reaching the server from SIPp: ${fixed(step.sippDeliveredPercent, 2)} % of 50 packets/s on each channel it feeds${step.scenario === 'b2bua' ? ' (the answerer echoes what the server sent it: its shortfall counts here too)' : ''}`);
}

interface ScenarioSummary {
  readonly scenario: ScenarioName;
  /** The largest clean step, 0 when none was. */
  readonly largestClean: number;
  /** The set-up rate of that step. */
  readonly setupRate: number;
  readonly steps: readonly StepResult[];
}

async function runBench(): Promise<void> {
  const missing = whyNot();
  if (missing) {
    console.log(`bench:sip-capacity: ${missing}; nothing measured`);
    if (values.json) console.log(JSON.stringify({ skipped: missing }));
    return;
  }
  const steps = values.steps.split(',').map((step) => clamp(step, 1, MAX_CALLS));
  const hold = clamp(values.hold, 2, 600);
  const rate = clamp(values.rate, 1, 1000);
  const workers = values.workers === undefined ? null : clamp(values.workers, 0, 256);
  if (values.relay !== 'on' && values.relay !== 'off') throw new Error(`--relay is on or off, not '${values.relay}'`);
  const relay = values.relay === 'on';
  if (values['worker-playback'] !== 'on' && values['worker-playback'] !== 'off') throw new Error(`--worker-playback is on or off, not '${values['worker-playback']}'`);
  const workerPlayback = values['worker-playback'] === 'on';
  if (values['worker-mix'] !== 'on' && values['worker-mix'] !== 'off') throw new Error(`--worker-mix is on or off, not '${values['worker-mix']}'`);
  const workerMix = values['worker-mix'] === 'on';
  if (values['worker-recording'] !== 'on' && values['worker-recording'] !== 'off') throw new Error(`--worker-recording is on or off, not '${values['worker-recording']}'`);
  const workerRecording = values['worker-recording'] === 'on';
  const scenarios = values.scenarios.split(',').map((name) => name.trim()).filter((name): name is ScenarioName => {
    if (name in EXTENSIONS) return true;
    throw new Error(`unknown scenario '${name}' (echo, playback, b2bua, conference, record)`);
  });

  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-capacity-'));
  const forgetWork = track(() => rmSync(work, { recursive: true, force: true }));
  // The callers' audio: 12 s of speech from Asterisk's core sounds when present (a 1 kHz tone otherwise), u-law, looped.
  const speech = '/usr/share/asterisk/sounds/en/tt-monkeys.wav';
  const source = spawnSync('sox', [speech, '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'trim', '0', '12']);
  if (source.error || source.status !== 0) spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '12', 'sine', '1000', 'vol', '0.5']);
  copyFileSync(join(HERE, '../test/sip/scenarios/call-hangup.xml'), join(work, 'call-hangup.xml'));
  copyFileSync(join(HERE, 'sipp/answer-echo.xml'), join(work, 'answer-echo.xml'));

  const answererPort = await freeUdpPort(ANSWERER.address);
  const target = await startTarget(track, { maxCalls: Math.max(...steps), uas: `${ANSWERER.address}:${answererPort}`, workers, relay, workerPlayback, workerMix, workerRecording, dataDir: join(work, 'server') });
  const summaries: ScenarioSummary[] = [];
  try {
    // The workers report their heaps once a second: wait for a report before reading the idle split.
    await sleep(1500);
    const idleRssMiB = rssMiB(target.pid);
    const idleMemory = memorySplit(await scrapeMetrics(target.url));
    const load = os.loadavg().map((value) => value.toFixed(2)).join(' ');
    console.log(`bench:sip-capacity — Patchbay pid ${target.pid}, SIP udp 127.0.0.1:${target.sipPort}, RTP ${SERVER_RTP_PORTS.start}–${SERVER_RTP_PORTS.end}; media.workers ${workers === null ? 'not set' : `${workers} (${target.workers})`}, worker relay ${relay ? 'on' : 'off'}, worker playback ${workerPlayback ? 'on' : 'off'}, worker mix ${workerMix ? 'on' : 'off'}, worker recording ${workerRecording ? 'on' : 'off'}`);
    console.log(`steps ${steps.join(', ')} calls held ${hold} s, placed at ${rate}/s; scenarios ${scenarios.join(', ')}; clean: no failed call, < ${CLEAN_PERCENT} % lost + late, < ${CLEAN_PERCENT} % not sent`);
    console.log(`machine: ${os.cpus().length} cores, load average ${load} (shared: figures are noisy); server RSS idle ${idleRssMiB.toFixed(0)} MiB; ${describeMemorySplit(idleMemory, idleMemory, 1)}`);
    for (const scenario of scenarios) {
      console.log(`\n${scenario} (extension ${EXTENSIONS[scenario]}):`);
      const results: StepResult[] = [];
      for (const calls of steps) {
        const step = await runStep({ scenario, calls, holdSeconds: hold, rate, work, url: target.url, sipTarget: `127.0.0.1:${target.sipPort}`, serverPid: target.pid, answererPort, idleRssMiB, track });
        results.push(step);
        printStep(step, idleMemory);
        const left = await waitIdle(target.url, 60_000);
        if (left > 0) console.log(`    ${left} SIP calls still live a minute after the step`);
        // Failed calls end the ramp (a bigger step only fails more, and slower); lost or late
        // packets do not: on a shared machine they may be another process's doing.
        if (step.failed > 0 || step.upChannels < step.expectedChannels) break;
      }
      const clean = results.filter((step) => step.clean);
      const best = clean[clean.length - 1];
      summaries.push({ scenario, largestClean: best?.calls ?? 0, setupRate: best?.setupRate ?? 0, steps: results });
    }
  } finally {
    const cpu = target.child.exitCode === null ? cpuSeconds(target.pid) : NaN;
    await target.stop();
    killEverything();
    forgetWork();
    rmSync(work, { recursive: true, force: true });
    const warnings = target.log().split('\n').filter(Boolean);
    if (warnings.length) console.log(`\nserver log (warn and above), last lines:\n  ${warnings.slice(-5).map((line) => line.slice(0, 300)).join('\n  ')}`);
    if (Number.isFinite(cpu)) console.log(`\nserver CPU over the whole bench: ${cpu.toFixed(1)} s`);
  }

  console.log(`\nlargest N with 0 failed calls and < ${CLEAN_PERCENT} % lost/late/not sent (load average now ${os.loadavg().map((value) => value.toFixed(2)).join(' ')}):`);
  for (const summary of summaries) {
    const last = summary.steps[summary.steps.length - 1];
    const unclean = summary.steps.filter((step) => !step.clean).map((step) => `${step.calls}: ${step.problems.join('; ')}`);
    const stoppedBy = last && last.failed > 0 ? `; stopped at ${last.calls}` : '';
    const notes = unclean.length ? `; not clean at ${unclean.join(' | ')}` : '; every step was clean';
    console.log(`  ${summary.scenario.padEnd(9)} ${summary.largestClean > 0 ? `${summary.largestClean} calls (set up at ${summary.setupRate.toFixed(1)} calls/s)` : 'none'}${stoppedBy}${notes}`);
  }
  if (values.json) console.log(JSON.stringify({ workers, relay, workerPlayback, workerMix, workerRecording, hold, rate, summaries }));
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.log(`\nbench:sip-capacity: ${signal}, stopping every process it started`);
    killEverything();
    process.exit(130);
  });
}

try {
  await runBench();
} catch (error) {
  killEverything();
  console.error(`bench:sip-capacity failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
