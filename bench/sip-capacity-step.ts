// One step of bench/sip-capacity.ts: N concurrent SIPp calls into one scenario, held, measured.
// SIPp (UAC, 127.0.0.2) places the calls at --rate per second, each streaming a u-law WAV (50
// packets/s) from its answer until its BYE; for the B2BUA scenario a second SIPp (UAS, 127.0.0.3)
// answers the server's Dial() and echoes every RTP packet back. Once every channel is Up, the
// window starts: GET /metrics before and after it gives the server's RTP figures over the window
// (received, sent, lost by sequence gaps, dropped late by the jitter buffers, media-clock wake-ups
// late by more than a frame), /proc gives the CPU of the server and of each SIPp, and RSS.
import dgram from 'node:dgram';
import { join } from 'node:path';
import { CpuMeter, RunQueueMeter, rssMiB, ThreadCpuMeter } from './process-meter.ts';
import { legFigures, snapshotLegs, type LegFigures, type LegSnapshot } from './sip-capacity-legs.ts';
import { scrapeMetrics, type MetricsSnapshot } from './prometheus-text.ts';
import { memorySplit, type MemorySplit } from './memory-split.ts';
import { startSipp, type SippProcess, type SippResult } from './sipp-run.ts';
import { EXTENSIONS } from './sip-capacity-target.ts';
import { startConferenceApp, type ConferenceApp } from './sip-capacity-conference.ts';

export type ScenarioName = keyof typeof EXTENSIONS;

/** Packets per second of one G.711 stream at 20 ms. */
const PACKETS_PER_SECOND = 50;
/** Local addresses and media ports of the two SIPp instances: apart from the server's RTP range. */
export const CALLER = { address: '127.0.0.2', mediaPort: 40000 } as const;
export const ANSWERER = { address: '127.0.0.3', mediaPort: 42000 } as const;

/**
 * The first even port from `from` whose block of four (SIPp's audio RTP and RTCP, and the video pair
 * it binds too) is free on `address`: another bench on the machine (another engineer's) may hold the
 * default one, and SIPp then fails every call at once.
 */
export async function freeMediaPort(address: string, from: number): Promise<number> {
  const bindable = (port: number): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = dgram.createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, address, () => socket.close(() => resolve(true)));
    });
  for (let base = from; base + 3 < 65536; base += 4) {
    let free = true;
    for (let port = base; port < base + 4 && free; port++) free = await bindable(port);
    if (free) return base;
  }
  throw new Error(`no free media port on ${address} from ${from}`);
}

export interface StepPlan {
  readonly scenario: ScenarioName;
  readonly calls: number;
  readonly holdSeconds: number;
  /** Calls SIPp places per second. */
  readonly rate: number;
  readonly work: string;
  /** The server's ARI base URL, SIP `host:port` and pid. */
  readonly url: string;
  readonly sipTarget: string;
  readonly serverPid: number;
  /** The UAS SIPp's SIP port (the server's dialplan dials it). */
  readonly answererPort: number;
  /** Server RSS before any call (MiB): what a call's share is measured from. */
  readonly idleRssMiB: number;
  /** Registers a kill for clean-up on Ctrl-C or error; returns its unregistration. */
  readonly track: (kill: () => void) => () => void;
}

