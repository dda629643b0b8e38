// #include read by a hostile configuration: glob patterns that would backtrack for minutes on a
// long file name, paths that leave the directory (refused before anything outside is listed or
// probed), and a file too large to read.
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { includeReader, MAX_INCLUDED_BYTES } from '../../src/dialplan/includes.ts';
import { DialplanSyntaxError } from '../../src/config/conf/syntax-error.ts';
import { cpuMs } from '../helpers/cpu-time.ts';

let dir: string;
let confDir: string;
let main: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-includes-'));
  confDir = join(dir, 'conf');
  mkdirSync(confDir);
  main = join(confDir, 'extensions.conf');
  writeFileSync(main, '');
  for (const name of ['a.conf', 'b.conf', 'c.conf', 'x.conf', '.hidden.conf']) writeFileSync(join(confDir, name), `; ${name}\n`);
  // A long name of one repeated letter: what makes a backtracking glob slow.
  writeFileSync(join(confDir, 'a'.repeat(40)), '');
  writeFileSync(join(dir, 'outside.conf'), '[outside]\n');
});

after(() => rmSync(dir, { recursive: true, force: true }));

const at = () => ({ file: main, line: 3 });
const names = (files: readonly { file: string }[]) => files.map((f) => f.file.slice(confDir.length + 1));

test('globs match as the shell does: *, ?, classes, negated classes, a leading dot only literally', () => {
  const read = includeReader(main);
  assert.deepEqual(names(read('*.conf', at(), true, 0)), ['a.conf', 'b.conf', 'c.conf', 'extensions.conf', 'x.conf']);
  assert.deepEqual(names(read('[a-c].conf', at(), true, 0)), ['a.conf', 'b.conf', 'c.conf']);
  assert.deepEqual(names(read('[!a-c].conf', at(), true, 0)), ['x.conf']);
  assert.deepEqual(names(read('?.co?f', at(), true, 0)), ['a.conf', 'b.conf', 'c.conf', 'x.conf']);
  assert.deepEqual(names(read('.h*', at(), true, 0)), ['.hidden.conf']);
  assert.deepEqual(names(read('[z-a].conf', at(), true, 0)), []);
});

test('a glob of many stars against a long file name answers at once', () => {
  const read = includeReader(main);
  const ms = cpuMs(() => {
    // As a regular expression this backtracks through C(40, 12) ways before failing (minutes).
    assert.deepEqual(read('*?*?*?*?*?*?*?*?*?*?*?*?X', at(), true, 0), []);
    assert.equal(names(read('*a*a*a*a*a*a*a*a*a*a*a*a', at(), true, 0)).length, 1);
  });
  assert.ok(ms < 1000, `took ${ms.toFixed(0)} ms of CPU`);
});

test('a path leaving the directory is refused whether or not it exists, and a glob outside is never listed', () => {
  const read = includeReader(main);
  for (const target of ['../outside.conf', '../missing.conf', '../*.conf', '/etc/*', '../nowhere/*.conf']) {
    assert.throws(
      () => read(target, at(), true, 0),
      (error: unknown) => error instanceof DialplanSyntaxError && /refused: it leaves the configuration directory/.test(error.message),
      target,
    );
  }
});

test('a file larger than the include budget is refused without being read', () => {
  const big = join(confDir, 'huge.conf');
  const fd = openSync(big, 'w');
  // Sparse: 3 GiB on paper, more than a string (or the budget) can hold.
  ftruncateSync(fd, 3 * 1024 * 1024 * 1024);
  closeSync(fd);
  try {
    const read = includeReader(main);
    assert.throws(
      () => read('huge.conf', at(), false, 0),
      (error: unknown) => error instanceof DialplanSyntaxError && error.message.includes(`exceed ${MAX_INCLUDED_BYTES} bytes`),
    );
  } finally {
    rmSync(big);
  }
});
