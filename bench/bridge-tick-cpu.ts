// CPU of the media tick of K two-party mixing bridges of Local channels, with the clock driven by
// hand: the same bridges and frames as bench/bridges.ts, but no timer, so what it measures is the
// work of a tick and nothing of the scheduling. On a shared machine bench/bridges.ts's "CPU per
// bridge" (process CPU over a 5 s window of a timer-driven clock) moved 190–310 µs/s between runs
// of one build; this one reads only the ticks' own CPU, so two builds compare within one sitting.
// Run it from each worktree in turn (it imports that tree's src/), alternating.
// Usage: npx tsx bench/bridge-tick-cpu.ts [--bridges 500 --ticks 3000 --rounds 3]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../src/config/config.ts';
import { PatchbayCore } from '../src/server.ts';
import type { Channel } from '../src/core/channels/channel.ts';
import { originate } from '../src/control/originate.ts';
import { samplesPerFrame, type Frame } from '../src/media/frame.ts';

const { values } = parseArgs({
  options: { bridges: { type: 'string', default: '500' }, ticks: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } },
});
const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const BRIDGES = clamp(values.bridges, 1, 5000);
const TICKS = clamp(values.ticks, 100, 100_000);
const ROUNDS = clamp(values.rounds, 1, 20);
/** Ticks run back to back before the event loop gets a turn (timers, promises the frames may leave). */
const TICKS_PER_TURN = 50;
const RATE = 8000;
const APP = 'bench';

const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-tick-'));
const config = loadConfig({ path: null, env: {}, overrides: { dirs: { data: dataDir }, ari: { developer_mode: false }, logging: { console: false, level: 'warn' } } });
const core = new PatchbayCore({ config, log: pino({ level: 'warn' }), manualClock: true });
await core.start();
core.applications.register(APP, { deliver() {} }, false);

function toneFrame(hz: number): Frame {
  const samples = new Int16Array(samplesPerFrame(RATE));
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * hz * i) / RATE));
  return { rate: RATE, samples };
}
const FRAMES = [toneFrame(400), toneFrame(1000)];
const EXPECTED = [FRAMES[1].samples[1], FRAMES[0].samples[1]];

async function call(): Promise<Channel> {
  const origination = originate(core, { endpoint: 'Local/answer@default', app: APP });
  const status = await origination.outcome;
  if (status !== 'ANSWER' || !origination.channel.stasis) throw new Error(`originate ended ${status}`);
  return origination.channel;
}

const far: Channel[] = [];
let heard = 0;
for (let made = 0; made < BRIDGES; made += 50) {
  await Promise.all(
    Array.from({ length: Math.min(50, BRIDGES - made) }, async () => {
      const calls = await Promise.all(FRAMES.map(() => call()));
      const bridge = core.bridges.create({ types: ['mixing'] });
      calls.forEach((near, p) => {
        const other = near.peer!;
        other.addFrameListener((frame) => {
          if (frame.samples[1] === EXPECTED[p]) heard++;
        });
        far.push(other);
      });
      for (const near of calls) core.bridges.addChannel(bridge, near, {});
    }),
  );
}

// The bench's listener goes first, so each tick's frames are fed and mixed in the same tick.
const feed = (): void => {
  for (let i = 0; i < far.length; i++) far[i].write(FRAMES[i & 1]);
};
core.media.onTick(feed);
const clock = core.media.clock;
// Collections during the measured ticks: a frame path that allocates shows here before it shows in the CPU.
let collections = 0;
const collectionObserver = new PerformanceObserver((list) => {
  collections += list.getEntries().length;
});
collectionObserver.observe({ entryTypes: ['gc'] });

async function runTicks(count: number): Promise<void> {
  for (let done = 0; done < count; ) {
    const turn = Math.min(TICKS_PER_TURN, count - done);
    for (let i = 0; i < turn; i++) clock.tick();
    done += turn;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

await runTicks(Math.min(1000, TICKS)); // warm-up: the hot paths optimised
const rows: string[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  heard = 0;
  const cpuBefore = process.cpuUsage();
  const collectionsBefore = collections;
  await runTicks(TICKS);
  const cpu = process.cpuUsage(cpuBefore);
  // The observer is told on a later turn of the event loop: let it catch up.
  await new Promise((resolve) => setImmediate(resolve));
  const collected = collections - collectionsBefore;
  const usPerBridgeTick = (cpu.user + cpu.system) / (TICKS * BRIDGES);
  const heardPercent = (heard / (TICKS * far.length)) * 100;
  rows.push(`round ${round}: ${usPerBridgeTick.toFixed(3)} µs CPU per bridge per tick (${(usPerBridgeTick * 50).toFixed(1)} µs/s per bridge at 50 ticks/s), heard ${heardPercent.toFixed(1)}%, ${collected} collections, load ${os.loadavg()[0].toFixed(2)}`);
}
core.media.offTick(feed);
collectionObserver.disconnect();
await core.stop();
rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(`${BRIDGES} two-party mixing bridges of Local channels, ${TICKS} hand-driven ticks per round (Node ${process.version})\n${rows.join('\n')}\n`);
