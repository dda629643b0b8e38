// Music on hold is confined as sounds are (issue 21, item 8): a file plays only when its real path
// lies inside the music-on-hold directory or a configured class directory. Links leading outside —
// to a file, or a whole class directory — are not heard (their bytes would end up in the calls and in
// bridge recordings any user can download); links that stay inside still work.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MusicOnHold } from '../../src/core/moh.ts';
import { WavWriter } from '../../src/media/wav-writer.ts';

const SECRET = 7777;
let root: string;
let moh: MusicOnHold;

function writeConstant(file: string, value: number, samples = 1600): void {
  const writer = WavWriter.open(file, { rate: 8000 });
  writer.write(new Int16Array(samples).fill(value));
  writer.finalize();
}

/** Every distinct sample value a stream of the class plays over `frames` 20 ms frames. */
function heard(className: string, frames = 200): Set<number> {
  const stream = moh.stream(className);
  const values = new Set<number>();
  const frame = new Int16Array(160);
  for (let i = 0; i < frames; i++) {
    stream.fill(frame);
    for (const v of frame) values.add(v);
  }
  return values;
}

before(() => {
  root = mkdtempSync(join(tmpdir(), 'moh-confine-'));
  const outside = join(root, 'outside');
  const dir = join(root, 'moh');
  const extra = join(root, 'extra');
  mkdirSync(outside);
  mkdirSync(join(dir, 'jazz'), { recursive: true });
  mkdirSync(join(dir, 'default'), { recursive: true });
  mkdirSync(extra);
  writeConstant(join(outside, 'secret.wav'), SECRET);
  writeConstant(join(dir, 'default', 'a.wav'), 100);
  writeConstant(join(dir, 'jazz', 'a.wav'), 1000);
  writeConstant(join(extra, 'x.wav'), 2000);
  symlinkSync(join(outside, 'secret.wav'), join(dir, 'jazz', 'b-leak.wav'));
  symlinkSync(join(dir, 'default', 'a.wav'), join(dir, 'jazz', 'c-inside.wav'));
  symlinkSync(join(extra, 'x.wav'), join(dir, 'jazz', 'd-configured.wav'));
  symlinkSync(outside, join(dir, 'evil'));
  symlinkSync(join(outside, 'secret.wav'), join(extra, 'y-leak.wav'));
  moh = new MusicOnHold({ directory: dir, classDirectories: new Map([['extra', extra]]) });
});

after(() => rmSync(root, { recursive: true, force: true }));

test('a class directory linked outside is no class', () => {
  assert.deepEqual(moh.classes(), ['default', 'extra', 'jazz']);
  assert.equal(moh.resolveClass('evil'), 'default');
  assert.ok(!heard('evil').has(SECRET));
});

test('a file linked outside is skipped; links inside the roots play', () => {
  const values = heard('jazz', 400);
  assert.ok(!values.has(SECRET), 'the file outside was played');
  assert.deepEqual([...values].sort((a, b) => a - b), [100, 1000, 2000]);
});

test('a configured class directory is confined too', () => {
  const values = heard('extra');
  assert.deepEqual([...values], [2000]);
});
