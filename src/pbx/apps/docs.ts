// The lists of supported dialplan applications in README.md and docs/dialplan.md, generated from
// the registry's applications (the built-in ones and the built-in technologies':
// src/control/dialplan-catalog.ts; scripts/apps-docs.ts writes them; a test keeps them true). Each
// lives between `<!-- apps:start -->` and `<!-- apps:end -->`, so other generated blocks (functions) sit beside it.

/** What the lists show of an application. */
export interface DocumentedApplication {
  readonly name: string;
  readonly synopsis?: string;
}

export const APPS_START = '<!-- apps:start -->';
export const APPS_END = '<!-- apps:end -->';

function sortedApplications(applications: readonly DocumentedApplication[]): { name: string; synopsis: string }[] {
  return applications
    .map((application) => ({ name: application.name, synopsis: application.synopsis ?? '' }))
    .sort((a, b) => a.name.localeCompare(b.name, 'en'));
}

/** The README's block: the names, one sentence. */
export function renderReadmeApplications(applications: readonly DocumentedApplication[]): string {
  const names = sortedApplications(applications).map((application) => application.name);
  return `Applications (${names.length}, generated from the registry; see [docs/dialplan.md](docs/dialplan.md)): ${names.join(', ')}.`;
}

/** docs/dialplan.md's block: a table of names and what each does. */
export function renderApplicationsTable(applications: readonly DocumentedApplication[]): string {
  const rows = sortedApplications(applications).map(({ name, synopsis }) => `| \`${name}\` | ${synopsis.replaceAll('|', '\\|')} |`);
  return ['| Application | What it does |', '| --- | --- |', ...rows].join('\n');
}

/**
 * `text` with the block between the markers replaced, indented as the start marker is (so it can
 * sit inside a list item); throws when the markers are missing.
 */
export function replaceApplicationsBlock(text: string, block: string): string {
  const start = text.indexOf(APPS_START);
  const end = text.indexOf(APPS_END);
  if (start < 0 || end < start) throw new Error(`the file has no ${APPS_START} ... ${APPS_END} block`);
  const indent = /[ \t]*$/.exec(text.slice(text.lastIndexOf('\n', start) + 1, start))?.[0] ?? '';
  const body = block
    .split('\n')
    .map((line) => indent + line)
    .join('\n');
  return `${text.slice(0, start + APPS_START.length)}\n${body}\n${indent}${text.slice(end)}`;
}
