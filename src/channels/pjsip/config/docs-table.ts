// The option-by-option table of docs/sip.md, generated from the declarations (declarations.ts) by
// `npm run docs:pjsip`; test/channels/pjsip/declarations.test.ts fails when the two differ.
import { PJSIP_TYPES } from './declarations.ts';

export const PJSIP_TABLE_START = '<!-- Generated from src/channels/pjsip/config/declarations.ts by `npm run docs:pjsip`: edit the declarations, not this table. -->';
export const PJSIP_TABLE_END = '<!-- End of the generated res_pjsip option table. -->';

/** One row per option: type, option, Asterisk's default, whether Patchbay acts on it, and what it does. */
export function renderPjsipOptionsTable(): string {
  const rows = ['| Type | Option | Default | Supported | What Patchbay does |', '| --- | --- | --- | --- | --- |'];
  for (const declared of PJSIP_TYPES.values()) {
    for (const [name, option] of declared.options) {
      const list = option.list ? ' Repeating it adds to the list.' : '';
      const defaultText = option.default === '' ? '' : `\`${option.default}\``;
      rows.push(`| ${declared.type} | \`${name}\` | ${defaultText} | ${option.implemented ? 'yes' : 'no (warning)'} | ${option.doc}${list} |`);
    }
  }
  return rows.join('\n');
}

/** The document with the table between the markers replaced; throws when a marker is missing. */
export function replacePjsipOptionsTable(document: string, table: string): string {
  const start = document.indexOf(PJSIP_TABLE_START);
  const end = document.indexOf(PJSIP_TABLE_END);
  if (start < 0 || end < start) throw new Error(`docs/sip.md lacks the markers ${PJSIP_TABLE_START} … ${PJSIP_TABLE_END}`);
  return `${document.slice(0, start + PJSIP_TABLE_START.length)}\n${table}\n${document.slice(end)}`;
}
