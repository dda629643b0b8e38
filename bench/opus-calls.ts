// Opus calls end to end, on the main thread against in a media worker (media.worker_opus off / on):
// --calls baresips on Opus (64 kbit/s, a 6 kHz tone) each call Echo() on an endpoint whose
// dtmf_mode is inband, so Echo() cannot send the packets back as they came: every frame is decoded
// and encoded again by the server (native libopus on the main thread, its WebAssembly build in a
// worker). Over a --window of seconds: the server's CPU (user+sys from /proc, % of one core), its
// main thread's, and its workers' (their own reports in GET /metrics, averaged over the window);
// then whether each phone heard its tone back. The baresips code Opus too, on the same cores: the
// figures are the server's alone, but a loaded machine slows everything.
// Bounded: ≤ 16 calls, windows ≤ 20 s, a few minutes in all.
// Usage: npx tsx bench/opus-calls.ts [--calls 8] [--window 10] [--worker-opus off,on] [--workers 1]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { meanSquare } from '../src/media/energy.ts';
import { HAVE_BARESIP } from '../test/helpers/baresip.ts';
import { BaresipParty, MISSING_PARTY_MODULES } from '../test/helpers/baresip-party.ts';
import { tonePower } from '../test/helpers/tone-power.ts';
import { CpuMeter, ThreadCpuMeter } from './process-meter.ts';
import { scrapeMetrics } from './prometheus-text.ts';
import { runSipTarget, startSipTarget } from './sip-bench-target.ts';

const { values } = parseArgs({
  options: {
    target: { type: 'boolean', default: false },
    calls: { type: 'string', default: '8' },
    window: { type: 'string', default: '10' },
    'worker-opus': { type: 'string', default: 'off,on' },
    workers: { type: 'string', default: '1' },
  },
});

const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const TONE_HZ = 6000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function runTarget(): Promise<void> {
  await runSipTarget(['[bench-in]', 'exten => 200,1,Answer()', ' same => n,Echo()'], {
    media: { workers: clamp(values.workers, 1, 8), worker_opus: values['worker-opus'] === 'on' },
    config_objects: { res_pjsip: { endpoint: { full: { context: 'bench-in', allow: 'opus', dtmf_mode: 'inband' } } } },
  });
}

interface Run {
  readonly workerOpus: string;
  readonly up: number;
  readonly inWorkers: number;
  readonly server: number;
  readonly main: number;
  readonly workers: number;
  readonly kept: number;
}

async function measure(workerOpus: string, calls: number, window: number): Promise<Run> {
  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-opus-calls-'));
  const target = await startSipTarget(fileURLToPath(import.meta.url), ['--target', '--worker-opus', workerOpus, '--workers', values.workers]);
  const { url, sipPort, pid } = target;
  const parties = Array.from({ length: calls }, (_, index) => new BaresipParty({ user: 'full', codec: 'opus/48000/2', source: `ausine,${TONE_HZ}` }, join(work, `full-${index}`)));
  try {
    // The workers load before the first call (a call placed earlier runs on the main thread).
    const ready = performance.now() + 60_000;
    while (performance.now() < ready && ((await scrapeMetrics(url)).sum('patchbay_media_worker_streams') === undefined)) await sleep(200);
    await sleep(2000);
    for (const party of parties) {
      await party.start(sipPort);
      await party.dial(`sip:200@127.0.0.1:${sipPort}`);
    }
    const upCount = async (): Promise<number> => {
      const list = (await (await fetch(`${url}/ari/channels`, { headers: { authorization: AUTH } })).json()) as Array<{ state: string }>;
      return list.filter((channel) => channel.state === 'Up').length;
    };
    const deadline = performance.now() + 30_000;
    let up = 0;
    while (performance.now() < deadline && (up = await upCount()) < calls) await sleep(200);
    await sleep(1500);
    const server = new CpuMeter(pid);
    const main = new ThreadCpuMeter(pid);
    const workerSamples: number[] = [];
    let inWorkers = 0;
    for (let second = 0; second < window; second++) {
      await sleep(1000);
      const metrics = await scrapeMetrics(url);
      workerSamples.push(metrics.sum('patchbay_media_worker_cpu_cores') ?? 0);
      inWorkers = metrics.sum('patchbay_media_worker_streams') ?? 0;
    }
    const serverCpu = server.percent();
    const mainCpu = main.percent();
    for (const party of parties) await party.hangup();
    await sleep(800);
    let kept = 0;
    for (const party of parties) {
      const heard = party.heard();
      const tail = heard.samples.subarray(Math.max(0, heard.samples.length - 2 * heard.rate));
      if (tonePower(tail, TONE_HZ, heard.rate) / Math.max(1, meanSquare(tail)) > 0.5) kept += 1;
    }
    const workers = (workerSamples.reduce((sum, sample) => sum + sample, 0) / Math.max(1, workerSamples.length)) * 100;
    return { workerOpus, up, inWorkers, server: serverCpu, main: mainCpu, workers, kept };
  } finally {
    await Promise.all(parties.map((party) => party.stop()));
    await target.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

async function runBench(): Promise<void> {
  if (!HAVE_BARESIP || MISSING_PARTY_MODULES.length > 0) {
    console.log(`bench:opus-calls: baresip or its modules (${MISSING_PARTY_MODULES.join(', ')}) missing; nothing measured`);
    return;
  }
  const calls = clamp(values.calls, 1, 16);
  const window = clamp(values.window, 3, 20);
  const settings = values['worker-opus'].split(',').filter((value) => value === 'on' || value === 'off');
  console.log(`bench:opus-calls — ${calls} baresip Opus echo calls (inband DTMF: decoded and re-encoded by the server), media.workers ${values.workers}, ${window} s windows`);
  console.log(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')} (shared: figures are noisy)`);
  console.log('\n| worker_opus | calls up | streams in workers | server CPU % | main thread % | workers % | per call µs / 20 ms | tone back |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const setting of settings) {
    const run = await measure(setting, calls, window);
    const perCall = ((run.server / 100) * 20_000) / Math.max(1, run.up);
    console.log(`| ${run.workerOpus} | ${run.up} | ${run.inWorkers} | ${run.server.toFixed(1)} | ${run.main.toFixed(1)} | ${run.workers.toFixed(1)} | ${perCall.toFixed(0)} | ${run.kept}/${calls} |`);
  }
  console.log(`\nload average after: ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);
}

if (values.target) await runTarget();
else await runBench();
