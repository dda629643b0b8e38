// Configuration that never fails silently (issue 22): what the sources set is recorded and named,
// extensions.conf switches and autohints are warned about, a stock asterisk.conf's unused
// directories are one line, a stock ari.conf without users means no ARI user, pjsip.conf reads
// #include/#tryinclude, and an unreadable identify is fatal at start-up.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { describeConfigSources, loadConfig } from '../../src/config/config.ts';
import { parseDialplan } from '../../src/dialplan/index.ts';
import { readPjsipConfObjects } from '../../src/channels/pjsip/objects.ts';
import { checkConfiguration } from '../../src/cli/check.ts';

const root = mkdtempSync(join(tmpdir(), 'patchbay-never-silent-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A directory as a fresh Asterisk install leaves it (the parts that matter here). */
function stockDirectory(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

const STOCK_ASTERISK_CONF = `[directories](!)
astcachedir => /var/cache/asterisk
astetcdir => /etc/asterisk
astmoddir => /usr/lib/asterisk/modules
astvarlibdir => /var/lib/asterisk
astdbdir => /var/lib/asterisk
astkeydir => /var/lib/asterisk
astagidir => /var/lib/asterisk/agi-bin
astrundir => /var/run/asterisk
astsbindir => /usr/sbin
`;
const STOCK_ARI_CONF = '[general]\nenabled = yes\npretty = yes\n;[asterisk]\n;type = user\n;password = secret\n';

test("a stock asterisk.conf's unused directories are one warning line naming them all", () => {
  const dir = stockDirectory('asterisk-conf', { 'asterisk.conf': STOCK_ASTERISK_CONF });
  const config = loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data: join(root, 'data1') } } });
  const lines = config.warnings.filter((line) => /not used by Patchbay/.test(line));
  assert.equal(lines.length, 1, lines.join('\n'));
  for (const name of ['astcachedir', 'astmoddir', 'astvarlibdir', 'astdbdir', 'astkeydir', 'astagidir', 'astrundir', 'astsbindir']) assert.match(lines[0]!, new RegExp(name));
  assert.doesNotMatch(lines[0]!, /astetcdir/);
});

test('a stock ari.conf without a type=user section means no ARI user, not the embedded default', () => {
  const dir = stockDirectory('ari-conf', { 'ari.conf': STOCK_ARI_CONF });
  const config = loadConfig({ path: null, env: {}, overrides: { asterisk_config_dir: dir, dirs: { data: join(root, 'data2') } } });
  assert.deepEqual(config.ari.users, []);
  assert.equal(config.usingDefaultPassword, false);
  const report = checkConfiguration(() => config);
  assert.ok(report.lines.some((line) => /no ARI user is configured/.test(line)), report.lines.join('\n'));
  // No ari.conf at all: the embedded default user stays (a first run needs no file).
  const bare = loadConfig({ path: null, env: {}, overrides: { dirs: { data: join(root, 'data3') } } });
  assert.equal(bare.ari.users.length, 1);
});

test('the configuration records its sources and which settings each set', () => {
  const dir = stockDirectory('sources', { 'http.conf': '[general]\nbindport = 8123\n' });
  const yaml = join(root, 'sources.yaml');
  writeFileSync(yaml, `asterisk_config_dir: ${dir}\nlogging:\n  level: warn\ndirs:\n  data: ${join(root, 'data4')}\n`);
  const config = loadConfig({ path: yaml, env: { PATCHBAY_SIP_PORT: '0' } });
  assert.equal(config.origin.file, yaml);
  assert.equal(config.origin.asteriskDir, dir);
  assert.deepEqual(config.origin.environment, ['PATCHBAY_SIP_PORT']);
  assert.equal(config.origin.explicit['logging.level'], yaml);
  assert.equal(config.origin.explicit['sip.port'], 'env PATCHBAY_SIP_PORT');
  assert.equal(config.origin.explicit['http.port'], join(dir, 'http.conf:2'));
  assert.equal(Object.hasOwn(config.origin.explicit, 'sip.bind'), false);
  assert.equal(describeConfigSources(config.origin), `${yaml} + Asterisk directory ${dir} + environment PATCHBAY_SIP_PORT`);
  const defaults = loadConfig({ path: null, env: {} });
  assert.equal(describeConfigSources(defaults.origin), '(embedded defaults)');
  assert.deepEqual(Object.keys(defaults.origin.explicit), []);
});

