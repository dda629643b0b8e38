// Two compiled servers, alive side by side, pinged in alternating batches (issue 25's ping path): CPU µs
// per ping of each batch (process.cpuUsage inside the target), pair by pair. request-cpu.ts and
// ping-gap.ts start a fresh process per round, minutes apart, so at load 25–40 a round's neighbours
// and its process's own optimisation choices weigh more than a small change; here both builds meet
// the same minute's load in every pair, and the order within a pair alternates.
// Usage: npx tsx bench/ping-ab.ts [--a dist --b <main>/dist --pairs 10 --pings 10000]
import os from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { measurePings, startTargetProcess } from './target-process.ts';

const { values } = parseArgs({ options: { a: { type: 'string', default: 'dist' }, b: { type: 'string' }, pairs: { type: 'string', default: '10' }, pings: { type: 'string', default: '10000' } } });
if (values.b === undefined) throw new Error('--b DIR: the build to compare with (say main\'s dist/)');
const pairs = Math.min(Math.max(Math.floor(Number(values.pairs)) || 1, 1), 100);
const pings = Math.min(Math.max(Math.floor(Number(values.pings)) || 1000, 1000), 200_000);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const names = ['a', 'b'] as const;
const roots = { a: resolve(values.a!), b: resolve(values.b) };
const targets = {
  a: await startTargetProcess({ name: 'a', role: 'server', env: { ...process.env, PATCHBAY_BENCH_ROOT: roots.a }, answerTimeoutMs: 120_000 }),
  b: await startTargetProcess({ name: 'b', role: 'server', env: { ...process.env, PATCHBAY_BENCH_ROOT: roots.b }, answerTimeoutMs: 120_000 }),
};
const cpuOf = async (name: 'a' | 'b'): Promise<number> => (await targets[name].ask<{ cpuUs: number }>('stats')).cpuUs;
const ping = async (name: 'a' | 'b', amount: number): Promise<number> => {
  const run = await measurePings({ url: targets[name].url, authorization: AUTH, connections: 20, amount, cpuUs: () => cpuOf(name) });
  return run.cpuUs / run.requests;
};
try {
  // request-cpu.ts's order: a full collection, then a warm-up, then the measured batches.
  for (const name of names) {
    await targets[name].ask('gc');
    await ping(name, 5000);
  }
  const figures = { a: [] as number[], b: [] as number[] };
  for (let pair = 0; pair < pairs; pair++) {
    for (const name of pair % 2 === 0 ? names : ([...names].reverse() as ('a' | 'b')[])) figures[name].push(await ping(name, pings));
    console.log(`pair ${pair + 1} (load ${os.loadavg()[0]!.toFixed(1)}): a ${figures.a.at(-1)!.toFixed(2)}, b ${figures.b.at(-1)!.toFixed(2)} µs/ping`);
  }
  const mean = (list: number[]): number => list.reduce((sum, value) => sum + value, 0) / list.length;
  const median = (list: number[]): number => [...list].sort((x, y) => x - y)[list.length >> 1]!;
  const cheaper = figures.a.filter((value, i) => value < figures.b[i]!).length;
  console.log(`a = ${roots.a}, b = ${roots.b}: mean ${mean(figures.a).toFixed(2)} / ${mean(figures.b).toFixed(2)} µs/ping (b/a ${(mean(figures.b) / mean(figures.a)).toFixed(3)}), median ${median(figures.a).toFixed(2)} / ${median(figures.b).toFixed(2)}; a cheaper in ${cheaper} of ${pairs} pairs`);
} finally {
  await Promise.all([targets.a.stop(), targets.b.stop()]);
}
