// The shared first-use loader behind libopus and werift's DTLS stack: nothing is required until the
// first get(), the package is required once, and its specifier resolves from the caller's URL.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';
import { loadOnFirstUse } from '../../src/util/load-on-first-use.ts';

const dir = mkdtempSync(join(tmpdir(), 'patchbay-load-on-first-use-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A CommonJS package that counts its evaluations on globalThis under `key`. */
function writePackage(key: string): void {
  writeFileSync(join(dir, `${key}.cjs`), `globalThis.${key} = (globalThis.${key} ?? 0) + 1;\nmodule.exports = { name: '${key}' };\n`);
}
const evaluations = (key: string): number => Number(Reflect.get(globalThis, key) ?? 0);

test('nothing is required before the first get(); then once, the same module every time', () => {
  writePackage('lazyCounted');
  const lazy = loadOnFirstUse<{ name: string }>('./lazyCounted.cjs', pathToFileURL(join(dir, 'caller.js')).href);
  assert.equal(lazy.loaded(), false);
  assert.equal(evaluations('lazyCounted'), 0, 'not evaluated when the loader is made');
  const first = lazy.get();
  assert.equal(first.name, 'lazyCounted');
  assert.equal(lazy.loaded(), true);
  assert.equal(lazy.get(), first);
  assert.equal(evaluations('lazyCounted'), 1, 'evaluated once');
});

test('a package that cannot be found fails at get(), not when the loader is made, and stays unloaded', () => {
  const lazy = loadOnFirstUse<unknown>('./absent.cjs', pathToFileURL(join(dir, 'caller.js')).href);
  assert.throws(() => lazy.get(), /Cannot find module/);
  assert.equal(lazy.loaded(), false);
});
