// What Dial() runs between a callee's answer and the bridge for options A and U (app_dial after
// wait_for_answer): A(x[:y]) plays x to the callee and y to the caller at once and waits for both;
// U(context[^arg...]) runs `context,s,1(args)` as a subroutine on the callee, whose GOSUB_RESULT
// decides whether the two are bridged (GOSUB_RETVAL is copied to the caller).
import type { Channel } from '../../core/channels/channel.ts';
import type { PbxServices } from '../application-services.ts';
import { resolveGoto } from './goto.ts';

/** A(callee[:caller]): each file played at once to its party; resolves when both ended. */
export async function playAnnouncements(caller: Channel, callee: Channel, services: PbxServices, argument: string): Promise<void> {
  const colon = argument.indexOf(':');
  const calleeFile = (colon < 0 ? argument : argument.slice(0, colon)).trim();
  const callerFile = colon < 0 ? '' : argument.slice(colon + 1).trim();
  const engine = services.playbacks;
  if (!engine) return;
  const plays: Promise<unknown>[] = [];
  for (const [channel, file] of [
    [callee, calleeFile],
    [caller, callerFile],
  ] as const) {
    if (file === '' || channel.hangingUp) continue;
    const played = engine.playOnChannel(channel, { media: [`sound:${file}`], language: channel.language, internal: true });
    plays.push(
      engine.finished(played).then((state) => {
        if (state === 'failed') services.log.error({ channel: channel.name, file }, `error streaming file '${file}' to ${channel === callee ? 'callee' : 'caller'}`);
      }),
    );
  }
  // A party hanging up ends its playback, so neither wait outlives the call.
  await Promise.all(plays);
}

/** What U's subroutine asked for, read from the callee's GOSUB_RESULT. */
export type CalleeGosubOutcome =
  /** No result: the two are bridged. */
  | { readonly kind: 'bridge' }
  /** BUSY, CONGESTION, CHANUNAVAIL: that DIALSTATUS, the callee hung up, the caller goes on. */
  | { readonly kind: 'status'; readonly status: string }
  /** CONTINUE: the callee hung up, the caller goes on. */
  | { readonly kind: 'continue' }
  /** ABORT (or a GOTO that cannot be followed): both end, unless the caller has g. */
  | { readonly kind: 'abort' }
  /** GOTO:destination: the callee hung up, the caller goes on there. */
  | { readonly kind: 'goto'; readonly location: { context: string; exten: string; priority: number } };

/**
 * U(context[^arg1[^arg2...]]): the subroutine `context,s,1(args)` on the callee (app_dial builds
 * that target), then its GOSUB_RESULT read as app_dial reads it.
 */
export async function runCalleeGosub(caller: Channel, callee: Channel, services: PbxServices, argument: string): Promise<CalleeGosubOutcome> {
  if (!services.runSubroutine) {
    services.log.warn({ channel: caller.name }, 'Dial: option U needs subroutines, which this server does not run');
    return { kind: 'bridge' };
  }
  const caret = argument.indexOf('^');
  const context = (caret < 0 ? argument : argument.slice(0, caret)).trim();
  const args = caret < 0 ? undefined : argument.slice(caret + 1).replaceAll('^', ',');
  const ran = await services.runSubroutine(callee, `${context},s,1${args === undefined ? '' : `(${args})`}`);
  if (!ran) return { kind: 'bridge' };
  const result = callee.getVariable('GOSUB_RESULT') ?? '';
  const retval = callee.getVariable('GOSUB_RETVAL');
  if (retval !== undefined && !caller.destroyed) caller.setSystemVariable('GOSUB_RETVAL', retval);
  const word = result.trim().toUpperCase();
  if (word === 'BUSY' || word === 'CONGESTION' || word === 'CHANUNAVAIL') return { kind: 'status', status: word };
  if (word === 'CONTINUE') return { kind: 'continue' };
  if (word === 'ABORT') return { kind: 'abort' };
  if (word.startsWith('GOTO:')) {
    const destination = result.trim().slice(5).replaceAll('^', ',');
    const target = resolveGoto(caller, services, destination);
    if ('error' in target) {
      services.log.warn({ channel: caller.name, destination }, `Dial: GOSUB_RESULT GOTO:${destination} cannot be followed: ${target.error}`);
      return { kind: 'abort' };
    }
    return { kind: 'goto', location: target };
  }
  return { kind: 'bridge' };
}
