// CPU time this process spends on a piece of work, for the checks that guard against super-linear
// work (a regular expression that backtracks, a glob, a hostile dialplan argument): unlike the wall
// clock it does not grow while other processes load the machine, so such a check fails for a
// blow-up in our code, not for a busy CI box.

/** Milliseconds of CPU (user and system, every thread of this process) that `work` used. */
export function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Milliseconds of CPU this process used (every thread) while `work` ran, with its result. */
export async function cpuMsDuring<T>(work: () => Promise<T>): Promise<{ cpuMs: number; result: T }> {
  const before = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(before);
  return { cpuMs: (used.user + used.system) / 1000, result };
}

/**
 * Watches how long the event loop goes without turning: the most CPU (ms) this process used between
 * two consecutive runs of a short timer, that is the longest stretch of work that kept timers (and
 * so requests) waiting. Unlike a request's wall-clock latency it does not grow while other processes
 * load the machine. stop() ends the watch and returns that figure.
 */
export function watchLongestCpuStretch(intervalMs = 10): { stop(): number } {
  let last = process.cpuUsage();
  let longest = 0;
  const measure = (): void => {
    const used = process.cpuUsage(last);
    last = process.cpuUsage();
    longest = Math.max(longest, (used.user + used.system) / 1000);
  };
  const timer = setInterval(measure, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      measure();
      return longest;
    },
  };
}
