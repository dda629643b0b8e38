// Profiles the server under GET /ari/asterisk/ping load (or, with --cycles N, N originate cycles at
// 50 in flight): runs the request-cpu target under `node --cpu-prof` and prints its hottest
// functions by self time (issue 25's hot-spot search).
// Usage: [PATCHBAY_BENCH_ROOT=$PWD/dist] npx tsx bench/profile-ping.ts [--kind server|floor] [--pings 50000] [--path /ari/asterisk/ping] [--cycles 0]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cycleClient } from './ari-cycle-client.ts';

const { values } = parseArgs({ options: { kind: { type: 'string', default: 'server' }, pings: { type: 'string', default: '50000' }, cycles: { type: 'string', default: '0' }, path: { type: 'string', default: '/ari/asterisk/ping' } } });
const amount = Math.min(Math.max(Number(values.pings) || 1000, 100), 1_000_000);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const dir = mkdtempSync(join(os.tmpdir(), 'patchbay-prof-'));
const script = new URL('./request-cpu-target.ts', import.meta.url).pathname;
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import', 'tsx', script, values.kind === 'floor' ? 'floor' : 'server'], { stdio: ['pipe', 'pipe', 'inherit'] });
const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
const url = String(chunk).trim().split('\n')[0];
const cycles = Math.min(Math.max(Number(values.cycles) || 0, 0), 100_000);
if (cycles > 0) {
  const client = await cycleClient(url, 50);
  await client.run(cycles, 50);
  client.close();
} else {
  await autocannon({ url: url + values.path, connections: 20, amount, headers: { authorization: AUTH } });
}
child.stdin!.end();
await once(child, 'exit');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const file = readdirSync(dir)
  .filter((name) => name.endsWith('.cpuprofile'))
  .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0]!;
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<string, number>();
let totalUs = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const { functionName, url: where, lineNumber } = byNode.get(profile.samples[i]!)!.callFrame;
  const delta = profile.timeDeltas[i] ?? 0;
  totalUs += delta;
  const key = `${functionName || '(anonymous)'} ${where ? `${where.replace(/^file:\/\//, '').replace(process.cwd() + '/', '')}:${lineNumber + 1}` : ''}`.trim();
  selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
}
console.log(`${join(dir, file)}: ${(totalUs / 1e6).toFixed(2)} s sampled; top self time:`);
for (const [key, us] of [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${((us / totalUs) * 100).toFixed(1).padStart(5)}%  ${key}`);
