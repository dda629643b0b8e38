// SIP call capacity of Patchbay beside another SIP + ARI server on this machine (issue 25: an
// Asterisk 22 built outside the project), alternating the two at every step and measuring both
// the same way, through what both have: SIPp's call counts, ARI's channel list and each channel's
// GET /ari/channels/{id}/rtp_statistics, and the server process's CPU and RSS from /proc. (Patchbay's
// own bench, bench/sip-capacity.ts, reads its /metrics, which the other server has not.)
//   echo      SIPp → Answer() + Echo() (extension 200 of the `capacity` context)
//   playback  SIPp → Answer() + Playback(tt-monkeys) over and over (extension 300)
//   b2bua     SIPp → Dial() of endpoint `uas` to a second SIPp (127.0.0.3) that answers and echoes (extension 400)
// The other server needs a `capacity` context with those extensions, an endpoint `load` that takes
// SIPp's calls (From: load) with ulaw, and its ARI user (--external-auth). For b2bua its extension
// 400 dials `PJSIP/uas/sip:echo@127.0.0.3:${UAS_PORT}`: the bench sets the global variable UAS_PORT
// through ARI (POST /ari/asterisk/variable) to the answering SIPp's port. Patchbay is
// bench/sip-capacity-target.ts in a child process, as in bench/sip-capacity.ts.
// A step is clean with no failed call, every call's channel Up, < 0.1 % of the received packets lost
// (sequence gaps, the server's count) and, for echo, < 0.1 % of them not sent back; for playback,
// < 0.1 % below 50 packets/s a call. RTP counts are read channel by channel at the window's ends, on
// at most --sample calls spread over them (a loaded server answers 500 readings slowly, and the
// reading must not eat the hold), so each may be off by a packet or so a channel: that much is allowed for.
// Usage: npx tsx bench/sip-side-by-side.ts --external-sip 127.0.0.77:5060 --external http://127.0.0.1:18088
//        --external-pid PID [--external-auth asterisk:asterisk --external-name asterisk]
//        [--steps 200,500 --hold 20 --rate 50 --scenarios echo,playback,b2bua --workers N --only patchbay|external --sample 100 --server dist]
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { externalOptions } from './external-target.ts';
import { CpuMeter, rssMiB } from './process-meter.ts';
import { legFigures, snapshotLegs } from './sip-capacity-legs.ts';
import { startTarget } from './sip-capacity-server.ts';
import { ANSWERER, CALLER, CLEAN_PERCENT, freeMediaPort } from './sip-capacity-step.ts';
import { EXTENSIONS } from './sip-capacity-target.ts';
import { freeUdpPort, startSipp, type SippProcess } from './sipp-run.ts';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '200,500' },
    hold: { type: 'string', default: '20' },
    rate: { type: 'string', default: '50' },
    scenarios: { type: 'string', default: 'echo,playback' },
    workers: { type: 'string' },
    only: { type: 'string' },
    sample: { type: 'string', default: '100' },
    'external-sip': { type: 'string' },
    external: { type: 'string' },
    'external-pid': { type: 'string' },
    'external-auth': { type: 'string' },
    'external-name': { type: 'string' },
    // A compiled server (npm run build's dist/): what production runs. Without it the server runs
    // from the sources through tsx, whose compiler costs memory a production server does not hold.
    server: { type: 'string' },
  },
});
if (values.server !== undefined) process.env.PATCHBAY_BENCH_ROOT = resolvePath(values.server);

const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const HERE = fileURLToPath(new URL('.', import.meta.url));
const PACKETS_PER_SECOND = 50;
const BENCH_USER = 'asterisk:asterisk';
type Scenario = 'echo' | 'playback' | 'b2bua';
const CALLER_LEG = { 'PJSIP/load-': 'caller' } as const;

/** A server the steps call: where its SIP and ARI are, and its process. */
interface Server {
  readonly name: string;
  readonly sip: string;
  readonly url: string;
  readonly user: string;
  readonly pid: number;
}

interface StepFigures {
  readonly up: number;
  readonly setupSeconds: number;
  readonly failed: number;
  readonly windowSeconds: number;
  /** Calls whose RTP was read. */
  readonly legs: number;
  readonly received: number;
  readonly sent: number;
  readonly lostPercent: number;
  /** Echo and b2bua: received but not sent back; playback: below 50 packets/s a call (in %, beyond the reading's allowance). */
  readonly shortPercent: number;
  readonly cpuPercent: number;
  readonly callerCpuPercent: number;
  readonly rssMiB: number;
  readonly load: string;
  readonly problems: string[];
}

