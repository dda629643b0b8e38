// What a heap holds more in one snapshot than in another, by constructor (issue 25, "Memory per
// call"): self size and count per name in `after` less `before`, biggest first, and per call
// when --calls says how many calls the difference is made of. Snapshots from
// `node --heapsnapshot-signal=SIGUSR2` (kill -USR2 <pid>) or v8.writeHeapSnapshot.
// Usage: npx tsx bench/heap-snapshot-diff.ts before.heapsnapshot after.heapsnapshot [--calls 200] [--top 40]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sizesByName, type Snapshot } from './heap-snapshot-sizes.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { calls: { type: 'string', default: '1' }, top: { type: 'string', default: '40' } } });
if (positionals.length !== 2) throw new Error('usage: heap-snapshot-diff.ts before.heapsnapshot after.heapsnapshot [--calls N] [--top N]');
const calls = Math.max(1, Number(values.calls) || 1);
const top = Math.min(Math.max(Number(values.top) || 40, 1), 500);



const read = (file: string): Map<string, { count: number; bytes: number }> => sizesByName(JSON.parse(readFileSync(file, 'utf8')) as Snapshot);
const before = read(positionals[0]);
const after = read(positionals[1]);
let total = 0;
const rows = [...after].map(([name, entry]) => {
  const was = before.get(name) ?? { count: 0, bytes: 0 };
  total += entry.bytes - was.bytes;
  return { name, count: (entry.count - was.count) / calls, bytes: (entry.bytes - was.bytes) / calls };
}).sort((a, b) => b.bytes - a.bytes).slice(0, top);
console.log(`self size grown: ${(total / 1024 / 1024).toFixed(1)} MiB, ${(total / calls / 1024).toFixed(1)} KiB per call (${calls} calls)`);
for (const row of rows) console.log(`  ${row.bytes.toFixed(0).padStart(8)} B ${row.count.toFixed(1).padStart(7)} ×  ${row.name.slice(0, 100)}`);
