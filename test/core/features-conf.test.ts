import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PICKUP_FEATURES, loadFeaturesConf } from '../../src/core/features-conf.ts';

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
  assert.deepEqual(loadFeaturesConf(null), { features: DEFAULT_PICKUP_FEATURES, warnings: [] });
  withFile(undefined, (dir) => assert.deepEqual(loadFeaturesConf(dir), { features: DEFAULT_PICKUP_FEATURES, warnings: [] }));
});

test('features.conf: [general] pickupexten and the pickup sounds are read; every other option and section is named', () => {
  withFile('[general]\npickupexten = *9\npickupsound = beep\npickupfailsound = beeperr\nfeaturedigittimeout = 1000\n[featuremap]\nblindxfer => #1\n', (dir) => {
    const { features, warnings } = loadFeaturesConf(dir);
    assert.deepEqual(features, { pickupExten: '*9', pickupSound: 'beep', pickupFailSound: 'beeperr' });
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /featuredigittimeout is not implemented/);
    assert.match(warnings[1]!, /\[featuremap\] is not implemented/);
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