export interface StepResult {
  readonly scenario: ScenarioName;
  readonly calls: number;
  /** Channels Up when the window started (2 per call for the B2BUA). */
  readonly upChannels: number;
  readonly expectedChannels: number;
  readonly setupSeconds: number;
  /** Calls set up per second, from SIPp's first INVITE to the last channel Up. */
  readonly setupRate: number;
  readonly failed: number;
  /**
   * The window had every channel Up from start to end and lasted 2 s or more; otherwise the RTP,
   * CPU and RSS figures mean nothing (calls came and went in it).
   */
  readonly measured: boolean;
  readonly windowSeconds: number;
  readonly rtp: {
    readonly received: number;
    readonly sent: number;
    /** Shares in %, over the window. */
    readonly lostPercent: number;
    readonly latePercent: number;
    /**
     * Echo and B2BUA: received but never sent back (the caller will not hear them: lost on the way
     * back); Playback: below 50 packets/s a call. Beyond what the reading itself may be off by: a
     * scrape at an instant may split a packet between received and sent on any channel (one packet
     * a channel), and Playback's count is against the bench's clock (the scrapes' own duration).
     */
    readonly shortPercent: number;
    readonly jitterMaxMs: number;
    /** Media-clock wake-ups more than one frame (20 ms) late, in % of wake-ups. */
    readonly clockLatePercent: number;
    /** Frames the jitter buffers made up for missing audio, in % of the packets received: gaps the server filled. */
    readonly concealedPercent: number;
    /** Media-clock ticks dropped after stalls (each one 20 ms of audio lost on every call). */
    readonly clockSkippedTicks: number;
    readonly eventLoopLagP99Ms: number;
  };
  readonly cpu: {
    readonly server: number;
    readonly perHundredCalls: number;
    readonly caller: number;
    readonly answerer: number | null;
    /** How long the server's main thread was runnable but waited for a core, in % of the window: the machine's load, not ours. */
    readonly serverWaited: number;
    /** The server's main thread alone, and its media workers' threads together (their own reports, averaged over the window), in % of one core. */
    readonly main: number;
    readonly workers: number | null;
  };
  /** B2BUA: each leg's figures over the window (the callers' legs, and the legs Dial() made), from ARI's rtp_statistics. */
  readonly legs?: Readonly<Record<string, LegFigures>>;
  /** Streams the media workers relayed to another of theirs at the window's end (0 with the relay off or without workers). */
  readonly relayedStreams: number;
  /** Conference: streams the media workers mixed at the window's end, and the bridges the bench made. */
  readonly mixedStreams: number;
  readonly bridges: number;
  readonly rss: { readonly serverMiB: number; readonly peakMiB: number; readonly perCallKiB: number };
  /** The server's memory split at the window's end (bench/memory-split.ts). */
  readonly memory: MemorySplit;
  /**
   * What reached the server from the SIPp instances over the window, in % of 50 packets/s on each
   * channel they feed: below 100 when SIPp (or the kernel) falls behind. SIPp 3.6 counts RTP only
   * on its interactive screen, so this is the nearest to SIPp's own figure.
   */
  readonly sippDeliveredPercent: number;
  readonly clean: boolean;
  /** Why the step is not clean (empty when it is). */
  readonly problems: readonly string[];
}

/** The largest share of lost and late packets (and of packets not sent) a clean step may have, in %. */
export const CLEAN_PERCENT = 0.1;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const percent = (part: number, whole: number): number => (whole > 0 ? (part / whole) * 100 : 0);

const UP_SERIES = 'patchbay_channels{technology="PJSIP",state="Up"}';
/** The B2BUA's legs by channel name: the callers' (endpoint load) and the ones Dial() made (endpoint uas). */
const LEG_PREFIXES = { 'PJSIP/load-': 'caller', 'PJSIP/uas-': 'callee' } as const;
const CLOCK = 'patchbay_media_clock_lateness_seconds_bucket';

/**
 * CPU of `pid` from now, in % of one core; NaN once the process is gone (a SIPp that gave up early
 * must not take the step's other figures with it).
 */
function cpuFromNow(pid: number): { percent(): number } {
  try {
    const meter = new CpuMeter(pid);
    return {
      percent: () => {
        try {
          return meter.percent();
        } catch {
          return NaN;
        }
      },
    };
  } catch {
    return { percent: () => NaN };
  }
}

async function upChannels(url: string): Promise<number> {
  return (await scrapeMetrics(url)).value(UP_SERIES);
}

