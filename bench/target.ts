// The child-process side of a benchmark: a real Patchbay (no console log, developer mode off, a
// fresh data directory) that prints its URL on stdout and stops when its parent closes stdin —
// exiting normally, so that --cpu-prof can write its profile.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { DeepPartialYaml } from '../src/config/config.ts';

/** Starts the target with `overrides` beneath the benchmark's defaults (deep-merged one level). */
export async function runTarget(overrides: DeepPartialYaml = {}): Promise<void> {
  const { loadConfig } = await import('../src/config/config.ts');
  const { startServer } = await import('../src/server.ts');
  const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-'));
  const config = loadConfig({
    path: null,
    env: {},
    overrides: {
      ...overrides,
      http: { port: 0, ...overrides.http },
      dirs: { data: dataDir },
      ari: { developer_mode: false, ...overrides.ari },
      logging: { console: false, level: 'warn' },
    },
  });
  const server = await startServer(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  process.stdout.write(`${server.url}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void server.stop().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}
