// cdr.conf, cdr_csv.conf and cel.conf from an Asterisk configuration directory become the `cdr` and
// `cel` settings; what Patchbay does not implement is one warning line each, naming file and line.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const root = mkdtempSync(join(tmpdir(), 'patchbay-records-conf-'));
after(() => rmSync(root, { recursive: true, force: true }));

function dirWith(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

test('defaults: CDRs on (SQLite and Master.csv, unanswered=no, congestion=no), CEL off, retention stated', () => {
  const config = loadConfig({ path: null, env: {}, overrides: { dirs: { data: join(root, 'data') } } });
  assert.equal(config.cdr.enabled, true);
  assert.equal(config.cdr.unanswered, false);
  assert.equal(config.cdr.congestion, false);
  assert.equal(config.cdr.csv.enabled, true);
  assert.equal(config.cdr.csv.accountLogs, true);
  assert.equal(config.cdr.retentionDays, 90);
  assert.equal(config.cdr.maxRows, 1_000_000);
  assert.equal(config.cel.enabled, false);
  assert.deepEqual(config.cel.events, []);
});

test('cdr.conf [general] and [csv], cdr_csv.conf and cel.conf are read; the rest is named', () => {
  const dir = dirWith('full', {
    'cdr.conf': ['[general]', 'enable = yes', 'unanswered = yes', 'congestion = yes', 'endbeforehexten = no', 'batch = yes', 'frobnicate = 1', '', '[csv]', 'usegmtime = yes', 'loguniqueid = yes', 'newcdrcolumns = yes', 'silly = 1', '', '[radius]', 'radiuscfg => /x', ''].join('\n'),
    'cdr_csv.conf': ['[csv]', 'loguserfield = yes', ''].join('\n'),
    'cel.conf': ['[general]', 'enable = yes', 'apps = dial,park', 'events = APP_START,CHAN_START,CHAN_END,ANSWER,HANGUP,BRIDGE_ENTER,BRIDGE_EXIT', 'dateformat = %F', '', '[manager]', 'enabled = yes', ''].join('\n'),
  });
  const config = loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data: join(root, 'data2') } } });
  assert.equal(config.cdr.unanswered, true);
  assert.equal(config.cdr.congestion, true);
  assert.equal(config.cdr.csv.useGmtTime, true);
  assert.equal(config.cdr.csv.logUniqueId, true);
  assert.equal(config.cdr.csv.newCdrColumns, true);
  assert.equal(config.cdr.csv.logUserField, true);
  assert.equal(config.cel.enabled, true);
  assert.deepEqual(config.cel.apps, ['dial', 'park']);
  assert.deepEqual(config.cel.events, ['APP_START', 'CHAN_START', 'CHAN_END', 'ANSWER', 'HANGUP', 'BRIDGE_ENTER', 'BRIDGE_EXIT']);
  assert.deepEqual(config.warnings, [
    'cdr.conf:5: endbeforehexten=no is not supported by Patchbay (it behaves as endbeforehexten=yes)',
    'cdr.conf:6: batch is not used: Patchbay always writes records in batches (cdr.flush_ms)',
    'cdr.conf:7: option frobnicate is not supported by Patchbay',
    'cdr.conf:13: [csv] option silly is not supported by Patchbay',
    'cdr.conf:15: [radius]: that backend is not supported by Patchbay (records go to SQLite and Master.csv)',
    'cel.conf:5: option dateformat is not supported by Patchbay',
    'cel.conf:7: [manager]: that backend is not supported by Patchbay (events go to SQLite)',
  ]);
});

test('an unknown CEL event type is a configuration error naming the key', () => {
  const dir = dirWith('bad-cel', { 'cel.conf': '[general]\nenable = yes\nevents = CHAN_START,EXPLODE\n' });
  assert.throws(() => loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data: join(root, 'data3') } } }), (error: unknown) => error instanceof ConfigError && /cel\.events/.test(error.message) && /EXPLODE/.test(error.message));
});

test('YAML: retention and rows are bounded', () => {
  assert.throws(() => loadConfig({ path: null, env: {}, overrides: { cdr: { retention_days: 0 } } }), ConfigError);
  assert.throws(() => loadConfig({ path: null, env: {}, overrides: { cel: { max_rows: 10 } } }), ConfigError);
});
