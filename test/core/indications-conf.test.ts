// indications.conf read as Asterisk's loader reads it (main/indications.c): the file's countries
// replace the built-in zones, `[general] country=` is the default, any tone name is kept, a list
// Asterisk could not parse is named with its line and left out, a country without a description
// or tone is refused, and a hostile file (too big, binary, endless) leaves the built-in zones.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, test } from 'node:test';
import { loadIndicationsConf } from '../../src/core/indications-conf.ts';
import { asteriskToneList } from '../../src/media/tones.ts';
import { defaultToneZone, getToneZone, resolveTone, toneZoneCountries } from '../../src/media/tonezones.ts';

const dir = mkdtempSync(join(tmpdir(), 'patchbay-indications-unit-'));
const write = (text: string | Buffer): void => writeFileSync(join(dir, 'indications.conf'), text);

afterEach(() => {
  // The built-in zones back for the next test.
  loadIndicationsConf(null);
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('indications.conf', () => {
  test("its countries replace the built-in ones, [general] country= is the default, and any tone name is looked up", () => {
    write(
      [
        '[general]',
        'country = nl',
        '',
        '[nl]',
        'description = Netherlands',
        'ringcadence = 1000,4000',
        'dial = 425',
        'ring = 425/1000,0/4000',
        'busy = 425/500|0/500',
        'stutter = !425/100,!0/100,!425/100,!0/100,425',
        'record = 1400/500,0/15000',
        '',
        '[se]',
        'description = Sweden',
        'ring = 425/1000,0/5000',
        '',
      ].join('\n'),
    );
    assert.deepEqual(loadIndicationsConf(dir), []);
    assert.deepEqual(toneZoneCountries(), ['nl', 'se']);
    assert.equal(defaultToneZone(), 'nl');
    assert.equal(getToneZone('us'), undefined, 'the built-in zones are gone');
    assert.deepEqual(getToneZone('NL')?.ringCadence, [1000, 4000]);
    assert.deepEqual(resolveTone('ring')?.parts.map((part) => [part.frequencies, part.durationMs]), [[[425], 1000], [[0], 4000]]);
    // `|` separates parts as `,` does.
    assert.equal(resolveTone('busy', 'nl')?.parts.length, 2);
    const stutter = resolveTone('stutter', 'nl');
    assert.equal(stutter?.parts.length, 5);
    assert.equal(stutter?.repeatFrom, 4, 'the ! parts play once, the last repeats');
    // A country without that tone has none; a literal list is still a list.
    assert.equal(resolveTone('busy', 'se'), undefined);
    assert.equal(resolveTone('440/100', 'se')?.parts.length, 1);
  });

  test('a list Asterisk cannot parse, an invalid country and a bad cadence are named with their line and left out', () => {
    write(
      [
        '[general]',
        'country = zz',
        '[nl]',
        'description = Netherlands',
        'ring = 425/1000,0/4000',
        'busy = 425+abc/500',
        'ringcadence = 1000,soon',
        '[nodesc]',
        'ring = 440',
        '[notone]',
        'description = nothing to hear',
        '[bad country!]',
        'description = x',
        'ring = 440',
      ].join('\n'),
    );
    const warnings = loadIndicationsConf(dir);
    assert.ok(warnings.some((line) => line.startsWith('indications.conf:6:') && line.includes("busy tone cannot be parsed at '425+abc/500'")), warnings.join('\n'));
    assert.ok(warnings.some((line) => line.startsWith('indications.conf:7:') && line.includes("'soon'")), warnings.join('\n'));
    assert.ok(warnings.some((line) => line.includes('[nodesc] has no description')), warnings.join('\n'));
    assert.ok(warnings.some((line) => line.includes('[notone] has no tone')), warnings.join('\n'));
    assert.ok(warnings.some((line) => line.includes('is not a country code')), warnings.join('\n'));
    assert.ok(warnings.some((line) => line.includes('country=zz is no country of the file')), warnings.join('\n'));
    assert.deepEqual(toneZoneCountries(), ['nl']);
    assert.equal(defaultToneZone(), 'nl', 'the first country is the default');
    assert.equal(resolveTone('busy', 'nl'), undefined, 'the refused tone is left out');
    assert.deepEqual(getToneZone('nl')?.ringCadence, [1000]);
  });

  test("Asterisk's part grammar: f1+f2/ms, f1*f2/ms, f1/ms, f1, M notes, ! and |; up to the first empty part", () => {
    for (const good of ['350+440', '440+480/2000,0/4000', '!950/330,!1400/330,0', '400*16/1000,0/2000', 'M60+M64/500', 'M69', '425/100|0/100']) {
      assert.ok('list' in asteriskToneList(good), good);
    }
    assert.deepEqual(asteriskToneList('440/100,,480'), { list: '440/100' });
    for (const [bad, at] of [['440+480+620', '440+480+620'], ['440.5/100', '440.5/100'], ['ring', 'ring'], ['440/abc', '440/abc'], ['', '']] as const) {
      assert.deepEqual(asteriskToneList(bad), { unparsable: at }, bad);
    }
  });

  test('no file, a file too big or binary junk: the built-in zones stay, nothing throws', () => {
    assert.deepEqual(loadIndicationsConf(dir + '-missing'), []);
    assert.ok(getToneZone('us'));
    write(Buffer.alloc(1024 * 1024 + 1, 0x61));
    assert.match(loadIndicationsConf(dir).join('\n'), /larger than/);
    assert.equal(defaultToneZone(), 'us');
    write(Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7919) % 256)));
    loadIndicationsConf(dir);
    assert.ok(getToneZone('us'));
    // Many countries and tones: bounded.
    const lines: string[] = [];
    for (let zone = 0; zone < 600; zone++) lines.push(`[c${zone}]`, 'description = d', ...Array.from({ length: zone === 0 ? 70 : 1 }, (_, tone) => `t${tone} = 440/100`));
    write(lines.join('\n'));
    const warnings = loadIndicationsConf(dir);
    assert.equal(toneZoneCountries().length, 500);
    assert.equal(Object.keys(getToneZone('c0')!.tones).length, 64);
    assert.ok(warnings.length <= 201, `${warnings.length} warning lines at most 201`);
    // More entries than a tone plan needs: the file is refused whole.
    write(Array.from({ length: 25_000 }, (_, tone) => (tone === 0 ? '[c]\ndescription = d' : `t${tone} = 440`)).join('\n'));
    assert.match(loadIndicationsConf(dir).join('\n'), /too many entries/);
    assert.ok(getToneZone('us'));
  });

  test('a reload replaces the zones in force; a reload of a file missing, unparsable or without a valid country keeps them', () => {
    write(['[general]', 'country = nl', '', '[nl]', 'description = Netherlands', 'ring = 425/1000,0/4000', ''].join('\n'));
    assert.deepEqual(loadIndicationsConf(dir), []);
    write(['[general]', 'country = se', '', '[se]', 'description = Sweden', 'ring = 425/1000,0/5000', ''].join('\n'));
    assert.deepEqual(loadIndicationsConf(dir, { reload: true }), []);
    assert.equal(defaultToneZone(), 'se');
    assert.deepEqual(toneZoneCountries(), ['se']);
    for (const text of ['[general]\ncountry = us\n[us\ndescription = broken\n', '[xx]\nring = 440\n']) {
      write(text);
      const warnings = loadIndicationsConf(dir, { reload: true });
      assert.ok(warnings.some((line) => line.includes('the tone zones in force stay')), warnings.join('\n'));
      assert.equal(defaultToneZone(), 'se');
      assert.deepEqual(toneZoneCountries(), ['se']);
    }
    rmSync(join(dir, 'indications.conf'));
    assert.ok(loadIndicationsConf(dir, { reload: true }).some((line) => line.includes('not reloaded; the tone zones in force stay')));
    assert.deepEqual(toneZoneCountries(), ['se']);
  });
});
