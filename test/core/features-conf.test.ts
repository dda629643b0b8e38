import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BRIDGE_FEATURES, DEFAULT_PICKUP_FEATURES, loadFeaturesConf } from '../../src/core/features-conf.ts';

function withFile(text: string | undefined, check: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-features-'));
  try {
    if (text !== undefined) writeFileSync(join(dir, 'features.conf'), text);
    check(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('features.conf: without the file (or a directory) the pickup extension is *8, no sounds', () => {
  assert.deepEqual(loadFeaturesConf(null), { features: DEFAULT_PICKUP_FEATURES, bridgeFeatures: DEFAULT_BRIDGE_FEATURES, warnings: [] });
  withFile(undefined, (dir) => assert.deepEqual(loadFeaturesConf(dir), { features: DEFAULT_PICKUP_FEATURES, bridgeFeatures: DEFAULT_BRIDGE_FEATURES, warnings: [] }));
});

test('features.conf: [general] pickupexten and the pickup sounds are read; an unknown option and section are named', () => {
  withFile('[general]\npickupexten = *9\npickupsound = beep\npickupfailsound = beeperr\natxferabort = *1\n[applicationmap]\nx => *5,self,Playback(beep)\n', (dir) => {
    const { features, warnings } = loadFeaturesConf(dir);
    assert.deepEqual(features, { pickupExten: '*9', pickupSound: 'beep', pickupFailSound: 'beeperr' });
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /atxferabort is not implemented/);
    assert.match(warnings[1]!, /\[applicationmap\] is not implemented/);
  });
});

test("features.conf: Asterisk 22's defaults without the file: blindxfer #, disconnect *, the rest none; 1000 ms between feature digits, 3 s between transfer digits", () => {
  const { featureMap, options } = DEFAULT_BRIDGE_FEATURES;
  assert.deepEqual(featureMap, { blindxfer: '#', disconnect: '*', automixmon: '', atxfer: '', parkcall: '', automon: '' });
  assert.equal(options.featureDigitTimeoutMs, 1000);
  assert.equal(options.transferDigitTimeoutMs, 3000);
  assert.equal(options.transferDialAttempts, 3);
  assert.equal(options.transferAnnounceSound, 'pbx-transfer');
  assert.equal(options.xferSound, 'beep');
  assert.equal(options.xferFailSound, 'beeperr');
});

test('features.conf: [featuremap] codes and the [general] feature options are read; what is parsed but not carried out is named', () => {
  const text = [
    '[general]',
    'featuredigittimeout = 1500',
    'transferdigittimeout => 5',
    'transferdialattempts = 2',
    'transferretrysound = again',
    'transferinvalidsound = ',
    'xfersound = ding',
    'courtesytone = beep',
    '[featuremap]',
    'blindxfer => #1',
    'disconnect => *0',
    'automixmon => *3',
    'atxfer => *2',
    '',
  ].join('\n');
  withFile(text, (dir) => {
    const { bridgeFeatures, warnings } = loadFeaturesConf(dir);
    assert.deepEqual(bridgeFeatures.featureMap, { blindxfer: '#1', disconnect: '*0', automixmon: '*3', atxfer: '*2', parkcall: '', automon: '' });
    assert.equal(bridgeFeatures.options.featureDigitTimeoutMs, 1500);
    assert.equal(bridgeFeatures.options.transferDigitTimeoutMs, 5000);
    assert.equal(bridgeFeatures.options.transferDialAttempts, 2);
    assert.equal(bridgeFeatures.options.transferRetrySound, 'again');
    assert.equal(bridgeFeatures.options.transferInvalidSound, '');
    assert.equal(bridgeFeatures.options.xferSound, 'ding');
    assert.equal(bridgeFeatures.options.courtesyTone, 'beep');
    assert.deepEqual(warnings, ['features.conf: [featuremap] atxfer (*2) is not implemented by Patchbay; its digits pass to the other party']);
  });
});

test('features.conf: bad feature codes and numbers keep what was in force, each named; bounded', () => {
  const text = [
    '[general]',
    'featuredigittimeout = soon',
    'transferdigittimeout = 0',
    'transferdialattempts = 11',
    `xfersound = ${'x'.repeat(300)}`,
    '[featuremap]',
    'blindxfer => #x',
    'disconnect => *0123456789012',
    'myfeature => *7',
    '',
  ].join('\n');
  withFile(text, (dir) => {
    const { bridgeFeatures, warnings } = loadFeaturesConf(dir);
    assert.deepEqual(bridgeFeatures, DEFAULT_BRIDGE_FEATURES);
    assert.equal(warnings.length, 7);
    assert.match(warnings[0]!, /featuredigittimeout "soon" is not a whole number from 1 to 60000; 1000 stays/);
    assert.match(warnings[1]!, /transferdigittimeout "0" is not a whole number from 1 to 600; 3 stays/);
    assert.match(warnings[2]!, /transferdialattempts "11" is not a whole number from 1 to 10; 3 stays/);
    assert.match(warnings[3]!, /xfersound is longer than 256 characters/);
    assert.match(warnings[4]!, /blindxfer "#x" is not a DTMF code .*; # stays/);
    assert.match(warnings[5]!, /disconnect "\*0123456789012" is not a DTMF code/);
    assert.match(warnings[6]!, /myfeature is not a built-in feature/);
  });
});

test('features.conf: a bad pickupexten keeps the default, an empty one turns the extension off, a huge file is not read', () => {
  withFile('[general]\npickupexten = *8 or so\n', (dir) => {
    const { features, warnings } = loadFeaturesConf(dir);
    assert.equal(features.pickupExten, '*8');
    assert.match(warnings[0]!, /is not an extension/);
  });
  withFile('[general]\npickupexten =\n', (dir) => assert.equal(loadFeaturesConf(dir).features.pickupExten, ''));
  withFile(`[general]\n;${'x'.repeat(300 * 1024)}\n`, (dir) => {
    const { features, warnings } = loadFeaturesConf(dir);
    assert.deepEqual(features, DEFAULT_PICKUP_FEATURES);
    assert.match(warnings[0]!, /larger than/);
  });
});
