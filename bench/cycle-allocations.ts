// Where the originate cycle's garbage comes from (issue 25): the compiled server (dist/) and the
// cycle client (bench/ari-cycle-client.ts) in one process, V8's sampling heap profiler with the
// objects already collected counted too, then bytes per cycle by allocating function and by the
// nearest of the server's own functions up the stack (what is not under one is the client's or
// Node.js's alone).
// --survivors counts only what outlived the young generation (promoted into the old space, there to be
// collected by a mark-compact): what each cycle costs the collector beyond its garbage (docs/performance.md,
// "Seventh pass on the originate cycle").
// Usage: npm run build && npx tsx bench/cycle-allocations.ts [--cycles 3000] [--root dist] [--warmup 500] [--survivors]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { printLargest, profileAllocations, startQuietServer } from './allocation-profile.ts';
import { cycleClient } from './ari-cycle-client.ts';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '3000' }, root: { type: 'string', default: 'dist' }, warmup: { type: 'string', default: '500' }, survivors: { type: 'boolean', default: false } } });
const cycles = Math.min(Math.max(Math.floor(Number(values.cycles)) || 0, 100), 100_000);
const root = resolve(values.root!);
const server = await startQuietServer(root);
const client = await cycleClient(server.url, 50);

try {
  await client.run(Math.min(Math.max(Math.floor(Number(values.warmup)) || 0, 0), 200_000), 50);
  const allocations = await profileAllocations(root, 512, () => client.run(cycles, 50), values.survivors);
  const kb = (bytes: number): string => `${(bytes / cycles / 1024).toFixed(1)} KB`;
  const what = values.survivors ? 'outlived the young generation' : 'allocated';
  console.log(`${cycles} cycles: ${kb(allocations.total)} ${what} per cycle in all (server and client), ${kb(allocations.underServer)} under the server's own functions`);
  console.log('\nby allocating function, bytes per cycle:');
  printLargest(allocations.bySelf, cycles, 30, 7);
  console.log('\nby the nearest server function up the stack, bytes per cycle:');
  printLargest(allocations.byServerFunction, cycles, 30, 7);
  console.log('\nby builtin (Map#set, Array#push, …) and the server function that called it, bytes per cycle:');
  printLargest(allocations.byBuiltinCaller, cycles, 20, 7);
} finally {
  client.close();
  await server.stop();
}
