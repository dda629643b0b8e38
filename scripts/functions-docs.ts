// Writes the dialplan function lists of README.md and docs/dialplan-functions.md from the catalog
// of src/control/dialplan-catalog.ts (`npm run docs:functions`). test/pbx/functions-docs.test.ts fails
// when the files and the registry differ.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderFunctionsDoc, renderReadmeFunctions, replaceBetweenMarkers } from '../src/pbx/function-docs.ts';
import { dialplanCatalog } from '../src/control/dialplan-catalog.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
for (const [file, body] of [
  ['README.md', renderReadmeFunctions(dialplanCatalog().functions)],
  ['docs/dialplan-functions.md', renderFunctionsDoc(dialplanCatalog().functions)],
] as const) {
  const full = path.join(root, file);
  const before = fs.readFileSync(full, 'utf8');
  const after = replaceBetweenMarkers(before, body, file);
  if (after !== before) fs.writeFileSync(full, after);
  console.log(after === before ? `${file}: functions up to date` : `${file}: functions rewritten`);
}