/** Channels of SIPp's calls (endpoint `load`) that are Up now, from ARI. */
async function upCalls(server: Server): Promise<number> {
  const response = await fetch(`${server.url}/ari/channels`, { headers: { authorization: `Basic ${Buffer.from(server.user).toString('base64')}` } });
  if (!response.ok) return 0;
  const channels = (await response.json()) as Array<{ name: string; state: string }>;
  return channels.filter((channel) => channel.name.startsWith('PJSIP/load-') && channel.state === 'Up').length;
}

async function allChannels(server: Server): Promise<number> {
  const response = await fetch(`${server.url}/ari/channels`, { headers: { authorization: `Basic ${Buffer.from(server.user).toString('base64')}` } });
  return response.ok ? ((await response.json()) as unknown[]).length : -1;
}

/** Calls whose RTP counts are read (spread over them): enough for a share in ‰, few enough for a loaded server to answer in a second. */
let sample = 100;

/** The answering SIPp's SIP port (b2bua), fixed for the whole bench: Patchbay's dialplan is written with it. */
let answererPort = 0;

async function runStep(server: Server, scenario: Scenario, calls: number, holdSeconds: number, rate: number, work: string, track: (kill: () => void) => () => void): Promise<StepFigures> {
  const placeSeconds = calls / rate;
  const callMs = Math.round((placeSeconds + holdSeconds + 4) * 1000);
  const limitMs = callMs + Math.round(placeSeconds * 2000) + 60_000;
  const problems: string[] = [];
  let answerer: SippProcess | undefined;
  let forgetAnswerer = (): void => undefined;
  if (scenario === 'b2bua') {
    answerer = await startSipp({
      work,
      scenario: join(work, 'answer-echo.xml'),
      args: ['-rtp_echo', '-m', String(calls)],
      limitMs: limitMs + 5000,
      address: ANSWERER.address,
      port: answererPort,
      mediaPort: await freeMediaPort(ANSWERER.address, ANSWERER.mediaPort),
    });
    const kill = answerer.kill;
    const forget = track(kill);
    forgetAnswerer = () => (kill(), void forget());
  }
  const started = performance.now();
  const caller = await startSipp({
    work,
    target: server.sip,
    scenario: join(work, 'call-hangup.xml'),
    args: ['-set', 'caller', 'load', '-s', EXTENSIONS[scenario], '-d', String(callMs), '-r', String(rate), '-m', String(calls), '-l', String(calls)],
    limitMs,
    address: CALLER.address,
    mediaPort: await freeMediaPort(CALLER.address, CALLER.mediaPort),
  });
  const forget = track(() => caller.kill());
  try {
    let callerDone = false;
    void caller.done.then(() => (callerDone = true));
    const upDeadline = started + placeSeconds * 2000 + 15_000;
    let up = 0;
    while (!callerDone && performance.now() < upDeadline && (up = await upCalls(server)) < calls) await sleep(250);
    const setupSeconds = (performance.now() - started) / 1000;
    if (up < calls) problems.push(`${up}/${calls} calls Up after ${setupSeconds.toFixed(1)} s`);
    await sleep(1000);
    // The window ends two seconds before the first call's BYE: the snapshot of every channel takes a moment.
    const windowEnd = started + callMs - 2000;
    // Each snapshot reads the channels one by one over a moment: the window runs from its middle to the next's.
    const beforeStarted = performance.now();
    const before = await snapshotLegs(server.url, CALLER_LEG, { user: server.user, limit: sample });
    const beganAt = (beforeStarted + performance.now()) / 2;
    // The second reading takes about as long as the first: the window ends early enough for it to finish before the BYEs.
    const closeAt = windowEnd - 2000 - 1.5 * (performance.now() - beforeStarted);
    // Under a heavy load the first reading may take so long that the calls end before a window of 2 s is left.
    const endedEarly = callerDone || closeAt - performance.now() < 2000;
    const serverCpu = new CpuMeter(server.pid);
    const callerCpu = new CpuMeter(caller.pid);
    let peakRss = rssMiB(server.pid);
    while (!callerDone && performance.now() < closeAt) {
      await sleep(Math.min(1000, Math.max(0, closeAt - performance.now())));
      peakRss = Math.max(peakRss, rssMiB(server.pid));
    }
    const cpuPercent = endedEarly ? NaN : serverCpu.percent();
    let callerCpuPercent = NaN;
    try {
      if (!endedEarly) callerCpuPercent = callerCpu.percent();
    } catch {
      // SIPp gave up early: its failed calls say why.
    }
    const afterStarted = performance.now();
    const after = await snapshotLegs(server.url, CALLER_LEG, { user: server.user, ids: new Set(before.keys()) });
    const windowSeconds = ((afterStarted + performance.now()) / 2 - beganAt) / 1000;
    const figures = legFigures(before, after).caller ?? { legs: 0, received: 0, sent: 0, lostPercent: 0 };
    const result = await caller.done;
    const failed = calls - result.succeeded;
    if (failed > 0) problems.push(`${failed} failed call(s)`);
    // A channel's two readings are a snapshot's length apart at most: a packet or so a channel either way.
    const allowance = figures.legs * 2;
    const expectedSent = scenario === 'playback' ? figures.legs * PACKETS_PER_SECOND * windowSeconds : figures.received;
    const shortPercent = expectedSent > 0 ? (Math.max(0, expectedSent - figures.sent - allowance) / expectedSent) * 100 : 0;
    const measured = !endedEarly && figures.legs >= Math.min(calls, sample);
    if (endedEarly) problems.push('not measured: the calls were ending when the first RTP reading was done');
    else if (!measured) problems.push(`RTP read on ${figures.legs}/${Math.min(calls, sample)} calls`);
    if (figures.lostPercent >= CLEAN_PERCENT) problems.push(`${figures.lostPercent.toFixed(3)} % lost`);
    if (shortPercent >= CLEAN_PERCENT) problems.push(`${shortPercent.toFixed(3)} % ${scenario === 'playback' ? 'below 50 packets/s' : 'not sent back'}`);
    return {
      up,
      setupSeconds,
      failed,
      windowSeconds,
      legs: figures.legs,
      received: figures.received,
      sent: figures.sent,
      lostPercent: figures.lostPercent,
      shortPercent,
      cpuPercent,
      callerCpuPercent,
      rssMiB: peakRss,
      load: os.loadavg().map((value) => value.toFixed(2)).join(' '),
      problems,
    };
  } finally {
    caller.kill();
    forget();
    // It waits for -m calls: after failed ones it would wait until its limit. The BYEs have had time.
    if (answerer) await Promise.race([answerer.done, sleep(5000)]);
    forgetAnswerer();
  }
}

