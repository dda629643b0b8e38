// The entry of a media worker thread (started by pool.ts): a MediaWorkerHost fed by the main
// thread's control messages, and a load report once a second (streams, packets, and the
// utilisation of this thread's own event loop, which is what says when a worker is full).
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { MediaWorkerHost } from './worker-host.ts';
import { routeWorkerOutput } from './worker-console.ts';
import type { ToWorker } from './protocol.ts';

const LOAD_REPORT_MS = 1000;
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux everywhere in practice). */
const USER_HZ = 100;

/** CPU seconds this thread used so far (Linux /proc/thread-self), or undefined elsewhere. */
function threadCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'latin1');
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return undefined;
  }
}

const port = parentPort;
if (port) {
  routeWorkerOutput(port);
  // A diagnostic switch for the bench's before/after figures (bench:sip-capacity --skip-decode off), not a setting.
  const skipUnheardAudio = process.env.PATCHBAY_MEDIA_WORKER_SKIP_DECODE !== 'off';
  const host = new MediaWorkerHost((message) => port.postMessage(message), skipUnheardAudio);
  port.on('message', (message: ToWorker) => host.handle(message));
  port.postMessage({ type: 'ready' });
  let lastUtilization = performance.eventLoopUtilization();
  let lastAt = performance.now();
  let lastCpu = threadCpuSeconds();
  const report = setInterval(() => {
    const utilization = performance.eventLoopUtilization(lastUtilization);
    lastUtilization = performance.eventLoopUtilization();
    const now = performance.now();
    const seconds = (now - lastAt) / 1000;
    const cpuNow = threadCpuSeconds();
    const cpu = cpuNow !== undefined && lastCpu !== undefined && seconds > 0 ? (cpuNow - lastCpu) / seconds : -1;
    // The worker's own heap: what its streams hold beside the main thread's (bench/sip-capacity prints both).
    const heap = getHeapStatistics();
    port.postMessage({ type: 'load', load: { ...host.load(seconds, utilization.utilization, cpu), heapUsedBytes: heap.used_heap_size, heapTotalBytes: heap.total_heap_size } });
    lastAt = now;
    lastCpu = cpuNow;
  }, LOAD_REPORT_MS);
  // The report alone must not keep the worker (and the process) alive.
  report.unref();
  port.on('close', () => {
    clearInterval(report);
    host.closeAll();
  });
}
