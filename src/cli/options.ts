// The admin CLI's command line, shared by the server's entry point (src/main.ts decides from it
// whether it runs the server or a command) and the CLI itself. Nothing heavy is imported here, so
// `patchbay --version` stays quick.
import { parseArgs } from 'node:util';

/** First words of the admin commands (multi-word commands such as `pjsip show endpoints` by their first word). */
export const ADMIN_COMMANDS: readonly string[] = Object.freeze([
  'channels', 'bridges', 'endpoints', 'apps', 'show', 'hangup', 'originate', 'dialplan', 'reload', 'stop', 'events',
  'pjsip', 'core', 'logger', 'sip', 'cdr', 'cluster',
]);

/** Options the CLI takes before or after the command (and the server's own: --config, --help, --version). */
export const ADMIN_OPTIONS = {
  config: { type: 'string', short: 'c' },
  user: { type: 'string', short: 'u' },
  password: { type: 'string', short: 'p' },
  url: { type: 'string' },
  json: { type: 'boolean' },
  app: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  number: { type: 'string' },
  disposition: { type: 'string' },
  now: { type: 'boolean' },
  gracefully: { type: 'boolean' },
  timeout: { type: 'string' },
  remote: { type: 'boolean', short: 'r' },
  execute: { type: 'string', short: 'x' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

export function parseAdminArgs(argv: readonly string[]) {
  return parseArgs({ args: [...argv], options: ADMIN_OPTIONS, allowPositionals: true, strict: true });
}

export type AdminValues = ReturnType<typeof parseAdminArgs>['values'];

/**
 * Whether a command line is for the admin CLI rather than the server: it names a command (anywhere,
 * after options or their values), or asks for the shell (-r) or one shell command (-x). A line the
 * CLI cannot parse goes to the CLI when it has a positional word, so the error names the problem.
 */
export function isAdminCommandLine(argv: readonly string[]): boolean {
  try {
    const { values, positionals } = parseAdminArgs(argv);
    return positionals.length > 0 || values.remote === true || values.execute !== undefined;
  } catch {
    const loose = parseArgs({ args: [...argv], options: ADMIN_OPTIONS, allowPositionals: true, strict: false });
    return loose.positionals.length > 0;
  }
}

/** Edit distance between two short words (commands), for "did you mean". */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/** The closest of `choices` to a mistyped word, when it is close enough to be what was meant. */
export function closest(word: string, choices: readonly string[]): string | undefined {
  const typed = word.toLowerCase().slice(0, 64);
  let best: { choice: string; score: number } | undefined;
  for (const choice of choices) {
    const score = choice.startsWith(typed) && typed.length >= 2 ? 0.5 : distance(typed, choice);
    if (!best || score < best.score) best = { choice, score };
  }
  // About a third of the word may be wrong: 'chanels' → 'channels', 'frobnicate' → nothing.
  return best && best.score <= Math.max(1, Math.floor(best.choice.length / 3)) ? best.choice : undefined;
}

/** The command line without -r/--remote and -x/--execute (and its value): the options every shell command gets. */
export function withoutShellOptions(argv: readonly string[]): string[] {
  const { tokens } = parseArgs({ args: [...argv], options: ADMIN_OPTIONS, allowPositionals: true, strict: true, tokens: true });
  const drop = new Set<number>();
  for (const token of tokens) {
    if (token.kind !== 'option' || (token.name !== 'remote' && token.name !== 'execute')) continue;
    drop.add(token.index);
    // A value given as the next word (`-x "core show version"`) is dropped with its option.
    if (token.name === 'execute' && token.inlineValue === false) drop.add(token.index + 1);
  }
  return argv.filter((_, index) => !drop.has(index));
}
