// A G.722 and an Opus echo call under SIPp load: what a wideband call costs the server when it is
// not alone, and whether its audio survives the load. A real Patchbay in a child process (SIP on a
// free UDP port of 127.0.0.1, extension 200 → Answer() + Echo()) first carries --calls SIPp G.711
// echo calls (test/sip/scenarios/call-hangup.xml, a 1 kHz u-law tone streamed both ways); then a
// baresip on G.722 joins with an Echo() call, then a baresip on Opus (64 kbit/s), each saying a
// 6 kHz tone (above anything G.711 could carry). The server's CPU (user+sys from /proc, % of one
// core) is measured over a --window of seconds at each step; a step's cost is its increase over
// the step before. Once the phones hung up, the G.711 load is measured alone again: its drift is the
// noise every step's figure carries. Last, what each baresip heard back (its sndfile dump): the share of 6 kHz and
// the strongest frequency above 4 kHz, which must be the tone for the echo to have stayed wideband.
// One wideband call's cost is near the noise of a shared machine; --wide N (≤ 8) adds N of each
// (one baresip per call) and divides, for a steadier figure.
// Bounded: ≤ 200 SIPp calls, ≤ 8 wideband calls per codec, windows ≤ 10 s, under two minutes.
// Usage: npm run bench:codecs-load [-- --calls 50 --window 6 --wide 1]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { meanSquare } from '../src/media/energy.ts';
import { HAVE_BARESIP } from '../test/helpers/baresip.ts';
import { BaresipParty, HAVE_SOX, MISSING_PARTY_MODULES } from '../test/helpers/baresip-party.ts';
import { peakAbove, tonePower } from '../test/helpers/tone-power.ts';
import { CpuMeter, rssMiB } from './process-meter.ts';
import { CALL_SCENARIO, runSipTarget, startSipTarget } from './sip-bench-target.ts';
import { runSipp } from './sipp-run.ts';

const { values } = parseArgs({
  options: {
    target: { type: 'boolean', default: false },
    calls: { type: 'string', default: '50' },
    window: { type: 'string', default: '6' },
    wide: { type: 'string', default: '1' },
  },
});

const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const SCENARIO = CALL_SCENARIO;
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const TONE_HZ = 6000;

// ---- the target: a real Patchbay in this (child) process ------------------------------------------

async function runTarget(): Promise<void> {
  await runSipTarget(['[bench-in]', 'exten => 200,1,Answer()', ' same => n,Echo()'], {
    config_objects: {
      res_pjsip: {
        endpoint: {
          load: { context: 'bench-in', allow: 'ulaw' },
          wide: { context: 'bench-in', allow: 'g722' },
          full: { context: 'bench-in', allow: 'opus' },
        },
      },
    },
  });
}

// ---- the benchmark --------------------------------------------------------------------------------

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU of `pid` in % of one core over `seconds` from now. */
async function cpuOver(pid: number, seconds: number): Promise<number> {
  const meter = new CpuMeter(pid);
  await sleep(seconds * 1000);
  return meter.percent();
}

function whyNot(): string | undefined {
  if (spawnSync('sipp', ['-v']).error) return 'sipp is not installed (Debian package sip-tester)';
  if (!HAVE_BARESIP) return 'baresip is not installed';
  if (MISSING_PARTY_MODULES.length > 0) return `baresip modules missing: ${MISSING_PARTY_MODULES.join(', ')}`;
  if (!HAVE_SOX) return 'sox is not installed';
  return undefined;
}

