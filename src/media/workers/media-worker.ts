// The entry of a media worker thread (started by pool.ts): a MediaWorkerHost fed by the main
// thread's control messages, and a load report once a second (streams, packets, and the
// utilisation of this thread's own event loop, which is what says when a worker is full).
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { MediaWorkerHost } from './worker-host.ts';
import type { ToWorker } from './protocol.ts';

const LOAD_REPORT_MS = 1000;

const port = parentPort;
if (port) {
  const host = new MediaWorkerHost((message) => port.postMessage(message));
  port.on('message', (message: ToWorker) => host.handle(message));
  let lastUtilization = performance.eventLoopUtilization();
  let lastAt = performance.now();
  const report = setInterval(() => {
    const utilization = performance.eventLoopUtilization(lastUtilization);
    lastUtilization = performance.eventLoopUtilization();
    const now = performance.now();
    port.postMessage({ type: 'load', load: host.load((now - lastAt) / 1000, utilization.utilization) });
    lastAt = now;
  }, LOAD_REPORT_MS);
  // The report alone must not keep the worker (and the process) alive.
  report.unref();
  port.on('close', () => {
    clearInterval(report);
    host.closeAll();
  });
}
