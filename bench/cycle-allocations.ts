// Where the originate cycle's garbage comes from (issue 25): the compiled server (dist/) and the
// cycle client (bench/ari-cycle-client.ts) in one process, V8's sampling heap profiler with the
// objects already collected counted too, then bytes per cycle by allocating function and by the
// nearest of the server's own functions up the stack (what is not under one is the client's or
// Node.js's alone).
// Usage: npm run build && npx tsx bench/cycle-allocations.ts [--cycles 3000] [--root dist]
import { Session } from 'node:inspector/promises';
import type { HeapProfiler } from 'node:inspector';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cycleClient } from './ari-cycle-client.ts';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '3000' }, root: { type: 'string', default: 'dist' } } });
const cycles = Math.min(Math.max(Math.floor(Number(values.cycles)) || 0, 100), 100_000);
const root = resolve(values.root!);
const module = (path: string): string => pathToFileURL(join(root, `${path}.js`)).href;
const { loadConfig } = (await import(module('config/config'))) as typeof import('../src/config/config.ts');
const { startServer } = (await import(module('server'))) as typeof import('../src/server.ts');

const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-alloc-'));
const config = loadConfig({
  path: null,
  env: {},
  overrides: { http: { port: 0, bind: '127.0.0.1' }, sip: { port: 0 }, dirs: { data: dataDir }, ari: { developer_mode: false }, logging: { console: false, level: 'warn' } },
});
const server = await startServer(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
const client = await cycleClient(server.url, 50);

type ProfileNode = HeapProfiler.SamplingHeapProfileNode;

try {
  await client.run(500, 50); // warm-up
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  // Collected objects count too: garbage is what this looks for.
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await client.run(cycles, 50);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();

  const name = ({ functionName, url, lineNumber }: ProfileNode['callFrame']): string =>
    `${functionName || '(anonymous)'} ${url.replace(/^file:\/\//, '').replace(`${root}/`, 'dist/').replace(/.*node_modules\//, '')}:${lineNumber + 1}`;
  const bySelf = new Map<string, number>();
  const byServerFunction = new Map<string, number>();
  let total = 0;
  let server = 0;
  const walk = (node: ProfileNode, nearestServer: string | undefined): void => {
    const here = name(node.callFrame);
    const serverFunction = node.callFrame.url.includes(root) ? here : nearestServer;
    if (node.selfSize > 0) {
      total += node.selfSize;
      bySelf.set(here, (bySelf.get(here) ?? 0) + node.selfSize);
      if (serverFunction) {
        server += node.selfSize;
        byServerFunction.set(serverFunction, (byServerFunction.get(serverFunction) ?? 0) + node.selfSize);
      }
    }
    for (const child of node.children) walk(child, serverFunction);
  };
  walk(profile.head, undefined);
  const kb = (bytes: number): string => `${(bytes / cycles / 1024).toFixed(1)} KB`;
  const top = (map: Map<string, number>): void => {
    for (const [key, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${String(Math.round(bytes / cycles)).padStart(7)} B  ${key}`);
  };
  console.log(`${cycles} cycles: ${kb(total)} allocated per cycle in all (server and client), ${kb(server)} under the server's own functions`);
  console.log('\nby allocating function, bytes per cycle:');
  top(bySelf);
  console.log("\nby the nearest server function up the stack, bytes per cycle:");
  top(byServerFunction);
} finally {
  client.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
