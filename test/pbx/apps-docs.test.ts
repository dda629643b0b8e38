// The README's and docs/dialplan.md's lists of supported applications are what the registry holds
// (`npm run docs:apps` rewrites them).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Pbx } from '../../src/pbx/pbx.ts';
import { registerDialplanApplications } from '../../src/pbx/apps/index.ts';
import { renderApplicationsTable, renderReadmeApplications, replaceApplicationsBlock } from '../../src/pbx/apps/docs.ts';
import { FunctionWriters } from '../../src/pbx/function-writers.ts';
import type { PbxServices } from '../../src/pbx/application-services.ts';

const root = new URL('../../', import.meta.url);

test('README.md and docs/dialplan.md list exactly the registered applications (run npm run docs:apps)', () => {
  for (const [name, block] of [
    ['README.md', renderReadmeApplications()],
    ['docs/dialplan.md', renderApplicationsTable()],
  ] as const) {
    const text = readFileSync(new URL(name, root), 'utf8');
    assert.equal(replaceApplicationsBlock(text, block), text, `${name} is out of date: run npm run docs:apps`);
  }
});

test('the generated list names every application the executor registers, each with a synopsis', () => {
  const pbx = new Pbx({ channels: { functions: new FunctionWriters() } } as unknown as PbxServices);
  registerDialplanApplications(pbx);
  const names = pbx.applicationNames();
  assert.ok(names.length >= 43);
  const readme = renderReadmeApplications();
  for (const name of names) {
    assert.ok(readme.includes(` ${name},`) || readme.includes(` ${name}.`), `${name} in the README block`);
    assert.ok(pbx.application(name)?.synopsis, `${name} has a synopsis`);
  }
  assert.match(readme, new RegExp(`^Applications \\(${names.length},`));
});
