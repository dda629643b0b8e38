// CPU and memory of another process (a benchmark's target), from /proc: user+sys seconds and RSS.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** user+sys CPU seconds of a process so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3; utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** user+sys CPU seconds of one thread of a process so far (the main thread's id is the process's). */
export function threadCpuSeconds(pid: number, tid = pid): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** CPU of one thread (by default the main one) in % of one core since construction: a server's main thread apart from its media workers. */
export class ThreadCpuMeter {
  readonly #pid: number;
  readonly #tid: number;
  readonly #cpu0: number;
  readonly #t0 = performance.now();
  constructor(pid: number, tid = pid) {
    this.#pid = pid;
    this.#tid = tid;
    this.#cpu0 = threadCpuSeconds(pid, tid);
  }
  percent(): number {
    const wall = (performance.now() - this.#t0) / 1000;
    return wall > 0 ? ((threadCpuSeconds(this.#pid, this.#tid) - this.#cpu0) / wall) * 100 : 0;
  }
}

export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
}

export class CpuMeter {
  readonly #pid: number;
  readonly #cpu0: number;
  readonly #t0 = performance.now();
  constructor(pid: number) {
    this.#pid = pid;
    this.#cpu0 = cpuSeconds(pid);
  }
  /** CPU in % of one core since construction. */
  percent(): number {
    const wall = (performance.now() - this.#t0) / 1000;
    return wall > 0 ? ((cpuSeconds(this.#pid) - this.#cpu0) / wall) * 100 : 0;
  }
}


/**
 * Seconds the process's main thread has spent runnable but waiting for a core (/proc/<pid>/schedstat,
 * second field): on a shared machine, the time other processes took from it. NaN where unreadable.
 */
export function runQueueWaitSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ');
    return Number(fields[1]) / 1e9;
  } catch {
    return NaN;
  }
}

export class RunQueueMeter {
  readonly #pid: number;
  readonly #wait0: number;
  readonly #t0 = performance.now();
  constructor(pid: number) {
    this.#pid = pid;
    this.#wait0 = runQueueWaitSeconds(pid);
  }
  /** Time the main thread waited for a core since construction, in % of the wall time. */
  percent(): number {
    const wall = (performance.now() - this.#t0) / 1000;
    return wall > 0 ? ((runQueueWaitSeconds(this.#pid) - this.#wait0) / wall) * 100 : NaN;
  }
}
