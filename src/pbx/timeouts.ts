// TIMEOUT(digit|response|absolute): the per-channel timeouts of the dialplan, as the function of
// the same name reads and writes them. `digit` is the wait between digits of an extension being
// dialed (default 5 s), `response` the wait for a first digit in WaitExten/Read (default 10 s),
// `absolute` a limit on the whole call, counted from when it is set (0 clears it); when it expires
// the channel goes to the `T` extension if its context has one, else it hangs up.
import type { Channel } from '../core/channels/channel.ts';
import { InvalidError } from '../core/errors.ts';
import { timerDelay } from '../util/timer-delay.ts';

export const DEFAULT_DIGIT_TIMEOUT_MS = 5000;
export const DEFAULT_RESPONSE_TIMEOUT_MS = 10000;
/** The longest timeout accepted (a day); a larger one is clamped so a timer cannot overflow. */
const MAX_TIMEOUT_MS = 24 * 3600 * 1000;

interface ChannelTimeouts {
  digitMs: number;
  responseMs: number;
  absoluteMs: number;
  absoluteTimer: NodeJS.Timeout | undefined;
  /** The hangup listener that clears the timer; replaced, not added to, when the timeout is set again. */
  clearOnHangup: (() => void) | undefined;
}

const timeouts = new WeakMap<Channel, ChannelTimeouts>();

function of(channel: Channel): ChannelTimeouts {
  let entry = timeouts.get(channel);
  if (!entry) {
    entry = { digitMs: DEFAULT_DIGIT_TIMEOUT_MS, responseMs: DEFAULT_RESPONSE_TIMEOUT_MS, absoluteMs: 0, absoluteTimer: undefined, clearOnHangup: undefined };
    timeouts.set(channel, entry);
  }
  return entry;
}

export function digitTimeoutMs(channel: Channel): number {
  return timeouts.get(channel)?.digitMs ?? DEFAULT_DIGIT_TIMEOUT_MS;
}

export function responseTimeoutMs(channel: Channel): number {
  return timeouts.get(channel)?.responseMs ?? DEFAULT_RESPONSE_TIMEOUT_MS;
}

const formatSeconds = (ms: number): string => String(Number((ms / 1000).toFixed(3)));

/** Reads TIMEOUT(kind) in seconds; undefined for an unknown kind. */
export function readTimeout(channel: Channel, kind: string): string | undefined {
  const entry = timeouts.get(channel);
  switch (kind.trim().toLowerCase()) {
    case 'digit':
    case 'd':
      return formatSeconds(entry?.digitMs ?? DEFAULT_DIGIT_TIMEOUT_MS);
    case 'response':
    case 'r':
      return formatSeconds(entry?.responseMs ?? DEFAULT_RESPONSE_TIMEOUT_MS);
    case 'absolute':
    case 'a':
      return formatSeconds(entry?.absoluteMs ?? 0);
    default:
      return undefined;
  }
}

/**
 * Writes TIMEOUT(kind)=seconds. `onAbsolute` is what happens when an absolute timeout expires
 * (the executor decides between `T` and hanging up).
 */
export function writeTimeout(channel: Channel, kind: string, value: string, onAbsolute: (channel: Channel) => void): void {
  const seconds = Number.parseFloat(value);
  if (!Number.isFinite(seconds) || seconds < 0) throw new InvalidError(`TIMEOUT(${kind}) needs a number of seconds, not '${value}'`);
  const ms = Math.min(Math.round(seconds * 1000), MAX_TIMEOUT_MS);
  const entry = of(channel);
  switch (kind.trim().toLowerCase()) {
    case 'digit':
    case 'd':
      entry.digitMs = ms;
      return;
    case 'response':
    case 'r':
      entry.responseMs = ms;
      return;
    case 'absolute':
    case 'a':
      clearTimeout(entry.absoluteTimer);
      if (entry.clearOnHangup) channel.off('hangup', entry.clearOnHangup);
      entry.absoluteTimer = undefined;
      entry.clearOnHangup = undefined;
      entry.absoluteMs = ms;
      if (ms > 0 && !channel.hangingUp) {
        const clear = (): void => clearTimeout(timer);
        const timer = setTimeout(() => {
          entry.absoluteTimer = undefined;
          entry.absoluteMs = 0;
          channel.off('hangup', clear);
          entry.clearOnHangup = undefined;
          onAbsolute(channel);
        }, timerDelay(ms));
        channel.once('hangup', clear);
        entry.absoluteTimer = timer;
        entry.clearOnHangup = clear;
      }
      return;
    default:
      throw new InvalidError(`Unknown TIMEOUT type '${kind}' (digit, response or absolute)`);
  }
}
