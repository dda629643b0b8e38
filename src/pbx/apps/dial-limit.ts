// Dial()'s L(x[:y[:z]]): the answered call lasts at most x ms (the callee is then hung up, as S
// does); y ms before the end a warning file plays, again every z ms. As features.c's
// ast_bridge_timelimit reads them: LIMIT_PLAYAUDIO_CALLER (default yes) and LIMIT_PLAYAUDIO_CALLEE
// (default no) say who hears the sounds, LIMIT_WARNING_FILE the warning, LIMIT_CONNECT_FILE a file
// at the start, LIMIT_TIMEOUT_FILE one when the time is up. Without y nor files it is S in ms.
import type { Channel } from '../../core/channels/channel.ts';
import { CAUSE } from '../../core/channels/causes.ts';
import { timerDelay } from '../../util/timer-delay.ts';
import type { PbxServices } from '../application-services.ts';

export interface CallLimit {
  readonly limitMs: number;
  /** When the first warning plays, in ms before the end (0: none). */
  readonly warningMs: number;
  /** How often the warning repeats, in ms (0: once). */
  readonly repeatMs: number;
}

/** L's argument read as app_dial reads it; `invalid` when x is 0 or no number (Dial refuses it). */
export function parseCallLimit(argument: string | undefined): CallLimit | 'invalid' | undefined {
  if (argument === undefined || argument === '') return undefined;
  const [limit, warning, repeat] = argument.split(':').map((part) => Number.parseInt(part.trim(), 10));
  const limitMs = Number.isFinite(limit) && limit! > 0 ? limit! : 0;
  if (limitMs === 0) return 'invalid';
  let warningMs = Number.isFinite(warning) && warning! > 0 ? warning! : 0;
  let repeatMs = Number.isFinite(repeat) && repeat! > 0 ? repeat! : 0;
  // A first warning asked for before the call starts moves later by whole repeats, or is dropped.
  const delta = warningMs - limitMs;
  if (delta > 0) {
    if (repeatMs === 0) warningMs = 0;
    else {
      warningMs -= repeatMs * (1 + Math.floor((delta - 1) / repeatMs));
      if (warningMs < 1) warningMs = repeatMs = 0;
    }
  }
  return { limitMs, warningMs, repeatMs };
}

/** The shortest repeat of the warning Patchbay plays (L's z below it is raised to it). */
const MIN_REPEAT_MS = 1000;

const isTrue = (value: string): boolean => /^(yes|true|y|t|1|on)$/i.test(value.trim());

/**
 * Arms the limit on an answered call: the sounds to whoever LIMIT_PLAYAUDIO_* names, the callee
 * hung up at the end (after LIMIT_TIMEOUT_FILE). Returns the disarm for a call that ended first.
 */
export function armCallLimit(caller: Channel, callee: Channel, services: PbxServices, limit: CallLimit): () => void {
  const variable = (name: string): string | undefined => caller.getVariable(name);
  const toCallerText = variable('LIMIT_PLAYAUDIO_CALLER');
  const toCalleeText = variable('LIMIT_PLAYAUDIO_CALLEE');
  let toCaller = toCallerText === undefined ? true : isTrue(toCallerText);
  const toCallee = toCalleeText === undefined ? false : isTrue(toCalleeText);
  if (!toCaller && !toCallee) toCaller = true;
  const listeners = [...(toCaller ? [caller] : []), ...(toCallee ? [callee] : [])];
  const warningFile = variable('LIMIT_WARNING_FILE') || '';
  const connectFile = variable('LIMIT_CONNECT_FILE') || '';
  const timeoutFile = variable('LIMIT_TIMEOUT_FILE') || '';
  // Two timers at most: the end, and the next warning (a repeat replaces the one that fired).
  let ended = false;
  let warningTimer: NodeJS.Timeout | undefined;
  const later = (ms: number, run: () => void): NodeJS.Timeout => {
    const timer = setTimeout(run, timerDelay(ms));
    timer.unref();
    return timer;
  };
  const play = (file: string): Promise<unknown> => {
    const engine = services.playbacks;
    if (!engine || file === '') return Promise.resolve();
    const plays = listeners
      .filter((channel) => !channel.hangingUp)
      .map((channel) => engine.finished(engine.playOnChannel(channel, { media: [`sound:${file}`], language: channel.language, internal: true })));
    return Promise.all(plays);
  };
  if (limit.warningMs > 0 && warningFile === '') {
    // Asterisk's default warning says the time left (the `timeleft` prompt and the seconds).
    services.log.warn({ channel: caller.name }, 'Dial option L: the spoken time-left warning is not implemented; set LIMIT_WARNING_FILE for a warning');
  }
  void play(connectFile);
  if (limit.warningMs > 0 && warningFile !== '') {
    const warn = (): void => {
      if (ended) return;
      void play(warningFile);
      // At most one warning a second, whatever z says: each is a playback to start.
      if (limit.repeatMs > 0) warningTimer = later(Math.max(limit.repeatMs, MIN_REPEAT_MS), warn);
    };
    warningTimer = later(limit.limitMs - limit.warningMs, warn);
  }
  const endTimer = later(limit.limitMs, () => {
    if (ended) return;
    ended = true;
    void play(timeoutFile).then(() => {
      if (!callee.hangingUp) callee.hangup(CAUSE.normal);
    });
  });
  return () => {
    ended = true;
    clearTimeout(endTimer);
    if (warningTimer) clearTimeout(warningTimer);
  };
}
