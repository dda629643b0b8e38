// The run-time extension layer (a registrar's extensions, as res_pjsip's regcontext adds): merged
// into the parsed dialplan with the file's own extension winning, removed only by its registrar,
// its contexts present while empty, and bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Dialplan } from '../../src/dialplan/dialplan.ts';
import { parseDialplan } from '../../src/dialplan/parser.ts';
import { MAX_RUNTIME_EXTENSIONS, RuntimeExtensions } from '../../src/core/runtime-extensions.ts';

const FILE = parseDialplan('[regs]\nexten => bob,1,Answer()\n[other]\nexten => 1,1,Hangup()\n', 'extensions.conf');

test('an added extension is in the indexed dialplan; the file’s own one wins; only its registrar removes it', () => {
  let changes = 0;
  const layer = new RuntimeExtensions(() => (changes += 1));
  assert.equal(layer.add('regs', 'alice', 'Noop', 'alice', 'PJSIP'), true);
  assert.equal(layer.add('regs', 'bob', 'Noop', 'bob', 'PJSIP'), true);
  assert.equal(layer.add('regs', 'alice', 'Noop', 'alice', 'PJSIP'), false);
  const dialplan = new Dialplan(layer.mergeInto(FILE));
  assert.equal(dialplan.find('regs', 'alice', 1)?.app, 'Noop');
  assert.equal(dialplan.find('regs', 'bob', 1)?.app, 'Answer');
  assert.equal(dialplan.exists('other', '1'), true);
  layer.remove('regs', 'alice', 'someone-else');
  assert.equal(new Dialplan(layer.mergeInto(FILE)).exists('regs', 'alice'), true);
  layer.remove('regs', 'alice', 'PJSIP');
  assert.equal(new Dialplan(layer.mergeInto(FILE)).exists('regs', 'alice'), false);
  assert.equal(changes, 3);
});

test('a created context exists while empty and goes with destroyContext, with its registrar’s extensions', () => {
  const layer = new RuntimeExtensions(() => undefined);
  layer.createContext('sipregs', 'PJSIP');
  assert.equal(new Dialplan(layer.mergeInto(FILE)).hasContext('sipregs'), true);
  layer.add('sipregs', 'alice', 'Noop', 'alice', 'PJSIP');
  layer.destroyContext('sipregs', 'PJSIP');
  assert.equal(new Dialplan(layer.mergeInto(FILE)).hasContext('sipregs'), false);
  assert.equal(layer.size, 0);
});

test('past MAX_RUNTIME_EXTENSIONS an addition is refused', () => {
  const layer = new RuntimeExtensions(() => undefined);
  for (let i = 0; i < MAX_RUNTIME_EXTENSIONS; i++) layer.add('big', String(i), 'Noop', '', 'PJSIP');
  assert.equal(layer.size, MAX_RUNTIME_EXTENSIONS);
  assert.equal(layer.add('big', 'one-more', 'Noop', '', 'PJSIP'), false);
});
