// What the allocation benches (ping-allocations.ts, cycle-allocations.ts) share: the compiled server
// (dist/, or --root) started quiet in this process, V8's sampling heap profiler around a workload
// with the objects already collected counted too (garbage is what they look for), and the profile
// attributed to the allocating functions and to the nearest of the server's own functions up the stack
// (what is not under one is the client's or Node.js's alone).
import type { HeapProfiler } from 'node:inspector';
import { Session } from 'node:inspector/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

type ProfileNode = HeapProfiler.SamplingHeapProfileNode;

/** The compiled server on ephemeral loopback ports, logging nothing, with a data directory of its own. */
export interface QuietServer {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startQuietServer(root: string): Promise<QuietServer> {
  const module = (name: string): string => pathToFileURL(join(root, `${name}.js`)).href;
  const { loadConfig } = (await import(module('config/config'))) as typeof import('../src/config/config.ts');
  const { startServer } = (await import(module('server'))) as typeof import('../src/server.ts');
  const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-alloc-'));
  const config = loadConfig({
    path: null,
    env: {},
    overrides: { http: { port: 0, bind: '127.0.0.1' }, sip: { port: 0 }, dirs: { data: dataDir }, ari: { developer_mode: false }, logging: { console: false, level: 'warn' } },
  });
  const server = await startServer(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  return {
    url: server.url,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Bytes allocated while `workload` ran, by allocating function and by the nearest server function. */
export interface Allocations {
  /** Everything sampled (server, client, Node.js). */
  readonly total: number;
  /** What was allocated under one of the server's own functions. */
  readonly underServer: number;
  readonly bySelf: ReadonlyMap<string, number>;
  readonly byServerFunction: ReadonlyMap<string, number>;
  /** What V8's builtins (`Map#set`, `Array#push`, …: no script of their own) allocated, by builtin and the server function that called it. */
  readonly byBuiltinCaller: ReadonlyMap<string, number>;
}

/**
 * Runs `workload` under the sampling heap profiler (one sample per `samplingInterval` bytes) and attributes what it allocated.
 * `survivors`: only what outlived the young generation (promoted: still held, or collected later by a
 * mark-compact), which is what a scavenge copies and the old space must collect.
 */
export async function profileAllocations(root: string, samplingInterval: number, workload: () => Promise<unknown>, survivors = false): Promise<Allocations> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !survivors });
  await workload();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  return attribute(profile.head, root);
}

function attribute(head: ProfileNode, root: string): Allocations {
  const name = ({ functionName, url, lineNumber }: ProfileNode['callFrame']): string =>
    `${functionName || '(anonymous)'} ${url.replace(/^file:\/\//, '').replace(`${root}/`, 'dist/').replace(/.*node_modules\//, '')}:${lineNumber + 1}`;
  const bySelf = new Map<string, number>();
  const byServerFunction = new Map<string, number>();
  const byBuiltinCaller = new Map<string, number>();
  let total = 0;
  let underServer = 0;
  const walk = (node: ProfileNode, nearestServer: string | undefined): void => {
    const here = name(node.callFrame);
    const serverFunction = node.callFrame.url.includes(root) ? here : nearestServer;
    if (node.selfSize > 0) {
      total += node.selfSize;
      bySelf.set(here, (bySelf.get(here) ?? 0) + node.selfSize);
      if (serverFunction) {
        underServer += node.selfSize;
        byServerFunction.set(serverFunction, (byServerFunction.get(serverFunction) ?? 0) + node.selfSize);
        if (node.callFrame.url === '') {
          const site = `${here} <- ${serverFunction}`;
          byBuiltinCaller.set(site, (byBuiltinCaller.get(site) ?? 0) + node.selfSize);
        }
      }
    }
    for (const child of node.children) walk(child, serverFunction);
  };
  walk(head, undefined);
  return { total, underServer, bySelf, byServerFunction, byBuiltinCaller };
}

/** The `count` largest entries, in bytes per `per` (a ping, a cycle), right-aligned to `width`. */
export function printLargest(map: ReadonlyMap<string, number>, per: number, count: number, width: number): void {
  for (const [key, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, count)) console.log(`${String(Math.round(bytes / per)).padStart(width)} B  ${key}`);
}
