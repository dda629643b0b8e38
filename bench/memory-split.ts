// Splits a Patchbay server's memory as its GET /metrics tells it (issue 25, "Memory per call"): the
// main thread's V8 heap (used and reserved), what it holds outside the heap (ArrayBuffers, Buffers,
// SharedArrayBuffers: prom-client's nodejs_external_memory_bytes) and each media worker's own heap
// (reported by the worker itself: another isolate's heap cannot be read from the main thread).
// RSS less all of these is native memory: the isolates' baselines, code, libuv, malloc's slack.
import type { MetricsSnapshot } from './prometheus-text.ts';

export interface MemorySplit {
  readonly mainHeapUsedMiB: number;
  readonly mainHeapTotalMiB: number;
  readonly externalMiB: number;
  readonly workersHeapUsedMiB: number;
  readonly workersHeapTotalMiB: number;
}

const MiB = 1024 * 1024;

export function memorySplit(metrics: MetricsSnapshot): MemorySplit {
  return {
    mainHeapUsedMiB: metrics.value('patchbay_nodejs_heap_size_used_bytes') / MiB,
    mainHeapTotalMiB: metrics.value('patchbay_nodejs_heap_size_total_bytes') / MiB,
    externalMiB: metrics.value('patchbay_nodejs_external_memory_bytes') / MiB,
    workersHeapUsedMiB: (metrics.sum('patchbay_media_worker_heap_used_bytes') ?? 0) / MiB,
    workersHeapTotalMiB: (metrics.sum('patchbay_media_worker_heap_total_bytes') ?? 0) / MiB,
  };
}

/** One line: each part at the step, and its growth per call over the idle server, KiB. */
export function describeMemorySplit(now: MemorySplit, idle: MemorySplit, calls: number): string {
  const part = (label: string, key: keyof MemorySplit): string => `${label} ${now[key].toFixed(0)} MiB (${(((now[key] - idle[key]) * 1024) / calls).toFixed(0)} KiB/call)`;
  return [
    part('main heap used', 'mainHeapUsedMiB'),
    part('reserved', 'mainHeapTotalMiB'),
    part('external', 'externalMiB'),
    part('workers\' heaps used', 'workersHeapUsedMiB'),
    part('reserved', 'workersHeapTotalMiB'),
  ].join(', ');
}