/** The other server's dialplan dials the answering SIPp at ${UAS_PORT}: a global variable, set through ARI. */
async function setAnswererPort(server: Server): Promise<void> {
  const response = await fetch(`${server.url}/ari/asterisk/variable?variable=UAS_PORT&value=${answererPort}`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(server.user).toString('base64')}` },
  });
  if (response.status !== 204) throw new Error(`${server.name}: setting UAS_PORT answered ${response.status}`);
}

/** Waits (at most `timeoutMs`) until the server holds no channel: the next step starts from none. */
async function waitIdle(server: Server, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let left = Infinity;
  while (performance.now() < deadline && (left = await allChannels(server)) !== 0) await sleep(500);
  return left;
}

function print(server: Server, scenario: Scenario, calls: number, step: StepFigures): void {
  const clean = step.problems.length === 0 ? 'clean' : `NOT CLEAN: ${step.problems.join('; ')}`;
  console.log(`  ${server.name.padEnd(9)} ${scenario} ${calls} calls: ${step.up}/${calls} Up in ${step.setupSeconds.toFixed(1)} s, failed ${step.failed} — ${clean}`);
  console.log(
    `    RTP over ${step.windowSeconds.toFixed(1)} s (${step.legs} callers' channels, ARI rtp_statistics): ${step.received} in (${step.legs > 0 && step.windowSeconds > 0 ? (step.received / step.legs / step.windowSeconds).toFixed(1) : '-'} packets/s a call from SIPp), ${step.sent} out, lost ${step.lostPercent.toFixed(3)} %, ${scenario === 'playback' ? 'below 50/s' : 'not sent back'} ${step.shortPercent.toFixed(3)} %`,
  );
  console.log(
    `    CPU (% of one core, /proc): server ${step.cpuPercent.toFixed(1)} (${((step.cpuPercent / calls) * 100).toFixed(1)} per 100 calls), SIPp ${step.callerCpuPercent.toFixed(1)}; server RSS peak ${step.rssMiB.toFixed(0)} MiB; load average ${step.load}`,
  );
}

