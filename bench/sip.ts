// SIP benchmark: a real Patchbay in a child process (log level warn, SIP on a free UDP port of
// 127.0.0.1, endpoint `bench` without auth, context `bench-in`) driven by SIPp (Debian package
// sip-tester) with the scenario test/sip/scenarios/call-hangup.xml (INVITE, 200, ACK, u-law audio
// from audio.wav made with sox, BYE after -d ms).
// Phase A, call set-up rate: SIPp places --calls calls at --rate per second into extension 100
//   → Stasis(bench); the event WebSocket of app `bench` answers each StasisStart
//   (POST /channels/{id}/answer); SIPp hangs up 200 ms after the 200 OK.
// Phase B, concurrent calls with media: --concurrent calls (each list: 50,100) into extension 200
//   → Answer() + Echo(), SIPp streaming audio both ways, held ~--hold seconds.
// Prints calls attempted/succeeded/failed, calls per second, the server's CPU (user+sys from
// /proc/<pid>/stat, % of one core) and RSS. Bounded: ≤ 500 calls and ≤ 60 s per phase.
// Usage: npm run bench:sip [-- --rate 20 --calls 500 --concurrent 50,100 --hold 10]
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { CpuMeter, rssMiB } from './process-meter.ts';
import { CALL_SCENARIO, runSipTarget, startSipTarget } from './sip-bench-target.ts';
import { runSipp, type SippResult } from './sipp-run.ts';

const { values } = parseArgs({
  options: {
    target: { type: 'boolean', default: false },
    rate: { type: 'string', default: '20' },
    calls: { type: 'string', default: '500' },
    concurrent: { type: 'string', default: '50,100' },
    hold: { type: 'string', default: '10' },
  },
});

const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const SCENARIO = CALL_SCENARIO;
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const PHASE_LIMIT_MS = 60_000;

// ---- the target: a real Patchbay in this (child) process ------------------------------------------

async function runTarget(): Promise<void> {
  await runSipTarget(['[bench-in]', 'exten => 100,1,Stasis(bench)', 'exten => 200,1,Answer()', ' same => n,Echo()'], {
    sip: { rtp_port_start: 10000, rtp_port_end: 20000 },
    config_objects: { res_pjsip: { endpoint: { bench: { context: 'bench-in', allow: 'ulaw' } } } },
  });
}

// ---- measurements of the target -------------------------------------------------------------------

/** The interesting lines of SIPp's output (errors), at most a few. */
function sippErrors(result: SippResult): string {
  const lines = result.output.split('\n').filter((l) => /error|unexpected|failed|timeout|abort/i.test(l) && !/^\s*$/.test(l));
  return lines.slice(-6).join('\n    ');
}

// ---- the benchmark --------------------------------------------------------------------------------

