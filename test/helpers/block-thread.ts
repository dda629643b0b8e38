// The stall the stall tests make: this thread runs nothing else (no timer, no socket read) for at
// least `ms`, and on while `stillBlocked` says so — a worker thread's progress read from shared
// memory, so that machine load cannot end the stall before the other side did its part.
export function blockThread(ms: number, stillBlocked: () => boolean = () => false): void {
  const until = performance.now() + ms;
  while (performance.now() < until || stillBlocked()) {
    // Busy on purpose.
  }
}
