// The sounds index walk is bounded: link loops and link "diamonds" (every level linking twice to
// the next, 2^n paths) finish at once with everything indexed, directories deeper than the depth limit and entries past
// the entry limit are left out, and links leaving the sound directories are absent.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Sounds } from '../../src/core/sounds.ts';
import { buildPcm16MonoHeader } from '../../src/media/wav.ts';

const WAV = Buffer.concat([buildPcm16MonoHeader(8000, 320), Buffer.alloc(320)]);

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'patchbay-sounds-walk-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

function file(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, WAV);
}

describe('sounds walk', () => {
  test('30 levels of directories each linking twice to the next: indexed in well under a second', () => {
    const dir = join(root, 'diamond');
    const levels = Array.from({ length: 30 }, (_, i) => join(dir, 'en', `level${i}`));
    for (const level of levels) mkdirSync(level, { recursive: true });
    for (let i = 0; i < levels.length - 1; i++) {
      symlinkSync(levels[i + 1], join(levels[i], 'a'));
      symlinkSync(levels[i + 1], join(levels[i], 'b'));
    }
    file(join(levels[29], 'bottom.wav'));
    symlinkSync(dir, join(levels[29], 'top'));
    const sounds = new Sounds([dir], [], { maxDepth: 12, maxEntries: 10_000 });
    const started = Date.now();
    sounds.rescan();
    assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
    const ids = sounds.list().map((sound) => sound.id);
    assert.equal(ids.length, 1, `the one prompt, once: ${ids.join(', ')}`);
    assert.match(ids[0], /\/bottom$/);
    assert.ok(sounds.resolve(ids[0], 'en')?.endsWith(join('level29', 'bottom.wav')));
  });

  test('the depth limit leaves deeper prompts out', () => {
    const dir = join(root, 'deep');
    const parts = Array.from({ length: 8 }, (_, i) => `d${i}`);
    file(join(dir, 'en', ...parts.slice(0, 3), 'shallow.wav'));
    file(join(dir, 'en', ...parts, 'deep.wav'));
    const ids = new Sounds([dir], [], { maxDepth: 4, maxEntries: 10_000 }).list().map((sound) => sound.id);
    assert.deepEqual(ids, ['d0/d1/d2/shallow']);
  });

  test('the entry limit leaves the rest out', () => {
    const dir = join(root, 'many');
    for (let i = 0; i < 50; i++) file(join(dir, 'en', `p${String(i).padStart(2, '0')}.wav`));
    assert.equal(new Sounds([dir]).list().length, 50);
    const limited = new Sounds([dir], [], { maxDepth: 12, maxEntries: 21 }).list();
    assert.equal(limited.length, 20, 'the language directory counts as one entry');
  });

  test('a link out of the directories is absent, a link inside is followed', () => {
    const dir = join(root, 'links');
    file(join(root, 'elsewhere', 'secret.wav'));
    file(join(dir, 'en', 'real.wav'));
    symlinkSync(join(root, 'elsewhere', 'secret.wav'), join(dir, 'en', 'secret.wav'));
    symlinkSync(join(root, 'elsewhere'), join(dir, 'en', 'elsewhere'));
    symlinkSync(join(dir, 'en', 'real.wav'), join(dir, 'en', 'alias.wav'));
    const sounds = new Sounds([dir]);
    assert.deepEqual(sounds.list().map((sound) => sound.id), ['alias', 'real']);
    assert.equal(sounds.resolveUri(join(root, 'elsewhere', 'secret'), 'en'), undefined);
    assert.equal(sounds.resolveUri(join(dir, 'en', 'secret'), 'en'), undefined);
    assert.equal(sounds.resolveUri(join(dir, 'en', 'alias'), 'en'), join(dir, 'en', 'real.wav'));
  });
});
