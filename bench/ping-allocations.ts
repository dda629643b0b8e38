// Bytes allocated per GET /ari/asterisk/ping (issue 25), server against the floor, and where the
// server's bytes come from. Allocation is counted, not timed, so a loaded machine gives the same
// figures as a quiet one: garbage is CPU twice over (made, then collected), and a byte more per
// request than the floor's is work the floor does not do.
//   1. Each target (bench/request-cpu-target.ts: `server` and `floor`) runs in its own process with a
//      young generation large enough that no collection runs during the pings: the growth of its heap
//      over the pings, per ping, is what each request allocated (the HTTP parser's, the answer's, the
//      server's own).
//   2. The compiled server alone in this process under V8's sampling heap profiler (collected objects
//      counted too): bytes per ping by the nearest of the server's own functions up the stack.
// Usage: npm run build && npx tsx bench/ping-allocations.ts [--pings 20000] [--root dist] [--path /ari/asterisk/ping]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { printLargest, profileAllocations, startQuietServer } from './allocation-profile.ts';
import { startTargetProcess } from './target-process.ts';

const { values } = parseArgs({ options: { pings: { type: 'string', default: '20000' }, root: { type: 'string', default: 'dist' }, path: { type: 'string', default: '/ari/asterisk/ping' } } });
const pings = Math.min(Math.max(Math.floor(Number(values.pings)) || 0, 1000), 200_000);
const root = resolve(values.root!);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const path = values.path!.startsWith('/') ? values.path! : '/ari/asterisk/ping';

/** Bytes the target's heap grew by per ping, with no collection in between (a 256 MB young generation). */
async function bytesPerPing(kind: 'server' | 'floor'): Promise<number> {
  const target = await startTargetProcess({ name: kind, role: kind, nodeArgs: ['--min-semi-space-size=128', '--max-semi-space-size=128'], env: { ...process.env, PATCHBAY_BENCH_ROOT: root } });
  const ask = async (command: 'stats' | 'gc'): Promise<number> => (await target.ask<{ heapUsed: number }>(command)).heapUsed;
  try {
    const url = `${target.url}${path}`;
    await autocannon({ url, connections: 20, amount: 3000, headers: { authorization: AUTH } }); // warm-up
    // Small rounds, each after a full collection, so the young generation never fills; the least is
    // kept (a timer or sampler of the server's that ran during a round only adds).
    let least = Number.POSITIVE_INFINITY;
    const perRound = Math.min(pings, 20_000);
    for (let done = 0; done < pings; done += perRound) {
      await ask('gc');
      const before = await ask('stats');
      const result = await autocannon({ url, connections: 20, amount: perRound, headers: { authorization: AUTH } });
      const after = await ask('stats');
      if (result.non2xx + result.errors > 0) throw new Error(`${kind}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      least = Math.min(least, (after - before) / result.requests.total);
    }
    return least;
  } finally {
    await target.stop();
  }
}

/** Bytes per ping by the nearest server function up the stack (sampling heap profiler, in this process). */
async function byServerFunction(): Promise<void> {
  const server = await startQuietServer(root);
  const url = `${server.url}${path}`;
  try {
    await autocannon({ url, connections: 20, amount: 3000, headers: { authorization: AUTH } });
    const allocations = await profileAllocations(root, 256, () => autocannon({ url, connections: 20, amount: pings, headers: { authorization: AUTH } }));
    console.log(`\nunder the server's own functions: ${Math.round(allocations.underServer / pings)} B per ping (sampled), by the nearest server function:`);
    printLargest(allocations.byServerFunction, pings, 25, 6);
  } finally {
    await server.stop();
  }
}

const server = await bytesPerPing('server');
const floor = await bytesPerPing('floor');
console.log(`${path}: heap allocated per request (least of ${Math.ceil(pings / Math.min(pings, 20_000))} rounds): server ${Math.round(server)} B, floor ${Math.round(floor)} B, server − floor ${Math.round(server - floor)} B`);
await byServerFunction();
