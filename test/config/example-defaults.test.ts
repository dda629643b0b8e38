// The example configurations say "a commented-out line shows the default" and set most keys to
// what they would be anyway: every scalar they set must be the real default (the Settings table
// of docs/configuration.md, generated from src/config/settings.ts), unless the line says why not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseDocument, isMap, isPair, isScalar, type Node } from 'yaml';
import { settingsTableOf } from '../../src/config/docs-table.ts';

const root = new URL('../../', import.meta.url);

/** `key` → default text, from the generated table (`| \`key\` | \`default\` | …`). */
function documentedDefaults(): Map<string, string> {
  const table = settingsTableOf(readFileSync(new URL('docs/configuration.md', root), 'utf8'));
  const defaults = new Map<string, string>();
  for (const line of table.split('\n')) {
    const match = /^\| `([^`]+)` \| `([^`]*)`/.exec(line);
    if (match) defaults.set(match[1]!, match[2]!.replace(/^'(.*)'$/, '$1'));
  }
  return defaults;
}

/** Every scalar the file sets, by dotted key, with the comment on its line. */
function scalars(node: Node | null, prefix: string, out: { key: string; value: string; comment: string }[]): void {
  if (!isMap(node)) return;
  for (const pair of node.items) {
    if (!isPair(pair) || !isScalar(pair.key)) continue;
    const key = prefix ? `${prefix}.${String(pair.key.value)}` : String(pair.key.value);
    const value = pair.value as Node | null;
    if (isScalar(value)) out.push({ key, value: value.value === null ? '' : String(value.value), comment: value.comment ?? '' });
    else scalars(value, key, out);
  }
}

for (const file of ['patchbay.example.yaml', 'patchbay.sip.example.yaml']) {
  test(`${file}: the values it sets are the defaults, or say they are not`, () => {
    const defaults = documentedDefaults();
    assert.ok(defaults.size > 50, 'the Settings table is found');
    const found: { key: string; value: string; comment: string }[] = [];
    scalars(parseDocument(readFileSync(new URL(file, root), 'utf8')).contents, '', found);
    const wrong = found.filter(({ key, value, comment }) => {
      const documented = defaults.get(key);
      if (documented === undefined || value === '') return false;
      // A line may set something else on purpose when its comment says so ("example", "not the default").
      if (/example|not the default|instead of/i.test(comment)) return false;
      return documented !== value && !(documented === '' && value === "''");
    });
    assert.deepEqual(wrong.map(({ key, value }) => `${key}: ${value} (default ${defaults.get(key)})`), []);
  });
}
