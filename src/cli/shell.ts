// `patchbay -r`: the `asterisk -r` habit. A prompt that runs admin commands one line at a time
// against the server, with Tab completion of the command words and a history kept between
// sessions (`~/.patchbay_history`, or $PATCHBAY_HISTORY). `exit`, `quit` or Ctrl-D leave it.
import { appendFileSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { ADMIN_COMMANDS } from './options.ts';
import { SERVER_COMMAND_WORDS } from './server-commands.ts';

/** Lines of history kept and loaded. */
const HISTORY_SIZE = 500;
/** Longest line the shell takes (a pasted file is not a command). */
const MAX_LINE = 4096;

/** The words after each first word, for completion (the server commands' own, and the others' fixed words). */
const FOLLOWING: Readonly<Record<string, readonly string[][]>> = {
  ...SERVER_COMMAND_WORDS,
  show: [['channel']],
  dialplan: [['show']],
  stop: [['--now'], ['--gracefully']],
  channels: [], bridges: [], endpoints: [], apps: [], hangup: [], originate: [], reload: [], events: [],
};

const SHELL_WORDS = ['help', 'exit', 'quit'];

export interface ShellOptions {
  readonly io: { stdout(text: string): void; stderr(text: string): void };
  /** null keeps no history. */
  readonly historyFile: string | null;
  readonly input?: Readable;
  readonly output?: Writable;
  readonly prompt?: string;
}

export function shellHistoryFile(env: NodeJS.ProcessEnv): string | null {
  if (env.PATCHBAY_HISTORY !== undefined) return env.PATCHBAY_HISTORY === '' ? null : env.PATCHBAY_HISTORY;
  return join(homedir(), '.patchbay_history');
}

/** Splits a command line into words; "double" or 'single' quotes keep spaces in a word. */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.slice(0, MAX_LINE).matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

/** Tab completion: the words that may come next after what is typed. */
export function complete(line: string): [string[], string] {
  const endsInSpace = /\s$/.test(line);
  const words = splitWords(line);
  const current = endsInSpace ? '' : (words.pop() ?? '');
  let choices: readonly string[];
  if (words.length === 0) choices = [...ADMIN_COMMANDS, ...SHELL_WORDS];
  else {
    const forms = FOLLOWING[words[0]!] ?? [];
    const depth = words.length - 1;
    choices = [...new Set(forms.filter((form) => form.slice(0, depth).every((word, i) => word === words[i + 1])).map((form) => form[depth]).filter((word): word is string => word !== undefined))];
  }
  return [choices.filter((choice) => choice.startsWith(current)).sort(), current];
}

function loadHistory(file: string | null): string[] {
  if (file === null) return [];
  try {
    // readline wants the newest first.
    return readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '').slice(-HISTORY_SIZE).reverse();
  } catch {
    return [];
  }
}

/** Runs the shell until exit/quit/Ctrl-D; resolves with 0 (a command's failure is reported on its line, as at asterisk -r). */
export function runShell(run: (words: readonly string[]) => Promise<number>, options: ShellOptions): Promise<number> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const historyFile = options.historyFile;
  const rl: Interface = createInterface({
    input,
    output,
    completer: complete,
    history: loadHistory(historyFile),
    historySize: HISTORY_SIZE,
    terminal: (output as { isTTY?: boolean }).isTTY === true,
    prompt: options.prompt ?? 'patchbay*CLI> ',
  });
  return new Promise<number>((resolve) => {
    let busy = Promise.resolve();
    rl.on('line', (raw) => {
      // Lines are run one after the other, even when pasted together.
      busy = busy.then(async () => {
        const line = raw.trim();
        if (line === '') return rl.prompt();
        if (line === 'exit' || line === 'quit') return void rl.close();
        if (historyFile !== null) {
          try {
            appendFileSync(historyFile, `${line.slice(0, MAX_LINE)}\n`, { mode: 0o600 });
          } catch {
            // A history that cannot be written is no reason to stop the shell.
          }
        }
        const words = splitWords(line);
        await run(words[0] === 'help' ? ['--help'] : words);
        rl.prompt();
      });
    });
    rl.on('SIGINT', () => {
      // Ctrl-C clears the line, as at a shell; Ctrl-D (close) leaves.
      rl.write(null, { ctrl: true, name: 'u' });
      output.write('\n');
      rl.prompt();
    });
    rl.on('close', () => {
      void busy.then(() => resolve(0));
    });
    options.io.stdout(`Patchbay admin shell. Tab completes, 'help' lists the commands, 'exit' or Ctrl-D leaves.\n`);
    rl.prompt();
  });
}