async function main(): Promise<void> {
  if (spawnSync('sipp', ['-v']).error) return console.log('bench:sip-side-by-side: sipp is not installed; nothing measured');
  const other = externalOptions(values);
  if (other && values['external-sip'] === undefined) throw new Error('--external-sip host:port goes with --external');
  if (other && !/^[0-9.]+:\d{1,5}$/.test(values['external-sip']!)) throw new Error('--external-sip is an IPv4 host:port');
  if (values.only !== undefined && values.only !== 'patchbay' && values.only !== 'external') throw new Error('--only is patchbay or external');
  if (values.only === 'external' && !other) throw new Error('--only external needs --external');
  const steps = values.steps.split(',').map((step) => clamp(step, 1, 5000));
  const hold = clamp(values.hold, 4, 600);
  const rate = clamp(values.rate, 1, 1000);
  sample = clamp(values.sample, 1, 5000);
  const scenarios = values.scenarios.split(',').map((name) => name.trim()) as Scenario[];
  for (const scenario of scenarios) if (scenario !== 'echo' && scenario !== 'playback' && scenario !== 'b2bua') throw new Error(`unknown scenario '${scenario}' (echo, playback, b2bua)`);

  const running = new Set<() => void>();
  const track = (kill: () => void): (() => void) => {
    running.add(kill);
    return () => running.delete(kill);
  };
  const killEverything = (): void => {
    for (const kill of [...running].reverse()) kill();
    running.clear();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      killEverything();
      process.exit(130);
    });
  }

  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-side-by-side-'));
  const forgetWork = track(() => rmSync(work, { recursive: true, force: true }));
  const speech = '/usr/share/asterisk/sounds/en/tt-monkeys.wav';
  const source = spawnSync('sox', [speech, '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'trim', '0', '12']);
  if (source.error || source.status !== 0) spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '12', 'sine', '1000', 'vol', '0.5']);
  copyFileSync(join(HERE, '../test/sip/scenarios/call-hangup.xml'), join(work, 'call-hangup.xml'));
  copyFileSync(join(HERE, 'sipp/answer-echo.xml'), join(work, 'answer-echo.xml'));
  answererPort = await freeUdpPort(ANSWERER.address);

  const servers: Server[] = [];
  const patchbay =
    values.only === 'external'
      ? undefined
      : await startTarget(track, {
          maxCalls: Math.max(...steps),
          uas: `${ANSWERER.address}:${answererPort}`,
          workers: values.workers === undefined ? null : clamp(values.workers, 0, 256),
          dataDir: join(work, 'server'),
        });
  try {
    if (patchbay) servers.push({ name: 'patchbay', sip: `127.0.0.1:${patchbay.sipPort}`, url: patchbay.url, user: BENCH_USER, pid: patchbay.pid });
    if (other && values.only !== 'patchbay') servers.push({ name: other.name, sip: values['external-sip']!, url: other.url, user: other.auth, pid: other.pid });
    console.log(`bench:sip-side-by-side — ${servers.map((server) => `${server.name} pid ${server.pid} SIP ${server.sip}`).join('; ')}`);
    console.log(`steps ${steps.join(', ')} calls held ${hold} s, placed at ${rate}/s; ${os.cpus().length} cores, load average ${os.loadavg().map((value) => value.toFixed(2)).join(' ')}`);
    if (scenarios.includes('b2bua')) {
      for (const server of servers.filter((candidate) => candidate.name !== 'patchbay')) await setAnswererPort(server);
    }
    let turn = 0;
    for (const scenario of scenarios) {
      console.log(`\n${scenario} (extension ${EXTENSIONS[scenario]}):`);
      for (const calls of steps) {
        // Alternate which server goes first, so neither always meets the same leftovers of the other.
        const order = turn++ % 2 === 0 ? servers : [...servers].reverse();
        for (const server of order) {
          const step = await runStep(server, scenario, calls, hold, rate, work, track);
          print(server, scenario, calls, step);
          const left = await waitIdle(server, 60_000);
          if (left !== 0) console.log(`    ${left} channels still live a minute after the step`);
        }
      }
    }
  } finally {
    await patchbay?.stop();
    killEverything();
    forgetWork();
    rmSync(work, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  console.error(`bench:sip-side-by-side failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
