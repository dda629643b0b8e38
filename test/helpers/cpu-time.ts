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
