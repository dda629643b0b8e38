// The function lists of the README and of docs/dialplan-functions.md, generated from a registry's
// functions (the built-in ones and those of the built-in technologies: src/control/dialplan-catalog.ts)
// by scripts/functions-docs.ts (`npm run docs:functions`); test/pbx/functions-docs.test.ts fails
// when either file differs from what the registry says.
import type { FunctionCategory } from './function-services.ts';
import { UNPROVIDED_DIALPLAN_FUNCTIONS, type RegisteredFunction } from './function-registry.ts';

export const FUNCTIONS_START_MARKER = '<!-- functions:start -->';
export const FUNCTIONS_END_MARKER = '<!-- functions:end -->';

const CATEGORY_TITLES: Readonly<Record<FunctionCategory, string>> = {
  logic: 'Conditions and arithmetic',
  string: 'Strings',
  time: 'Time',
  variables: 'Variables',
  channel: 'The channel',
  state: 'Device and extension states, dialplan look-ups',
  astdb: 'The astdb',
  message: 'Text messages',
  records: 'Call records (CDR)',
};

/** The README's list: every function name, and the ones deliberately not provided. */
export function renderReadmeFunctions(functions: readonly RegisteredFunction[]): string {
  const names = functions.map((fn) => fn.name);
  return [
    `- **Dialplan functions** (${names.length}; one line each in [docs/dialplan-functions.md](docs/dialplan-functions.md)):`,
    ...wrap(`${names.join(', ')}.`),
    ...wrap(`Not provided, because they reach outside the server: ${[...UNPROVIDED_DIALPLAN_FUNCTIONS.keys()].join(', ')}.`),
  ].join('\n');
}

/** Lines of at most 100 characters, indented to continue a list item. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = ' ';
  for (const word of text.split(' ')) {
    if (line.length + 1 + word.length > 100 && line.trim() !== '') {
      lines.push(line);
      line = ' ';
    }
    line += ` ${word}`;
  }
  if (line.trim() !== '') lines.push(line);
  return lines;
}

/** The section a function is listed under: its category's title, or its technology's section. */
function sectionOf(fn: RegisteredFunction): string {
  return 'category' in fn ? CATEGORY_TITLES[fn.category] : fn.docsSection;
}

/** The body of docs/dialplan-functions.md between the markers: a table per category, then per technology section. */
export function renderFunctionsDoc(functions: readonly RegisteredFunction[]): string {
  const sections: string[] = [];
  const titles = new Set([...Object.values(CATEGORY_TITLES), ...functions.map(sectionOf)]);
  for (const title of titles) {
    const rows = functions
      .filter((fn) => sectionOf(fn) === title)
      .map((fn) => `| \`${fn.syntax}\` | ${fn.read ? 'yes' : 'no'} | ${fn.write ? 'yes' : 'no'} | ${fn.summary.replaceAll('|', '\\|')} |`);
    sections.push([`### ${title}`, '', '| Function | Read | Write | What it does |', '|---|---|---|---|', ...rows].join('\n'));
  }
  sections.push(
    [
      '### Not provided',
      '',
      'These reach outside the server, so Patchbay does not run them; the dialplan check names them at load time:',
      '',
      ...[...UNPROVIDED_DIALPLAN_FUNCTIONS].map(([name, why]) => `- \`${name}\`: ${why}`),
    ].join('\n'),
  );
  return sections.join('\n\n');
}

/** `document` with the text between the function markers replaced by `body`; throws without markers. */
export function replaceBetweenMarkers(document: string, body: string, what: string): string {
  const start = document.indexOf(FUNCTIONS_START_MARKER);
  const end = document.indexOf(FUNCTIONS_END_MARKER);
  if (start < 0 || end < start) throw new Error(`${what} lacks the markers ${FUNCTIONS_START_MARKER} … ${FUNCTIONS_END_MARKER}`);
  return `${document.slice(0, start + FUNCTIONS_START_MARKER.length)}\n${body}\n${document.slice(end)}`;
}
