// Gosub([[context,]exten,]priority[(arg1[,...][,argN])]), GosubIf(cond?labeliftrue[:labeliffalse]),
// Return([value]) and StackPop(): subroutines as app_stack runs them. Arguments arrive as ${ARG1}..
// and, with LOCAL() variables, are restored when the subroutine returns; Return's value is left
// in ${GOSUB_RETVAL}. A destination that does not exist, a Return without a Gosub, or a stack
// deeper than MAX_GOSUB_DEPTH end the call, as in Asterisk.
import type { Channel } from '../../core/channels/channel.ts';
import { splitArgs } from '../../dialplan/args.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import { MAX_GOSUB_ARGS, popFrame, pushFrame } from '../gosub-stack.ts';
import type { PbxServices } from '../application-services.ts';
import { splitBranches } from './conditional.ts';
import { isTrueCondition, resolveGoto } from './goto.ts';

/** Splits `target(args)` into the goto string and its arguments. */
export function splitTarget(text: string): { target: string; args: string[] } {
  const open = text.indexOf('(');
  if (open < 0) return { target: text.trim(), args: [] };
  const close = text.lastIndexOf(')');
  const inside = close > open ? text.slice(open + 1, close) : text.slice(open + 1);
  return { target: text.slice(0, open).trim(), args: splitArgs(inside).slice(0, MAX_GOSUB_ARGS) };
}

function gosubTo(channel: Channel, services: PbxServices, app: string, text: string): AppOutcome {
  const { target, args } = splitTarget(text);
  const destination = resolveGoto(channel, services, target);
  if ('error' in destination) {
    services.log.warn({ channel: channel.name }, `${app}: attempt to reach a non-existent destination (${target}): ${destination.error}; hanging up`);
    return 'stop';
  }
  const here = channel.location;
  try {
    pushFrame(channel, { context: here.context, exten: here.exten, priority: here.priority + 1 }, args);
  } catch (error) {
    services.log.warn({ channel: channel.name }, `${app}: ${(error as Error).message}; hanging up`);
    return 'stop';
  }
  channel.setLocation(destination);
  return 'jump';
}

export const gosub: DialplanApplication = {
  name: 'Gosub',
  synopsis: 'Jumps to a subroutine with arguments (${ARGn}); Return comes back to the next priority',
  execute(channel, _args, services, rawData) {
    if (rawData.trim() === '') {
      services.log.warn({ channel: channel.name }, 'Gosub requires an argument: Gosub([[context,]exten,]priority[(arg1[,...][,argN])])');
      return 'stop';
    }
    return gosubTo(channel, services, 'Gosub', rawData);
  },
};

export const gosubIf: DialplanApplication = {
  name: 'GosubIf',
  synopsis: 'Gosub to one of two labels depending on a condition',
  execute(channel, _args, services, rawData) {
    const question = rawData.indexOf('?');
    if (question < 0) {
      services.log.warn({ channel: channel.name }, 'GosubIf requires an argument: GosubIf(cond?label1(args):label2(args))');
      return 'stop';
    }
    // The colon between the labels is the first one outside an argument list.
    const [whenTrue, whenFalse] = splitBranches(rawData.slice(question + 1));
    const branch = isTrueCondition(rawData.slice(0, question)) ? whenTrue : whenFalse;
    if (branch.trim() === '') return 'next';
    return gosubTo(channel, services, 'GosubIf', branch);
  },
};

export const gosubReturn: DialplanApplication = {
  name: 'Return',
  synopsis: 'Returns from a Gosub, setting ${GOSUB_RETVAL}',
  execute(channel, _args, services, rawData) {
    const back = popFrame(channel);
    if (!back) {
      services.log.warn({ channel: channel.name }, 'Return without Gosub: stack is empty');
      return 'stop';
    }
    channel.setSystemVariable('GOSUB_RETVAL', rawData);
    channel.setLocation(back);
    return 'jump';
  },
};

export const stackPop: DialplanApplication = {
  name: 'StackPop',
  synopsis: 'Removes the latest Gosub frame without returning to it',
  execute(channel, _args, services) {
    if (!popFrame(channel)) services.log.warn({ channel: channel.name }, 'StackPop: stack is empty');
    return 'next';
  },
};
