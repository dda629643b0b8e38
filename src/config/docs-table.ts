// Where the generated Settings table sits in docs/configuration.md: after the marker comment, up to
// the first line that is not a table row.
export const SETTINGS_TABLE_MARKER =
  '<!-- Generated from src/config/settings.ts by `npm run docs:config`: edit the declarations, not this table. -->';

/** The document with its Settings table replaced by `table`; throws when the marker is missing. */
export function replaceSettingsTable(document: string, table: string): string {
  const lines = document.split('\n');
  const at = lines.indexOf(SETTINGS_TABLE_MARKER);
  if (at < 0) throw new Error(`docs/configuration.md lacks the marker ${SETTINGS_TABLE_MARKER}`);
  let end = at + 1;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  return [...lines.slice(0, at + 1), ...table.replace(/\n$/, '').split('\n'), ...lines.slice(end)].join('\n');
}

/** The table as the document has it (the lines after the marker that are table rows). */
export function settingsTableOf(document: string): string {
  const lines = document.split('\n');
  const at = lines.indexOf(SETTINGS_TABLE_MARKER);
  if (at < 0) return '';
  let end = at + 1;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  return lines.slice(at + 1, end).join('\n') + '\n';
}