test('switch => and autohints in extensions.conf are named in a warning with file and line', () => {
  const parsed = parseDialplan('[from-pstn]\nautohints = yes\nswitch => DUNDi/e164\nlswitch => Realtime/x@y\nexten => 1,1,Answer()\n[quiet]\nautohints = no\n', 'extensions.conf');
  const warnings = parsed.warnings ?? [];
  assert.equal(warnings.length, 3, warnings.join('\n'));
  assert.match(warnings[0]!, /^extensions\.conf:2: autohints in context 'from-pstn' is not supported/);
  assert.match(warnings[1]!, /^extensions\.conf:3: switch => DUNDi\/… in context 'from-pstn' is not supported/);
  assert.match(warnings[2]!, /^extensions\.conf:4: lswitch => Realtime/);
  // Still recorded for `dialplan show`.
  assert.equal(parsed.contexts[0]!.switches.length, 2);
});

test('pjsip.conf reads #include and #tryinclude beside it; a missing #include is an error line, a missing #tryinclude is not', () => {
  const dir = stockDirectory('pjsip-include', {
    'pjsip.conf': '[t]\ntype=transport\nprotocol=udp\nbind=127.0.0.1:5060\n#include "pjsip_endpoints.conf"\n#tryinclude pjsip_local.conf\n#include trunks/*.conf\n',
    'pjsip_endpoints.conf': '[alice]\ntype=endpoint\nallow=ulaw\n',
  });
  mkdirSync(join(dir, 'trunks'));
  writeFileSync(join(dir, 'trunks', 'acme.conf'), '[acme]\ntype=identify\nendpoint=alice\nmatch=192.0.2.0/24\n');
  const read = readPjsipConfObjects(join(dir, 'pjsip.conf'));
  assert.deepEqual(read.errors, []);
  assert.deepEqual(read.fatal, []);
  const objects = read.tree.res_pjsip!;
  assert.deepEqual(Object.keys(objects.endpoint ?? {}), ['alice']);
  assert.equal(objects.identify?.acme?.match, '192.0.2.0/24');
  writeFileSync(join(dir, 'pjsip.conf'), '#include missing.conf\n');
  assert.match(readPjsipConfObjects(join(dir, 'pjsip.conf')).errors.join('\n'), /pjsip\.conf:1: .*missing\.conf: no such file/);
  writeFileSync(join(dir, 'pjsip.conf'), '#include ../../etc/passwd\n');
  assert.match(readPjsipConfObjects(join(dir, 'pjsip.conf')).errors.join('\n'), /refused: it leaves the configuration directory/);
});

test('an identify whose match cannot be read is fatal (named with file and line); --check exits with errors', () => {
  const dir = stockDirectory('pjsip-bad-identify', { 'pjsip.conf': '[trunk]\ntype=endpoint\nallow=ulaw\n[trunk]\ntype=identify\nendpoint=trunk\nmatch=203.0.113.0/99\n' });
  const read = readPjsipConfObjects(join(dir, 'pjsip.conf'));
  assert.equal(read.fatal.length, 1);
  assert.match(read.fatal[0]!, /pjsip\.conf:7: \[trunk\] match: '203\.0\.113\.0\/99' is not an address/);
  const config = loadConfig({ path: null, env: {}, overrides: { sip: { pjsip_conf: join(dir, 'pjsip.conf') }, dirs: { data: join(root, 'data5') } } });
  const report = checkConfiguration(() => config);
  assert.equal(report.errors, 1, report.lines.join('\n'));
  assert.match(report.lines.at(-1)!, /would not start/);
});

test('--check of the embedded defaults: no error, and a bad YAML value is one error', () => {
  const ok = checkConfiguration(() => loadConfig({ path: null, env: {} }));
  assert.equal(ok.errors, 0, ok.lines.join('\n'));
  assert.match(ok.lines[0]!, /^configuration: \(embedded defaults\)/);
  assert.ok(ok.lines.some((line) => /^dialplan: \(embedded default\): \d+ context/.test(line)));
  const yaml = join(root, 'bad.yaml');
  writeFileSync(yaml, 'http:\n  port: eighty\n');
  const bad = checkConfiguration(() => loadConfig({ path: yaml, env: {} }));
  assert.equal(bad.errors, 1);
  assert.match(bad.lines[0]!, /^ERROR +config error at http\.port/);
});
