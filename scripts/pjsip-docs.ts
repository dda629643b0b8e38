// Writes the res_pjsip option table of docs/sip.md from src/channels/pjsip/config/declarations.ts
// (`npm run docs:pjsip`). test/channels/pjsip/declarations.test.ts fails when they differ.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderPjsipOptionsTable, replacePjsipOptionsTable } from '../src/channels/pjsip/config/docs-table.ts';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'sip.md');
const before = fs.readFileSync(file, 'utf8');
const after = replacePjsipOptionsTable(before, renderPjsipOptionsTable());
if (after !== before) fs.writeFileSync(file, after);
console.log(after === before ? 'docs/sip.md: res_pjsip options up to date' : 'docs/sip.md: res_pjsip options rewritten');
