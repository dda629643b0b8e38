// res_parking.conf as res_parking.c reads it: Asterisk's defaults, the default lot implied, each
// option not acted on named, hostile values refused with a warning (never a throw).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LOT_CONFIG, loadParkingConf } from '../../../src/core/parking/parking-conf.ts';
import { withParkingExtensions } from '../../../src/core/parking/parking-extensions.ts';
import { parseDialplan } from '../../../src/dialplan/parser.ts';
import { Dialplan } from '../../../src/dialplan/dialplan.ts';

function withFile(text: string | undefined, check: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-parking-'));
  try {
    if (text !== undefined) writeFileSync(join(dir, 'res_parking.conf'), text);
    check(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const SAMPLE = ['[general]', 'parkeddynamic = yes', '', '[default]', 'parkext => 700', 'parkpos => 701-720', 'context => parkedcalls', 'parkingtime => 45', 'findslot => next', 'parkinghints = yes', 'parkedplay = caller', ''].join('\n');

test('res_parking.conf: without the file only the default lot exists, with Asterisk\'s defaults and no extension', () => {
  for (const dir of [null]) assert.deepEqual([...loadParkingConf(dir).config.lots.values()], [DEFAULT_LOT_CONFIG]);
  withFile(undefined, (dir) => {
    const { config, warnings } = loadParkingConf(dir);
    assert.deepEqual(warnings, []);
    assert.deepEqual(config.lots.get('default'), { ...DEFAULT_LOT_CONFIG, parkext: '', parkposStart: 701, parkposStop: 750, context: 'parkedcalls', parkingtime: 45, comebackToOrigin: true, comebackContext: 'parkedcallstimeout', comebackDialTime: 30 });
  });
});

test('res_parking.conf: the sample\'s lot is read; parkeddynamic and the DTMF-feature options are named as not implemented', () => {
  withFile(SAMPLE, (dir) => {
    const { config, warnings } = loadParkingConf(dir);
    const lot = config.lots.get('default')!;
    assert.deepEqual([lot.parkext, lot.parkposStart, lot.parkposStop, lot.context, lot.parkingtime, lot.findNext, lot.parkingHints], ['700', 701, 720, 'parkedcalls', 45, true, true]);
    assert.equal(warnings.length, 2, warnings.join('\n'));
    assert.match(warnings[0]!, /parkeddynamic is not implemented/);
    assert.match(warnings[1]!, /parkedplay is not implemented/);
  });
});

test('res_parking.conf: a second lot beside the implied default; bad values keep the default with a warning', () => {
  const text = ['[sales]', 'parkext = 800', 'parkpos = 801-803', 'context = salesparking', 'parkingtime = soon', 'comebacktoorigin = perhaps', 'parkpos = 900-1', 'findslot = last', 'parkedmusicclass = jazz', 'comebackcontext = back', 'wobble = 1', ''].join('\n');
  withFile(text, (dir) => {
    const { config, warnings } = loadParkingConf(dir);
    assert.deepEqual([...config.lots.keys()], ['sales', 'default']);
    const sales = config.lots.get('sales')!;
    assert.deepEqual([sales.parkext, sales.parkposStart, sales.parkposStop, sales.context, sales.parkingtime, sales.comebackToOrigin, sales.findNext, sales.mohClass, sales.comebackContext], ['800', 801, 803, 'salesparking', 45, true, false, 'jazz', 'back']);
    assert.equal(warnings.length, 5, warnings.join('\n'));
    assert.match(warnings.join('\n'), /parkingtime "soon" is not a number of seconds/);
    assert.match(warnings.join('\n'), /wobble is not a parking lot option/);
  });
});

test('res_parking.conf: hostile files are bounded: huge ranges, names with separators, a file too large, too many lots', () => {
  withFile('[default]\nparkext = 700\nparkpos = 1-999999\n[bad,lot]\nparkext=1\n', (dir) => {
    const { config, warnings } = loadParkingConf(dir);
    assert.equal(config.lots.get('default')!.parkposStop, 750, 'the range of a million spaces is refused');
    assert.equal(config.lots.has('bad,lot'), false);
    assert.equal(warnings.length, 2, warnings.join('\n'));
  });
  withFile(`[default]\n;${'x'.repeat(300 * 1024)}\n`, (dir) => {
    const { config, warnings } = loadParkingConf(dir);
    assert.equal(config.lots.get('default')!.parkext, '');
    assert.match(warnings[0]!, /larger than/);
  });
  withFile(Array.from({ length: 150 }, (_, i) => `[lot${i}]\nparkext = ${1000 + i}\nparkpos = ${2000 + i}-${2000 + i}\n`).join(''), (dir) => {
    const { config, warnings } = loadParkingConf(dir);
    assert.equal(config.lots.size, 101, '100 lots and the default');
    assert.ok(warnings.some((line) => /more than 100 parking lots/.test(line)));
  });
});

test('res_parking.conf: the lot\'s extensions join the dialplan (Park at parkext, ParkedCall at each space, hints) unless the dialplan has them', () => {
  withFile(SAMPLE, (dir) => {
    const { config } = loadParkingConf(dir);
    const parsed = parseDialplan(['[parkedcalls]', 'exten => 705,1,NoOp(mine)', '[phones]', 'include => parkedcalls', ''].join('\n'));
    const warnings: string[] = [];
    const dialplan = new Dialplan(withParkingExtensions(parsed, config, new Map([['PJSIP_bob', 'PJSIP/bob,30']]), (line) => warnings.push(line)));
    assert.deepEqual([dialplan.find('phones', '700', 1)?.app, dialplan.find('phones', '700', 1)?.appData], ['Park', '']);
    assert.deepEqual([dialplan.find('parkedcalls', '701', 1)?.app, dialplan.find('parkedcalls', '701', 1)?.appData], ['ParkedCall', 'default,701']);
    assert.equal(dialplan.hint('parkedcalls', '702'), 'park:702@parkedcalls');
    assert.equal(dialplan.find('parkedcalls', '705', 1)?.app, 'NoOp', 'the dialplan\'s own extension wins');
    assert.equal(dialplan.exists('parkedcalls', '706'), false, 'Asterisk refuses the spaces from a taken one on');
    assert.match(warnings[0]!, /705@parkedcalls exists already/);
    assert.deepEqual([dialplan.find('park-dial', 'PJSIP_bob', 1)?.app, dialplan.find('park-dial', 'PJSIP_bob', 1)?.appData], ['Dial', 'PJSIP/bob,30']);
  });
});
