// The simplest dialplan applications: Answer, Hangup, NoOp, Wait, Set.
import { CAUSE, REASON_CAUSES, SOFT_HANGUP } from '../../core/channels/causes.ts';
import type { DialplanApplication } from '../application.ts';
import { parseFunctionCall, writeChannelFunction } from '../function-registry.ts';
import { waitOnChannel } from '../../core/channels/wait.ts';
import { InvalidError } from '../../core/errors.ts';
import { defaultHangupCause } from '../hangup-cause.ts';

const seconds = (text: string | undefined, fallback: number): number => {
  const value = Number.parseFloat(text ?? '');
  return Number.isFinite(value) && value >= 0 ? value : fallback;
};

export const answer: DialplanApplication = {
  name: 'Answer',
  synopsis: 'Answers the channel, then waits the given delay in milliseconds',
  async execute(channel, [delay]) {
    channel.answer();
    const delayMs = seconds(delay, 0);
    if (delayMs > 0 && !(await waitOnChannel(channel, delayMs))) return 'stop';
    return 'next';
  },
};

export const hangup: DialplanApplication = {
  name: 'Hangup',
  synopsis: 'Hangs up with a cause (number or name)',
  execute(channel, [cause]) {
    const numeric = Number.parseInt(cause ?? '', 10);
    // Without a cause, the one the channel already has (a callee's busy left by Dial), as in Asterisk.
    const named = cause === undefined || cause.trim() === '' ? undefined : (REASON_CAUSES[cause] ?? CAUSE.normal);
    // Asterisk's Hangup() only sets the cause and flags the channel (no event of its own); the end
    // of the dialplan run announces it, as the one soft APPUNLOAD hang-up request.
    channel.hangup(Number.isInteger(numeric) && numeric > 0 ? numeric : (named ?? defaultHangupCause(channel)), { soft: SOFT_HANGUP.appUnload });
    return 'stop';
  },
};

export const noOp: DialplanApplication = {
  name: 'NoOp',
  synopsis: 'Does nothing (its arguments show in ChannelDialplan events and the log)',
  execute: () => 'next',
};

export const wait: DialplanApplication = {
  name: 'Wait',
  synopsis: 'Waits a number of seconds',
  async execute(channel, [duration]) {
    return (await waitOnChannel(channel, seconds(duration, 0) * 1000)) ? 'next' : 'stop';
  },
};

/** Set(name=value): a variable, or a writable function such as CALLERID(num). `__`/`_` inheritance prefixes are kept as part of the name. */
export const set: DialplanApplication = {
  name: 'Set',
  synopsis: 'Sets a variable or writes a function (CALLERID(num), LOCAL(x), TIMEOUT(digit), ...)',
  execute(channel, _args, services, rawData) {
    const equals = rawData.indexOf('=');
    if (equals <= 0) {
      services.log.warn({ channel: channel.name, data: rawData }, 'Set requires name=value');
      return 'next';
    }
    const name = rawData.slice(0, equals).trim();
    const value = rawData.slice(equals + 1);
    const call = parseFunctionCall(name);
    try {
      if (call) writeChannelFunction(channel, call[0], call[1], value);
      else channel.setVariable(name, value);
    } catch (error) {
      // As Asterisk: a function that refuses the write is logged and the dialplan goes on (and so
      // does a variable refused because the channel holds the most it may).
      if (!(error instanceof InvalidError)) throw error;
      services.log.warn(call ? { channel: channel.name, function: call[0] } : { channel: channel.name, variable: name.slice(0, 64) }, `Set: ${error.message}`);
    }
    return 'next';
  },
};
