// ExecIf(expression?app(args)[:app(args)]) and GotoIfTime(times,weekdays,mdays,months[,tz]?[true]:[false]).
import { splitArgs } from '../../dialplan/args.ts';
import { parseTimeSpec, timeSpecMatches, TimeSpecError } from '../../dialplan/time-spec.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import { isTrueCondition, resolveGoto } from './goto.ts';

/** Finds an application by name (the executor's registry). */
export type ApplicationLookup = (name: string) => DialplanApplication | undefined;

/**
 * ExecIf runs the application of the branch the condition picks, with its arguments, and goes on
 * as that application says (a Goto in it moves the channel; a Hangup ends the call). An unknown
 * application ends the call, as app_exec's ExecIf does.
 */
export function execIf(lookup: ApplicationLookup): DialplanApplication {
  return {
    name: 'ExecIf',
    synopsis: 'Runs one of two applications depending on a condition',
    async execute(channel, _args, services, rawData): Promise<AppOutcome> {
      const question = rawData.indexOf('?');
      if (question < 0) {
        services.log.warn({ channel: channel.name }, 'ExecIf requires an argument: ExecIf(<expr>?<appiftrue>(<args>)[:<appiffalse>(<args>)])');
        return 'stop';
      }
      const [whenTrue = '', whenFalse = ''] = splitBranches(rawData.slice(question + 1));
      const branch = (isTrueCondition(rawData.slice(0, question)) ? whenTrue : whenFalse).trim();
      if (branch === '') return 'next';
      const open = branch.indexOf('(');
      const name = (open < 0 ? branch : branch.slice(0, open)).trim();
      const close = branch.lastIndexOf(')');
      const data = open < 0 ? '' : close > open ? branch.slice(open + 1, close) : branch.slice(open + 1);
      const application = lookup(name);
      if (!application) {
        services.log.warn({ channel: channel.name, app: name }, `ExecIf: could not find application '${name}'; hanging up`);
        return 'stop';
      }
      return application.execute(channel, splitArgs(data), services, data);
    },
  };
}

/** Splits `a(x:y):b(z)` at the first colon outside parentheses. */
export function splitBranches(text: string): [string, string] {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (c === ':' && depth === 0) return [text.slice(0, i), text.slice(i + 1)];
  }
  return [text, ''];
}

export const gotoIfTime: DialplanApplication = {
  name: 'GotoIfTime',
  synopsis: 'Goes to one of two labels depending on the time (times,weekdays,mdays,months[,timezone])',
  execute(channel, _args, services, rawData) {
    const question = rawData.indexOf('?');
    if (question < 0) {
      services.log.warn({ channel: channel.name }, 'GotoIfTime requires an argument: <time range>,<days of week>,<days of month>,<months>[,<timezone>]?[[context,]extension,]priority');
      return 'stop';
    }
    let matches: boolean;
    try {
      matches = timeSpecMatches(parseTimeSpec(rawData.slice(0, question)));
    } catch (error) {
      if (!(error instanceof TimeSpecError)) throw error;
      services.log.warn({ channel: channel.name }, `GotoIfTime: ${error.message}; the time does not match`);
      matches = false;
    }
    const [whenTrue = '', whenFalse = ''] = splitBranches(rawData.slice(question + 1));
    const branch = matches ? whenTrue : whenFalse;
    if (branch.trim() === '') return 'next';
    const target = resolveGoto(channel, services, branch);
    if ('error' in target) {
      services.log.warn({ channel: channel.name }, `GotoIfTime: cannot go to ${branch}: ${target.error}; hanging up`);
      return 'stop';
    }
    channel.setLocation(target);
    return 'jump';
  },
};
