// Sends a string of DTMF digits to a channel's far end on timers, as Asterisk's ast_dtmf_stream:
// a pause before, each digit lasting `duration` followed by `between`, a pause after. Sequences
// for one channel play one after another; a hangup abandons what is left.
import type { Channel } from './channel.ts';
import { waitOnChannel } from './wait.ts';

export interface DtmfTiming {
  /** Milliseconds before the first digit. */
  readonly before?: number;
  /** Milliseconds after each digit; 0 or absent means 100. */
  readonly between?: number;
  /** Milliseconds each digit lasts; 0 or absent means 100. */
  readonly duration?: number;
  /** Milliseconds after the last digit before the sequence counts as done. */
  readonly after?: number;
}

export const DEFAULT_DTMF_BETWEEN_MS = 100;
export const DEFAULT_DTMF_DURATION_MS = 100;
/** `,` and `w` pause half a second, `W` a second. */
const PAUSES: Readonly<Record<string, number>> = { ',': 500, w: 500, W: 1000 };
const DIGITS = /^[0-9*#A-D]$/;

export type DtmfStep = { readonly wait: number } | { readonly digit: string; readonly duration: number };

/** The timeline of a digit string: waits and digits. Characters that are not DTMF are skipped. */
export function dtmfSteps(digits: string, timing: DtmfTiming = {}): DtmfStep[] {
  const between = timing.between && timing.between > 0 ? timing.between : DEFAULT_DTMF_BETWEEN_MS;
  const duration = timing.duration && timing.duration > 0 ? timing.duration : DEFAULT_DTMF_DURATION_MS;
  const steps: DtmfStep[] = [];
  if (timing.before && timing.before > 0) steps.push({ wait: timing.before });
  for (const character of digits) {
    const pause = PAUSES[character];
    if (pause !== undefined) {
      steps.push({ wait: pause });
      continue;
    }
    const digit = character.toUpperCase();
    if (!DIGITS.test(digit)) continue;
    // The far end hears the digit for `duration`; it is reported when the digit ends.
    steps.push({ wait: duration }, { digit, duration }, { wait: between });
  }
  if (timing.after && timing.after > 0) steps.push({ wait: timing.after });
  return steps;
}

async function play(channel: Channel, steps: readonly DtmfStep[]): Promise<void> {
  // Digits towards a channel that has not answered travel as early media, as in Asterisk.
  if (channel.state !== 'Up' && !channel.hangingUp) channel.indicate('progress');
  for (const step of steps) {
    if (channel.hangingUp) return;
    if ('wait' in step) {
      if (!(await waitOnChannel(channel, step.wait))) return;
    } else {
      channel.driver.sendDigit(step.digit, step.duration);
    }
  }
}

const queues = new WeakMap<Channel, Promise<void>>();

/**
 * Queues `digits` for the channel's far end and returns at once; the promise settles when the
 * sequence has been played (or abandoned because the channel hung up).
 */
export function sendDtmf(channel: Channel, digits: string, timing: DtmfTiming = {}): Promise<void> {
  const steps = dtmfSteps(digits, timing);
  const previous = queues.get(channel) ?? Promise.resolve();
  // A sequence that failed does not hold up the next one.
  const done = previous.catch(() => undefined).then(() => play(channel, steps));
  queues.set(channel, done);
  done
    .finally(() => {
      if (queues.get(channel) === done) queues.delete(channel);
    })
    .catch(() => undefined);
  return done;
}
