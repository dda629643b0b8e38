// Writes the Settings table of docs/configuration.md from the declarations in src/config/settings.ts
// (`npm run docs:config`). test/config/config.test.ts fails when the file and the declarations differ.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderSettingsTable } from '../src/config/config.ts';
import { replaceSettingsTable } from '../src/config/docs-table.ts';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'configuration.md');
const before = fs.readFileSync(file, 'utf8');
const after = replaceSettingsTable(before, renderSettingsTable());
if (after !== before) fs.writeFileSync(file, after);
console.log(after === before ? 'docs/configuration.md is up to date' : 'docs/configuration.md: Settings table rewritten');
