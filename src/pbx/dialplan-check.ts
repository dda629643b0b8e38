// The load-time check of a dialplan: every application a step runs and every function its data
// calls must exist, so that a configuration written for Asterisk says at start-up (and reload)
// what Patchbay will not run, instead of a call silently ending at it. One warning per unknown
// name, at its first use, and a summary.
import type { ParsedDialplan } from '../dialplan/parsed.ts';
import { splitArgs } from '../dialplan/args.ts';

/** Applications deliberately absent because they act outside the server. */
const APPLICATIONS_WITH_OUTSIDE_EFFECTS: ReadonlySet<string> = new Set(['system', 'trysystem']);

export interface DialplanCheckInput {
  isApplication(name: string): boolean;
  isFunction(name: string): boolean;
  /** Functions not provided on purpose (they act outside the server). */
  readonly outsideFunctions: ReadonlySet<string>;
  /** What an application says of its data on a line (Dial's options it does not act on). */
  checkApplicationData?(name: string, data: string): string[];
}

export interface DialplanCheck {
  /** One `file:line: ...` line per unknown or refused name, context by context in the order they were read. */
  readonly warnings: string[];
  readonly unknownApplications: string[];
  readonly unknownFunctions: string[];
  readonly refusedFunctions: string[];
  /** One line saying what was found. */
  readonly summary: string;
}

/** `${NAME(`: a function call in application data (variables have no parenthesis). */
const FUNCTION_CALL = /\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\(/g;
/** Applications whose data names a function to write on the left of `=`. */
const WRITERS = new Set(['set', 'mset']);
/** Applications whose data names another application to run: `ExecIf(cond?App(args):App(args))`. */
const RUNNERS = new Set(['execif']);

export function checkDialplan(parsed: ParsedDialplan, input: DialplanCheckInput): DialplanCheck {
  const warnings: string[] = [];
  const unknownApplications: string[] = [];
  const unknownFunctions: string[] = [];
  const refusedFunctions: string[] = [];
  const seenApplications = new Set<string>();
  const seenFunctions = new Set<string>();

  const application = (name: string, at: string): void => {
    const key = name.toLowerCase();
    if (name === '' || seenApplications.has(key) || input.isApplication(name)) return;
    seenApplications.add(key);
    unknownApplications.push(name);
    warnings.push(
      APPLICATIONS_WITH_OUTSIDE_EFFECTS.has(key)
        ? `${at}: application '${name}' is not provided: it acts outside the server`
        : `${at}: unknown application '${name}'`,
    );
  };
  const func = (name: string, at: string): void => {
    const key = name.toUpperCase();
    if (seenFunctions.has(key) || input.isFunction(name)) return;
    seenFunctions.add(key);
    if (input.outsideFunctions.has(key)) {
      refusedFunctions.push(key);
      warnings.push(`${at}: function '${key}' is not provided: it acts outside the server`);
    } else {
      unknownFunctions.push(key);
      warnings.push(`${at}: unknown function '${key}'`);
    }
  };

  for (const context of parsed.contexts) {
    for (const extension of context.extensions) {
      for (const step of extension.steps) {
        const at = `${step.file ?? parsed.file}:${step.line}`;
        application(step.app, at);
        for (const line of input.checkApplicationData?.(step.app, step.appData) ?? []) warnings.push(`${at}: ${line}`);
        for (const match of step.appData.matchAll(FUNCTION_CALL)) func(match[1], at);
        const app = step.app.toLowerCase();
        if (WRITERS.has(app)) {
          for (const assignment of app === 'set' ? [step.appData] : splitArgs(step.appData)) {
            const target = /^\s*([A-Za-z_][A-Za-z0-9_]*)\(/.exec(assignment.slice(0, Math.max(0, assignment.indexOf('='))));
            if (target) func(target[1], at);
          }
        } else if (RUNNERS.has(app)) {
          const question = step.appData.indexOf('?');
          for (const branch of question < 0 ? [] : splitArgs(step.appData.slice(question + 1), ':')) {
            const name = /^\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(branch);
            if (name) application(name[1], at);
          }
        }
      }
    }
  }

  const parts: string[] = [];
  const list = (names: string[]): string => names.join(', ');
  if (unknownApplications.length > 0) parts.push(`${unknownApplications.length} unknown application${unknownApplications.length === 1 ? '' : 's'} (${list(unknownApplications)})`);
  if (unknownFunctions.length > 0) parts.push(`${unknownFunctions.length} unknown function${unknownFunctions.length === 1 ? '' : 's'} (${list(unknownFunctions)})`);
  if (refusedFunctions.length > 0) parts.push(`${refusedFunctions.length} function${refusedFunctions.length === 1 ? '' : 's'} not provided (${list(refusedFunctions)})`);
  const summary =
    parts.length === 0
      ? `${parsed.file}: every application and function the dialplan names is available`
      : `${parsed.file}: ${parts.join(', ')}; a call reaching an unknown application hangs up, an unknown function reads as empty`;
  return { warnings, unknownApplications, unknownFunctions, refusedFunctions, summary };
}