async function runBench(): Promise<void> {
  if (spawnSync('sipp', ['-v']).error) {
    console.log('bench:sip: sipp is not installed (Debian package sip-tester); nothing measured');
    return;
  }
  const rate = clamp(values.rate, 1, 200);
  const calls = clamp(values.calls, 1, 500);
  const hold = clamp(values.hold, 1, 40);
  const levels = values.concurrent.split(',').map((v) => clamp(v, 1, 500));

  const work = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-sip-'));
  // The peer's audio: 12 s of a 1 kHz tone as u-law WAV (SIPp streams it as payload type 0, looping).
  const sox = spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '12', 'sine', '1000', 'vol', '0.5']);
  if (sox.error || sox.status !== 0) console.log('bench:sip: sox failed; SIPp streams no audio');

  const target = await startSipTarget(fileURLToPath(import.meta.url), ['--target']);
  const { url, sipPort, pid } = target;
  const sipTarget = `127.0.0.1:${sipPort}`;
  const base = url;
  console.log(`bench:sip — Patchbay pid ${pid}, ARI ${url}, SIP udp ${sipTarget}; SIPp ${SCENARIO.split('/').slice(-1)[0]}`);
  console.log(`server RSS at start: ${rssMiB(pid).toFixed(1)} MiB`);

  const ari = async (method: string, path: string): Promise<{ status: number; body: string }> => {
    const res = await fetch(`${base}/ari${path}`, { method, headers: { authorization: AUTH }, signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.text() };
  };

  // The app `bench` answers every StasisStart.
  let stasisStarts = 0;
  let answered = 0;
  const answerFailures = new Map<string, number>();
  const answerLatencies: number[] = [];
  let firstStart = 0;
  let lastStart = 0;
  const socket = new WebSocket(`${url.replace('http', 'ws')}/ari/events?app=bench`, { headers: { authorization: AUTH } });
  socket.on('message', (data) => {
    const text = String(data);
    if (!text.includes('"StasisStart"')) return;
    const event = JSON.parse(text) as { type: string; channel?: { id: string } };
    if (event.type !== 'StasisStart' || !event.channel) return;
    stasisStarts++;
    lastStart = performance.now();
    if (firstStart === 0) firstStart = lastStart;
    const t0 = performance.now();
    ari('POST', `/channels/${encodeURIComponent(event.channel.id)}/answer`).then(
      (res) => {
        if (res.status === 204) {
          answered++;
          answerLatencies.push(performance.now() - t0);
        } else answerFailures.set(`${res.status} ${res.body.slice(0, 120)}`, (answerFailures.get(`${res.status} ${res.body.slice(0, 120)}`) ?? 0) + 1);
      },
      (err: unknown) => answerFailures.set(String(err), (answerFailures.get(String(err)) ?? 0) + 1),
    );
  });
  await Promise.race([
    once(socket, 'open'),
    once(socket, 'unexpected-response').then(() => Promise.reject(new Error('event WebSocket refused'))),
  ]);

  const pct = (sorted: number[], p: number): string => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!.toFixed(1) : '-');

  try {
    // ---- Phase A: call set-up rate ----
    console.log(`\nA. call set-up: ${calls} calls at ${rate}/s into 100 → Stasis(bench) → answer → peer BYE after 200 ms`);
    // A few warm-up calls (not counted).
    await runSipp(work, sipTarget, SCENARIO, ['-set', 'caller', 'bench', '-s', '100', '-d', '200', '-r', '5', '-m', '5', '-l', '5'], PHASE_LIMIT_MS);
    stasisStarts = answered = firstStart = lastStart = 0;
    answerLatencies.length = 0;
    answerFailures.clear();
    const meterA = new CpuMeter(pid);
    const a = await runSipp(work, sipTarget, SCENARIO, ['-set', 'caller', 'bench', '-s', '100', '-d', '200', '-r', String(rate), '-m', String(calls), '-l', String(Math.max(rate * 2, 10))], PHASE_LIMIT_MS);
    const cpuA = meterA.percent();
    const rssA = rssMiB(pid);
    await new Promise((r) => setTimeout(r, 300));
    answerLatencies.sort((x, y) => x - y);
    const setupSeconds = (lastStart - firstStart) / 1000;
    console.log(`  SIPp: attempted ${a.created}, succeeded ${a.succeeded}, failed ${a.failed} (exit ${a.code}) in ${a.wallSeconds.toFixed(1)} s`);
    console.log(`  achieved: ${(a.succeeded / a.wallSeconds).toFixed(1)} completed calls/s over the SIPp run; StasisStart ${stasisStarts} at ${stasisStarts > 1 && setupSeconds > 0 ? ((stasisStarts - 1) / setupSeconds).toFixed(1) : '-'} /s`);
    console.log(`  app answered ${answered} (POST answer p50 ${pct(answerLatencies, 50)} ms, p99 ${pct(answerLatencies, 99)} ms)${answerFailures.size ? `; answer failures: ${[...answerFailures].map(([k, n]) => `${n}× ${k}`).join('; ')}` : ''}`);
    console.log(`  server CPU ${cpuA.toFixed(1)} % of one core (user+sys over the run), RSS ${rssA.toFixed(1)} MiB`);
    if (a.failed > 0 || a.code !== 0) console.log(`  SIPp errors:\n    ${sippErrors(a) || a.output.slice(-600)}`);
    const left = JSON.parse((await ari('GET', '/channels')).body) as unknown[];
    console.log(`  channels left after the phase: ${left.length}`);

    // ---- Phase B: concurrent calls with media ----
    for (const n of levels) {
      console.log(`\nB. ${n} concurrent calls into 200 → Answer() + Echo(), SIPp streaming u-law audio, held ~${hold} s`);
      const meterIdle = new CpuMeter(pid);
      await new Promise((r) => setTimeout(r, 500));
      const idle = meterIdle.percent();
      const duration = (hold + 3) * 1000;
      const running = runSipp(work, sipTarget, SCENARIO, ['-set', 'caller', 'bench', '-s', '200', '-d', String(duration), '-r', String(Math.min(n, 100)), '-m', String(n), '-l', String(n)], PHASE_LIMIT_MS);
      // Wait until all n channels are Up (or the calls are over).
      const deadline = performance.now() + 10_000;
      let up = 0;
      let settled = false;
      void running.then(() => (settled = true));
      while (performance.now() < deadline && !settled) {
        const list = JSON.parse((await ari('GET', '/channels')).body) as Array<{ state: string; name: string }>;
        up = list.filter((c) => c.name.startsWith('PJSIP/') && c.state === 'Up').length;
        if (up >= n) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const upAt = performance.now();
      let cpuHold = 0;
      let rssHold = 0;
      let rssPeak = 0;
      if (!settled) {
        const meter = new CpuMeter(pid);
        const window = Math.min(hold - 1, 8) * 1000;
        while (performance.now() - upAt < window && !settled) {
          await new Promise((r) => setTimeout(r, 500));
          rssPeak = Math.max(rssPeak, rssMiB(pid));
        }
        cpuHold = meter.percent();
        rssHold = rssMiB(pid);
        const list = JSON.parse((await ari('GET', '/channels')).body) as Array<{ state: string; name: string }>;
        const stillUp = list.filter((c) => c.name.startsWith('PJSIP/') && c.state === 'Up').length;
        console.log(`  established: ${up}/${n} Up when measured; ${stillUp} still Up at the end of the window`);
        // Media really flows both ways: the RTP statistics of every call still up.
        let withRx = 0;
        let withTx = 0;
        let rx = 0;
        let tx = 0;
        let lost = 0;
        for (const c of list.filter((ch) => ch.name.startsWith('PJSIP/') && ch.state === 'Up')) {
          const res = await ari('GET', `/channels/${encodeURIComponent((c as unknown as { id: string }).id)}/rtp_statistics`);
          if (res.status !== 200) continue;
          const st = JSON.parse(res.body) as { rxcount?: number; txcount?: number; rxploss?: number };
          rx += st.rxcount ?? 0;
          tx += st.txcount ?? 0;
          lost += st.rxploss ?? 0;
          if ((st.rxcount ?? 0) > 0) withRx++;
          if ((st.txcount ?? 0) > 0) withTx++;
        }
        console.log(`  RTP: ${withRx} calls receiving, ${withTx} sending; ${rx} packets in, ${tx} out, ${lost} lost (server's rtp_statistics)`);
      } else console.log(`  established: ${up}/${n} Up before SIPp ended`);
      const b = await running;
      console.log(`  SIPp: attempted ${b.created}, succeeded ${b.succeeded}, failed ${b.failed} (exit ${b.code}) in ${b.wallSeconds.toFixed(1)} s`);
      console.log(`  server CPU idle ${idle.toFixed(1)} %, during the hold ${cpuHold.toFixed(1)} % of one core; RSS ${rssHold.toFixed(1)} MiB (peak ${rssPeak.toFixed(1)} MiB)`);
      if (b.failed > 0 || b.code !== 0) console.log(`  SIPp errors:\n    ${sippErrors(b) || b.output.slice(-600)}`);
      if (b.succeeded < n) break;
    }
  } finally {
    socket.close();
    await target.stop();
    rmSync(work, { recursive: true, force: true });
    const warnings = target.lastLogLines();
    if (warnings.length) console.log(`\nserver log (warn and above), last lines:\n  ${warnings.join('\n  ')}`);
  }
}

if (values.target) await runTarget();
else await runBench();