async function runBench(): Promise<void> {
  const missing = whyNot();
  if (missing) {
    console.log(`bench:codecs-load: ${missing}; nothing measured`);
    return;
  }
  const calls = clamp(values.calls, 1, 200);
  const window = clamp(values.window, 2, 10);
  const wide = clamp(values.wide, 1, 8);
  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-codecs-load-'));
  spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '12', 'sine', '1000', 'vol', '0.5']);

  const target = await startSipTarget(fileURLToPath(import.meta.url), ['--target']);
  const { url, sipPort, pid } = target;
  const sipTarget = `127.0.0.1:${sipPort}`;
  const upCount = async (prefix: string): Promise<number> => {
    const response = await fetch(`${url}/ari/channels`, { headers: { authorization: AUTH }, signal: AbortSignal.timeout(5000) });
    const list = (await response.json()) as Array<{ name: string; state: string }>;
    return list.filter((channel) => channel.name.startsWith(prefix) && channel.state === 'Up').length;
  };
  const waitUp = async (prefix: string, count: number, timeoutMs: number): Promise<number> => {
    const deadline = performance.now() + timeoutMs;
    let up = 0;
    while (performance.now() < deadline && (up = await upCount(prefix)) < count) await sleep(200);
    return up;
  };

  console.log(`bench:codecs-load — Patchbay pid ${pid}, SIP udp ${sipTarget}; ${calls} SIPp G.711 echo calls, then ${wide} G.722 and ${wide} Opus baresip echo call(s); ${window} s windows`);
  console.log(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')} (shared: figures are noisy)`);
  const plans = [
    { user: 'wide', codec: 'G722/16000/1', source: `ausine,${TONE_HZ}` },
    { user: 'full', codec: 'opus/48000/2', source: `ausine,${TONE_HZ}` },
  ] as const;
  // One group of `wide` phones per codec, each phone on its own echo call.
  const groups = plans.map((plan) => Array.from({ length: wide }, (_, index) => new BaresipParty(plan, join(work, `${plan.user}-${index}`))));
  const parties = groups.flat();
  try {
    const idle = await cpuOver(pid, 1);
    // SIPp holds its calls for every window plus time to set them up and to add the two phones.
    const holdMs = (4 * window + 25 + 2 * wide) * 1000;
    const sipp = runSipp(work, sipTarget, SCENARIO, ['-set', 'caller', 'load', '-s', '200', '-d', String(holdMs), '-r', String(Math.min(calls, 50)), '-m', String(calls), '-l', String(calls)], holdMs + 30_000);
    const loadUp = await waitUp('PJSIP/load-', calls, 15_000);
    await sleep(1000);
    const withLoad = await cpuOver(pid, window);
    const steps: Array<{ label: string; cpu: number; calls: number }> = [{ label: `${loadUp} G.711 echo calls (SIPp)`, cpu: withLoad, calls: Math.max(1, loadUp) }];

    for (const group of groups) {
      const { user, codec } = group[0].plan;
      for (const party of group) {
        await party.start(sipPort);
        await party.dial(`sip:200@127.0.0.1:${sipPort}`);
      }
      const up = await waitUp(`PJSIP/${user}-`, group.length, 15_000);
      if (up < group.length) throw new Error(`${up}/${group.length} ${codec} calls came up:\n${group[0].output.slice(-1500)}`);
      await sleep(1000);
      steps.push({ label: `+ ${group.length} ${codec} echo call(s)`, cpu: await cpuOver(pid, window), calls: group.length });
    }
    const stillUp = await upCount('PJSIP/load-');
    for (const party of parties) await party.hangup();
    // The G.711 load alone again: how far it drifted is the noise the steps above sit in.
    await sleep(1000);
    const loadAgain = await cpuOver(pid, window);

    console.log(`\nserver CPU, % of one core (user+sys over ${window} s), idle ${idle.toFixed(1)} %:`);
    let before = idle;
    for (const step of steps) {
      const added = step.cpu - before;
      const perCall = added / step.calls;
      console.log(`  ${step.label.padEnd(36)} ${step.cpu.toFixed(1).padStart(6)} %   this step ${added.toFixed(1).padStart(6)} %   per call ${perCall.toFixed(2).padStart(6)} % (${((perCall / 100) * 20_000).toFixed(0)} µs per 20 ms)`);
      before = step.cpu;
    }
    console.log(`  ${'the G.711 load alone again'.padEnd(36)} ${loadAgain.toFixed(1).padStart(6)} %   drift ${(loadAgain - withLoad).toFixed(1)} % (the noise of a step)`);
    console.log(`  SIPp calls still Up after the wideband steps: ${stillUp}/${loadUp}; server RSS ${rssMiB(pid).toFixed(1)} MiB`);

    console.log(`\nthe wideband echoes (last 2 s each phone heard back):`);
    for (const party of parties) {
      const heard = party.heard();
      const tail = heard.samples.subarray(Math.max(0, heard.samples.length - 2 * heard.rate));
      const total = Math.max(1, meanSquare(tail));
      const share = tonePower(tail, TONE_HZ, heard.rate) / total;
      const peak = peakAbove(tail, heard.rate, 4000);
      const kept = share > 0.5 && Math.abs(peak.frequency - TONE_HZ) <= 25;
      console.log(`  ${party.plan.codec.padEnd(14)} decoded at ${heard.rate} Hz: ${TONE_HZ} Hz is ${(share * 100).toFixed(1)} % of the echo, strongest above 4 kHz at ${peak.frequency} Hz — ${kept ? 'tone kept' : 'TONE LOST'}`);
    }
    const result = await sipp;
    console.log(`\nSIPp: attempted ${result.created}, succeeded ${result.succeeded}, failed ${result.failed} (exit ${result.code}) in ${result.wallSeconds.toFixed(1)} s`);
  } finally {
    await Promise.all(parties.map((party) => party.stop()));
    await target.stop();
    rmSync(work, { recursive: true, force: true });
    const warnings = target.lastLogLines();
    if (warnings.length) console.log(`\nserver log (warn and above), last lines:\n  ${warnings.join('\n  ')}`);
  }
}

if (values.target) await runTarget();
else await runBench();
