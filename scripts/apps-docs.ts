// Writes the lists of supported dialplan applications in README.md and docs/dialplan.md from the
// registry (`npm run docs:apps`). test/pbx/apps-docs.test.ts fails when they differ.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderApplicationsTable, renderReadmeApplications, replaceApplicationsBlock } from '../src/pbx/apps/docs.ts';
import { dialplanCatalog } from '../src/control/dialplan-catalog.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
for (const [name, block] of [
  ['README.md', renderReadmeApplications(dialplanCatalog().applications)],
  ['docs/dialplan.md', renderApplicationsTable(dialplanCatalog().applications)],
] as const) {
  const file = path.join(root, name);
  const before = fs.readFileSync(file, 'utf8');
  const after = replaceApplicationsBlock(before, block);
  if (after !== before) fs.writeFileSync(file, after);
  console.log(after === before ? `${name} is up to date` : `${name}: applications rewritten`);
}