export async function runStep(plan: StepPlan): Promise<StepResult> {
  const { scenario, calls, holdSeconds, rate } = plan;
  const expectedChannels = scenario === 'b2bua' ? 2 * calls : calls;
  const placeSeconds = calls / rate;
  // Each call lasts this long after its answer: long enough that every call is up together for the hold.
  const callMs = Math.round((placeSeconds + holdSeconds + 2) * 1000);
  const limitMs = callMs + Math.round(placeSeconds * 2000) + 60_000;
  const problems: string[] = [];
  const started: SippProcess[] = [];
  const untrack: Array<() => void> = [];
  const launch = async (starting: Promise<SippProcess>): Promise<SippProcess> => {
    const sipp = await starting;
    started.push(sipp);
    untrack.push(plan.track(() => sipp.kill()));
    return sipp;
  };
  let conference: ConferenceApp | undefined;
  try {
    // The application is listening before the first call reaches Stasis(conf).
    if (scenario === 'conference') conference = await startConferenceApp(plan.url);
    const answerer =
      scenario === 'b2bua'
        ? await launch(startSipp({
            work: plan.work,
            scenario: join(plan.work, 'answer-echo.xml'),
            args: ['-rtp_echo', '-m', String(calls)],
            limitMs: limitMs + 5000,
            address: ANSWERER.address,
            port: plan.answererPort,
            mediaPort: await freeMediaPort(ANSWERER.address, ANSWERER.mediaPort),
          }))
        : undefined;
    const callerStarted = performance.now();
    const caller = await launch(startSipp({
      work: plan.work,
      target: plan.sipTarget,
      scenario: join(plan.work, 'call-hangup.xml'),
      args: ['-set', 'caller', 'load', '-s', EXTENSIONS[scenario], '-d', String(callMs), '-r', String(rate), '-m', String(calls), '-l', String(calls)],
      limitMs,
      address: CALLER.address,
      mediaPort: await freeMediaPort(CALLER.address, CALLER.mediaPort),
    }));
    let callerDone = false;
    void caller.done.then(() => (callerDone = true));

    // Every channel Up, or the time for it is over (twice the time the rate needs, and 15 s more).
    const upDeadline = callerStarted + placeSeconds * 2000 + 15_000;
    let up = 0;
    while (!callerDone && performance.now() < upDeadline && (up = await upChannels(plan.url)) < expectedChannels) await sleep(250);
    const allUp = performance.now();
    const setupSeconds = (allUp - callerStarted) / 1000;
    if (up < expectedChannels) problems.push(`${up}/${expectedChannels} channels Up after ${setupSeconds.toFixed(1)} s`);

    // The window: from a second after the last answer to a second before the first call's BYE.
    await sleep(1000);
    const windowEnd = callerStarted + callMs - 1000;
    const legsBefore: LegSnapshot | undefined = scenario === 'b2bua' ? await snapshotLegs(plan.url, LEG_PREFIXES) : undefined;
    const before = await scrapeMetrics(plan.url);
    const serverCpu = new CpuMeter(plan.serverPid);
    const mainCpu = new ThreadCpuMeter(plan.serverPid);
    const workerCpu: number[] = [];
    const serverWait = new RunQueueMeter(plan.serverPid);
    const callerCpu = cpuFromNow(caller.pid);
    const answererCpu = answerer ? cpuFromNow(answerer.pid) : undefined;
    let peakMiB = rssMiB(plan.serverPid);
    while (!callerDone && performance.now() < windowEnd - 1000) {
      await sleep(Math.min(1000, windowEnd - performance.now()));
      peakMiB = Math.max(peakMiB, rssMiB(plan.serverPid));
      // Each worker reports its thread's CPU of the last second: sampled once a second, averaged.
      const cores = (await scrapeMetrics(plan.url)).sum('patchbay_media_worker_cpu_cores');
      if (cores !== undefined && cores >= 0) workerCpu.push(cores * 100);
    }
    const cpu = {
      server: serverCpu.percent(),
      main: mainCpu.percent(),
      workers: workerCpu.length > 0 ? workerCpu.reduce((sum, value) => sum + value, 0) / workerCpu.length : null,
      caller: callerCpu.percent(),
      answerer: answererCpu?.percent() ?? null,
      serverWaited: serverWait.percent(),
    };
    const after = await scrapeMetrics(plan.url);
    const relayedStreams = after.sum('patchbay_media_worker_relayed_streams') ?? 0;
    const mixedStreams = after.sum('patchbay_media_worker_mixed_streams') ?? 0;
    if (conference && conference.failures > 0) problems.push(`${conference.failures} bridge request(s) failed`);
    const legs = legsBefore ? legFigures(legsBefore, await snapshotLegs(plan.url, LEG_PREFIXES)) : undefined;
    const serverMiB = rssMiB(plan.serverPid);
    peakMiB = Math.max(peakMiB, serverMiB);
    if (after.value(UP_SERIES) < expectedChannels) problems.push(`${after.value(UP_SERIES)}/${expectedChannels} channels still Up at the end of the window`);

    const callerResult = await caller.done;
    if (answerer) {
      // It waits for -m calls: after failed ones it would wait until its limit. The BYEs have had time.
      await Promise.race([answerer.done, sleep(10_000)]);
      answerer.kill();
      await answerer.done;
    }
    const failed = calls - callerResult.succeeded;
    if (failed > 0) problems.push(`${failed} failed call(s)${describeSipp(callerResult)}`);

    const rtp = rtpFigures(scenario, before, after, up);
    const measured = before.value(UP_SERIES) >= expectedChannels && after.value(UP_SERIES) >= expectedChannels && after.at - before.at >= 2000;
    if (measured && rtp.lostPercent + rtp.latePercent >= CLEAN_PERCENT) problems.push(`${(rtp.lostPercent + rtp.latePercent).toFixed(3)} % lost or late`);
    if (measured && rtp.shortPercent >= CLEAN_PERCENT) problems.push(`${rtp.shortPercent.toFixed(3)} % ${scenario === 'playback' ? 'below 50 packets/s' : 'not sent back'}`);

    return {
      scenario,
      calls,
      upChannels: up,
      expectedChannels,
      setupSeconds,
      setupRate: up >= expectedChannels ? calls / setupSeconds : 0,
      failed,
      measured,
      windowSeconds: (after.at - before.at) / 1000,
      rtp,
      cpu: { ...cpu, perHundredCalls: (cpu.server / calls) * 100 },
      ...(legs ? { legs } : {}),
      relayedStreams,
      mixedStreams,
      bridges: conference?.bridges ?? 0,
      rss: { serverMiB, peakMiB, perCallKiB: ((serverMiB - plan.idleRssMiB) * 1024) / calls },
      memory: memorySplit(after),
      sippDeliveredPercent: percent(rtp.received, up * PACKETS_PER_SECOND * ((after.at - before.at) / 1000)),
      clean: problems.length === 0,
      problems,
    };
  } finally {
    await conference?.stop();
    for (const sipp of started) sipp.kill();
    for (const forget of untrack) forget();
  }
}

