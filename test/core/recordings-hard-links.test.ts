// A hard link in the recordings directory shares its bytes with a file that may lie anywhere on the
// same file system (issue 21, item 13): such a file is neither downloaded nor copied (403, as log
// channels refuse files with other links); a recording of its own still is.
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ForbiddenError } from '../../src/core/errors.ts';
import { RecordingsDirectory } from '../../src/core/recordings/directory.ts';
import { RecordingStore } from '../../src/core/recordings/store.ts';

let root: string;
let store: RecordingStore;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'rec-hardlink-'));
  mkdirSync(join(root, 'outside'));
  mkdirSync(join(root, 'recordings'));
  writeFileSync(join(root, 'outside', 'secret.wav'), 'secret bytes');
  writeFileSync(join(root, 'recordings', 'own.wav'), 'own bytes');
  linkSync(join(root, 'outside', 'secret.wav'), join(root, 'recordings', 'planted.wav'));
  store = new RecordingStore(new RecordingsDirectory(join(root, 'recordings')));
});

after(() => rmSync(root, { recursive: true, force: true }));

test('a hard-linked recording is not served', () => {
  assert.throws(() => store.open('planted'), (err: unknown) => err instanceof ForbiddenError && /hard links/.test(err.message));
  const own = store.open('own');
  assert.equal(own.length, 'own bytes'.length);
  (own.body as NodeJS.ReadableStream & { destroy(): void }).destroy();
});

test('a hard-linked recording is not copied (the copy would carry its bytes)', () => {
  assert.throws(() => store.copy('planted', 'copied'), ForbiddenError);
  assert.equal(store.find('copied'), undefined);
  assert.deepEqual(store.copy('own', 'own-copy'), { name: 'own-copy', format: 'wav' });
});
