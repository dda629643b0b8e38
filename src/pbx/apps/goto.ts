// Goto([[context,]exten,]priority) and GotoIf(condition?[true]:[false]): moving a channel within
// the dialplan, as pbx_builtin_goto and pbx_builtin_gotoif do.
import type { Channel } from '../../core/channels/channel.ts';
import { splitArgs } from '../../dialplan/args.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { PbxServices } from '../application-services.ts';

/** Where a goto string leads, or a reason it leads nowhere. */
export type GotoTarget = { context: string; exten: string; priority: number } | { error: string };

/**
 * Resolves `[[context,]exten,]priority` against the channel's location, as pbx_parseable_goto:
 * the priority is a number, `+n`/`-n` relative to the current one, or a label; an empty context
 * or extension keeps the current one. The target must exist in the dialplan.
 */
export function resolveGoto(channel: Channel, services: PbxServices, text: string): GotoTarget {
  const parts = splitArgs(text);
  if (parts.length > 3) return { error: `too many arguments: ${text}` };
  const [context, exten, priority] =
    parts.length === 1 ? [undefined, undefined, parts[0]] : parts.length === 2 ? [undefined, parts[0], parts[1]] : parts;
  const target = {
    context: context?.trim() || channel.location.context,
    exten: exten?.trim() || channel.location.exten,
  };
  let wanted = (priority ?? '').trim();
  if (wanted === '') return { error: 'a priority is required' };
  const dialplan = services.dialplan();
  const callerId = channel.caller.number || undefined;
  let mode = 0;
  if (wanted.startsWith('+')) mode = 1;
  else if (wanted.startsWith('-')) mode = -1;
  if (mode !== 0) wanted = wanted.slice(1);
  let number: number;
  if (/^\d+$/.test(wanted)) {
    number = Number(wanted);
    if (mode !== 0) number = channel.location.priority + mode * number;
  } else {
    const labelled = dialplan.findLabel(target.context, target.exten, wanted, callerId);
    if (labelled === undefined) return { error: `no label ${wanted} in ${target.exten}@${target.context}` };
    number = labelled;
  }
  if (!dialplan.find(target.context, target.exten, number, callerId)) {
    return { error: `${target.context},${target.exten},${number} does not exist` };
  }
  return { ...target, priority: number };
}

/** Moves the channel to `text`'s target, or ends the call when there is none (Asterisk's -1). */
function jump(channel: Channel, services: PbxServices, app: string, text: string): AppOutcome {
  const target = resolveGoto(channel, services, text);
  if ('error' in target) {
    services.log.warn({ channel: channel.name, data: text }, `${app}: cannot go to ${text}: ${target.error}; hanging up`);
    return 'stop';
  }
  channel.setLocation(target);
  return 'jump';
}

export const goto: DialplanApplication = {
  name: 'Goto',
  synopsis: 'Jumps to [[context,]extension,]priority',
  execute(channel, _args, services, rawData) {
    if (rawData.trim() === '') {
      services.log.warn({ channel: channel.name }, 'Goto requires an argument ([[context,]extension,]priority)');
      return 'stop';
    }
    return jump(channel, services, 'Goto', rawData);
  },
};

/**
 * pbx_checkcondition: an empty condition is false; one that starts like an integer (`sscanf %d`)
 * is that integer's truth; any other text is true.
 */
export function isTrueCondition(condition: string): boolean {
  if (condition.trim() === '') return false;
  const number = /^\s*[+-]?\d+/.exec(condition);
  return number ? Number.parseInt(number[0], 10) !== 0 : true;
}

export const gotoIf: DialplanApplication = {
  name: 'GotoIf',
  synopsis: 'Jumps to one of two labels depending on a condition',
  execute(channel, _args, services, rawData) {
    const question = rawData.indexOf('?');
    if (question < 0) {
      services.log.warn({ channel: channel.name, data: rawData }, 'GotoIf requires an argument (condition?label1:label2)');
      return 'stop';
    }
    const branches = rawData.slice(question + 1);
    const colon = branches.indexOf(':');
    const whenTrue = colon < 0 ? branches : branches.slice(0, colon);
    const whenFalse = colon < 0 ? '' : branches.slice(colon + 1);
    const branch = isTrueCondition(rawData.slice(0, question)) ? whenTrue : whenFalse;
    // No destination for the outcome: carry on at the next priority.
    if (branch.trim() === '') return 'next';
    return jump(channel, services, 'GotoIf', branch);
  },
};
