// The README's and docs/dialplan-functions.md's function lists are what the registry declares
// (`npm run docs:functions` rewrites them).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { renderFunctionsDoc, renderReadmeFunctions, replaceBetweenMarkers } from '../../src/pbx/function-docs.ts';
import { dialplanCatalog } from '../../src/control/dialplan-catalog.ts';

const functions = dialplanCatalog().functions;

const read = (file: string): string => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

test('README.md lists the functions of the registry (npm run docs:functions)', () => {
  const readme = read('README.md');
  // A boolean, not a diff of two whole documents: the message says what to run.
  assert.ok(replaceBetweenMarkers(readme, renderReadmeFunctions(functions), 'README.md') === readme, 'README.md is stale: run npm run docs:functions');
  for (const fn of functions) assert.match(readme, new RegExp(`\\b${fn.name}\\b`), fn.name);
});

test('docs/dialplan-functions.md has one line per function of the registry (npm run docs:functions)', () => {
  const doc = read('docs/dialplan-functions.md');
  assert.ok(replaceBetweenMarkers(doc, renderFunctionsDoc(functions), 'docs/dialplan-functions.md') === doc, 'docs/dialplan-functions.md is stale: run npm run docs:functions');
  for (const fn of functions) {
    assert.ok(fn.summary.length > 0 && !fn.summary.includes('\n'), `${fn.name}: one line`);
    assert.ok(fn.syntax.toUpperCase().startsWith(`${fn.name}(`), `${fn.name}: syntax begins with the name`);
    assert.ok(fn.read || fn.write, `${fn.name}: readable or writable`);
    assert.equal(doc.split('\n').filter((line) => line.startsWith(`| \`${fn.name}(`)).length, 1, fn.name);
  }
});
