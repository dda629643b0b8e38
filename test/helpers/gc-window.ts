// The allocation checks of hot paths (a frame ring, the worker's sound player, mix and recorder):
// a loop that should allocate nothing runs while a PerformanceObserver records scavenges, against a
// control run of the same loop that copies each frame (so the window is known to see garbage).
//
// Only scavenges that START while the loop runs count. The loop is synchronous: while it runs no
// other JavaScript runs on this thread, so a scavenge that begins inside it was forced by the loop's
// own allocation. Scavenges after it (the observer's entries arrive a tick late, so the window waits)
// belong to whatever the event loop runs next — on Node 22.15+ and 24, tsx's in-thread module hooks
// walk tsx's disk cache (/tmp/tsx-<uid>, tens of thousands of files on a shared machine) for a second
// or more after start-up, and that walk made the 2–18 "late" scavenges the checks used to report
// there; on Node 20 the same hooks run on a loader thread, another heap (docs/performance.md).
import assert from 'node:assert/strict';
import { constants, performance, PerformanceObserver, type NodeGCPerformanceDetail } from 'node:perf_hooks';
import type { TestContext } from 'node:test';
import v8 from 'node:v8';

/** What one window saw. */
export interface GcWindow {
  /** Scavenges that began while `run` ran: the loop's own garbage. */
  during: number;
  /** Scavenges in the 50 ms after it: other work of this thread (reported, not held against the loop). */
  after: number;
  /** Bytes the young generation grew by across `run`; meaningful when `during` is 0 (a scavenge empties it). */
  youngBytes: number;
}

function youngGenerationUsed(): number {
  let used = 0;
  for (const space of v8.getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space' || space.space_name === 'new_large_object_space') used += space.space_used_size;
  }
  return used;
}

/** Runs `run` once inside a GC window. */
export async function gcWindow(run: () => void): Promise<GcWindow> {
  const starts: number[] = [];
  // Scavenges only: the young generation fills only by allocating, while a major collection may
  // still be finishing an earlier run's garbage (seen on Node 22: 4 late entries after it).
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if ((entry as { detail?: NodeGCPerformanceDetail }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) starts.push(entry.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
  const youngBefore = youngGenerationUsed();
  const began = performance.now();
  run();
  const ended = performance.now();
  const youngBytes = youngGenerationUsed() - youngBefore;
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  const during = starts.filter((start) => start >= began && start <= ended).length;
  return { during, after: starts.length - during, youngBytes };
}

/** Scavenges that began while `run` ran. */
export async function scavengesDuring(run: () => void): Promise<number> {
  return (await gcWindow(run)).during;
}

/**
 * Asserts that `run(false)` makes no garbage while `run(true)` (the control) does, on every Node line
 * the project declares (20, 22, 24). The best of up to eight windows counts (it stops at the first
 * quiet one): until the loop runs as optimised code, lower tiers may box numbers, and on a loaded
 * machine the optimising compiler's thread comes late; the claim is about the steady state.
 */
export async function assertNoScavenges(t: TestContext, run: (allocate: boolean) => void, what: string): Promise<void> {
  let best: GcWindow | undefined;
  for (let i = 0; i < 8 && (best === undefined || best.during > 0); i++) {
    const window = await gcWindow(() => run(false));
    if (best === undefined || window.during < best.during) best = window;
  }
  assert.ok((await scavengesDuring(() => run(true))) >= 1, 'the control loop should have made garbage');
  t.diagnostic(`${best!.during} scavenges while ${what} (${best!.after} after it, not the loop's; young generation +${best!.youngBytes} bytes; Node ${process.versions.node})`);
  assert.ok(best!.during <= 1, `${best!.during} scavenges while nothing should allocate`);
}
