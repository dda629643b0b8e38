// Metric names: Patchbay's own start with patchbay_, and the Node.js process metrics prom-client
// provides keep their names under that prefix once (patchbay_process_cpu_seconds_total, not the
// doubled patchbay_process_process_… they had).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

test('every metric name starts with patchbay_ once; the process and Node.js metrics are there', async () => {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const names = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!));
  assert.ok(names.size > 20, `${names.size} metrics`);
  for (const name of names) {
    assert.match(name, /^patchbay_/, name);
    assert.doesNotMatch(name, /process_process_|patchbay_.*patchbay_|nodejs_nodejs_/, name);
  }
  for (const expected of ['patchbay_process_cpu_seconds_total', 'patchbay_process_resident_memory_bytes', 'patchbay_nodejs_eventloop_lag_seconds', 'patchbay_nodejs_heap_size_used_bytes']) {
    assert.ok(names.has(expected), expected);
  }
});