/** The server's RTP figures over the window between two scrapes, for `upChannels` live channels. */
function rtpFigures(scenario: ScenarioName, before: MetricsSnapshot, after: MetricsSnapshot, upChannels: number): StepResult['rtp'] {
  const delta = (series: string): number => after.value(series) - before.value(series);
  const received = delta('patchbay_sip_rtp_received_packets');
  const sent = delta('patchbay_sip_rtp_sent_packets');
  const lost = Math.max(0, delta('patchbay_sip_rtp_lost_packets'));
  const late = delta('patchbay_sip_jitterbuffer_late_packets_total');
  const seconds = (after.at - before.at) / 1000;
  // Echo and B2BUA send back what they receive; Playback sends 50 packets a second on each call; Record sends nothing.
  const expectedSent = scenario === 'playback' ? upChannels * PACKETS_PER_SECOND * seconds : scenario === 'record' ? 0 : received;
  const scrapeSeconds = scenario === 'playback' ? (before.took + after.took) / 2000 : 0;
  const allowance = upChannels * (1 + PACKETS_PER_SECOND * scrapeSeconds);
  const wakeUps = delta(`${CLOCK}{le="+Inf"}`);
  const onTime = delta(`${CLOCK}{le="0.02"}`);
  return {
    received,
    sent,
    lostPercent: percent(lost, received + lost),
    latePercent: percent(late, received),
    shortPercent: Math.max(0, percent(expectedSent - sent - allowance, expectedSent)),
    jitterMaxMs: after.value('patchbay_sip_rtp_jitter_max_seconds') * 1000,
    clockLatePercent: percent(wakeUps - onTime, wakeUps),
    clockSkippedTicks: delta('patchbay_media_clock_skipped_ticks_total'),
    concealedPercent: percent(delta('patchbay_sip_jitterbuffer_concealed_frames_total'), received),
    eventLoopLagP99Ms: after.value('patchbay_nodejs_eventloop_lag_p99_seconds') * 1000,
  };
}

/** What SIPp said went wrong, in a few words. */
function describeSipp(result: SippResult): string {
  // Not the lines of its statistics screen (a table with the same words in its headings).
  const lines = result.output.split('\n').filter((line) => /error|unexpected|failed|timeout|abort/i.test(line) && !/\||Retrans|open sockets/.test(line));
  const why = lines.slice(-2).join(' / ').trim();
  return `${result.code !== 0 ? ` (SIPp exit ${result.code})` : ''}${why ? `: ${why.slice(0, 240)}` : ''}`;
}
