// Node's timers hold a signed 32-bit delay: beyond 2^31 - 1 ms (24.8 days) setTimeout warns
// (TimeoutOverflowWarning) and fires after 1 ms, so an originate `timeout` of 3,000,000 s or a
// `Wait(3000000)` ended at once. Delays that come from clients or the dialplan pass through here.

export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** A delay setTimeout keeps: at most 24.8 days (longer than any call is allowed to wait), never negative. */
export function timerDelay(ms: number): number {
  if (Number.isNaN(ms) || ms <= 0) return 0;
  return Math.min(ms, MAX_TIMER_DELAY_MS);
}
