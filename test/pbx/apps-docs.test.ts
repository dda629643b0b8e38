// The README's and docs/dialplan.md's lists of supported applications are what the registry holds
// (`npm run docs:apps` rewrites them).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Pbx } from '../../src/pbx/pbx.ts';
import { registerDialplanApplications } from '../../src/pbx/apps/index.ts';
import { renderApplicationsTable, renderReadmeApplications, replaceApplicationsBlock } from '../../src/pbx/apps/docs.ts';
import { FunctionRegistry } from '../../src/pbx/function-registry.ts';
import { dialplanCatalog } from '../../src/control/dialplan-catalog.ts';
import { registerPjsipDialplan } from '../../src/channels/pjsip/dialplan.ts';

const { applications } = dialplanCatalog();
import type { PbxServices } from '../../src/pbx/application-services.ts';

const root = new URL('../../', import.meta.url);

test('README.md and docs/dialplan.md list exactly the registered applications (run npm run docs:apps)', () => {
  for (const [name, block] of [
    ['README.md', renderReadmeApplications(applications)],
    ['docs/dialplan.md', renderApplicationsTable(applications)],
  ] as const) {
    const text = readFileSync(new URL(name, root), 'utf8');
    assert.equal(replaceApplicationsBlock(text, block), text, `${name} is out of date: run npm run docs:apps`);
  }
});

test('the generated list names every application the executor registers, each with a synopsis', () => {
  const pbx = new Pbx({ channels: { functions: new FunctionRegistry() } } as unknown as PbxServices);
  registerDialplanApplications(pbx);
  // The built-in technologies' applications, as each registers them when it starts.
  registerPjsipDialplan({ registerFunction: () => undefined, registerApplication: (application) => void pbx.register(application) });
  const names = pbx.applicationNames();
  assert.ok(names.length >= 43);
  const readme = renderReadmeApplications(applications);
  for (const name of names) {
    assert.ok(readme.includes(` ${name},`) || readme.includes(` ${name}.`), `${name} in the README block`);
    assert.ok(pbx.application(name)?.synopsis, `${name} has a synopsis`);
  }
  assert.match(readme, new RegExp(`^Applications \\(${names.length},`));
});
