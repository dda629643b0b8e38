// What Dial() does between a callee's answer and the bridge, and during it, for options D and S
// (app_dial after wait_for_answer): D's digits go to the callee, then to the caller, 250 ms apart,
// before the two are connected; S(x) hangs the callee up x seconds after it answered.
import type { Channel } from '../../core/channels/channel.ts';
import { CAUSE } from '../../core/channels/causes.ts';
import { sendDtmf } from '../../core/channels/dtmf-sender.ts';
import { timerDelay } from '../../util/timer-delay.ts';

/** app_dial streams D's digits this far apart (ast_dtmf_stream's `between`). */
export const DIAL_DTMF_BETWEEN_MS = 250;

/** D([called][:calling][:progress]): the digits of each part (empty: none). */
export interface DialDigits {
  readonly called: string;
  readonly calling: string;
  readonly progress: string;
}

/** DTMF digits only: a peer's dialplan may put anything in D(), and only these can be sent. */
const onlyDigits = (text: string | undefined): string => (text ?? '').replace(/[^0-9A-Da-dwW*#]/g, '').slice(0, 64);

export function parseDialDigits(argument: string | undefined): DialDigits {
  const [called, calling, progress] = (argument ?? '').split(':');
  return { called: onlyDigits(called), calling: onlyDigits(calling), progress: onlyDigits(progress) };
}

/**
 * The answered pair's digits before the bridge, as app_dial sends them (the callee's first);
 * returns when both were played or a party hung up.
 */
export async function sendAnswerDigits(caller: Channel, callee: Channel, digits: DialDigits): Promise<void> {
  if (digits.called !== '' && !callee.hangingUp) await sendDtmf(callee, digits.called, { between: DIAL_DTMF_BETWEEN_MS });
  if (digits.calling !== '' && !caller.hangingUp && !callee.hangingUp) await sendDtmf(caller, digits.calling, { between: DIAL_DTMF_BETWEEN_MS });
}

/**
 * S(x)'s limit in milliseconds: whole seconds, as app_dial reads them (atoi); `invalid` for 0 or
 * no number (app_dial refuses the Dial), undefined without the option.
 */
export function durationStop(argument: string | undefined): number | 'invalid' | undefined {
  if (argument === undefined || argument === '') return undefined;
  const seconds = Number.parseInt(argument.trim(), 10);
  if (!Number.isFinite(seconds) || seconds <= 0) return 'invalid';
  return Math.min(seconds, 24 * 3600 * 365) * 1000;
}

/**
 * Hangs the callee up `ms` after now (app_dial sets its absolute hang-up time at the answer: the
 * call ends with normal clearing); returns the disarm for when the call ended first.
 */
export function armDurationStop(callee: Channel, ms: number): () => void {
  const timer = setTimeout(() => {
    if (!callee.hangingUp) callee.hangup(CAUSE.normal);
  }, timerDelay(ms));
  timer.unref();
  return () => clearTimeout(timer);
}
