// Issue 21 item 1: a Local loop that widens (`Dial(Local/x&Local/x)` at each level) is bounded by
// local_max_descendants, the server answers /health while it runs and stops promptly; max_channels
// left at 0 is an automatic limit derived from the open-file limit and the heap.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { DeepPartialYaml } from '../../src/config/config.ts';
import { automaticChannelLimit, openFileLimit } from '../../src/util/resource-limits.ts';
import { cpuMsDuring, watchLongestCpuStretch } from '../helpers/cpu-time.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const DIALPLAN = `
[default]
exten => loop2,1,Dial(Local/loop2@default&Local/loop2@default)
exten => wait,1,Wait(600)
`;

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function start(overrides: DeepPartialYaml = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-loop-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  return startTestServer({ dialplan: { file: join(dir, 'extensions.conf') }, logging: { console: false, level: 'info' }, ...overrides });
}

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a widening Local loop', () => {
  test('makes at most local_max_descendants pairs, ends by itself, and /health answers meanwhile', async (t) => {
    const server = await start();
    assert.equal(server.config.localMaxDescendants, 500, 'the default');
    let created = 0;
    let peak = 0;
    server.core.channels.onCreated(() => {
      created++;
      peak = Math.max(peak, server.core.channels.size);
    });
    const origination = await server.ari('/channels?endpoint=Local/loop2@default&extension=wait&context=default', { method: 'POST' });
    assert.equal(origination.status, 200);
    // Responsiveness is counted in CPU: the longest stretch the event loop worked without turning
    // (what would keep /health waiting on an idle machine), which other processes' load does not
    // lengthen; /health's wall-clock latency is a diagnostic.
    const watch = watchLongestCpuStretch();
    const latencies: number[] = [];
    const began = performance.now();
    while (performance.now() - began < 60_000 && (created === 0 || server.core.channels.size > 0)) {
      const asked = performance.now();
      const health = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(30_000) });
      assert.equal(health.status, 200);
      await health.text();
      latencies.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const tookMs = performance.now() - began;
    await until('the loop to end', () => server.core.channels.size === 0, 30_000);
    const stretch = watch.stop();
    // 500 pairs, and the originated pair is a chain of its own making (its first request had no requestor).
    assert.ok(created <= 2 * 500 + 2, `made ${created} channels`);
    assert.ok(latencies.length > 0, '/health answered while the loop ran');
    assert.ok(stretch < 2000, `the event loop worked ${stretch.toFixed(0)} ms of CPU without turning`);
    const worst = Math.max(...latencies);
    t.diagnostic(`widening loop: ${created} channels made (peak ${peak}), gone after ${tookMs.toFixed(0)} ms; /health worst ${worst.toFixed(0)} ms over ${latencies.length} asks; longest stretch ${stretch.toFixed(0)} ms of CPU`);
    const stopping = performance.now();
    await server.stop();
    t.diagnostic(`stopped in ${(performance.now() - stopping).toFixed(0)} ms`);
  });

  test('stop() while a loop runs is prompt', async (t) => {
    const server = await start({ local_max_descendants: 0, max_channels: 3000 });
    const origination = await server.ari('/channels?endpoint=Local/loop2@default&extension=wait&context=default', { method: 'POST' });
    assert.equal(origination.status, 200);
    await until('the loop to grow', () => server.core.channels.size > 500, 30_000);
    const stopping = performance.now();
    // Prompt in work done (CPU), which a loaded machine does not inflate; the wall clock is a diagnostic.
    const { cpuMs } = await cpuMsDuring(() => server.stop());
    const tookMs = performance.now() - stopping;
    assert.equal(server.core.channels.size, 0);
    assert.ok(cpuMs < 10_000, `stop took ${cpuMs.toFixed(0)} ms of CPU`);
    t.diagnostic(`stopped a running loop in ${tookMs.toFixed(0)} ms (${cpuMs.toFixed(0)} ms of CPU)`);
  });
});

describe('the automatic max_channels', () => {
  test('is derived from the open-file limit and the heap, and applies when max_channels is 0', async () => {
    assert.equal(automaticChannelLimit(20_000, 64 * 1024 ** 3), 4936);
    assert.equal(automaticChannelLimit(1_048_576, 2 * 1024 ** 3), 4096);
    assert.equal(automaticChannelLimit(300, 1024 ** 3), 64, 'never below 64');
    assert.equal(automaticChannelLimit(Number.MAX_SAFE_INTEGER, 2 ** 50), 100_000, 'never above 100,000');
    assert.equal(openFileLimit('Max open files            1024                 4096                 files\n'), 1024);
    const server = await start();
    try {
      assert.equal(server.config.maxChannels, 0);
      const limit = automaticChannelLimit();
      assert.ok(limit >= 64 && limit < 100_000);
      const refused = [];
      for (let i = 0; i < limit + 1; i++) {
        try {
          server.core.channels.request('Local/wait@default');
        } catch (error) {
          refused.push(error);
        }
      }
      assert.ok(refused.length > 0, `more than ${limit} channels were refused`);
      assert.match(String(refused[0]), /Maximum number of channels/);
    } finally {
      await server.stop();
    }
  });
});
