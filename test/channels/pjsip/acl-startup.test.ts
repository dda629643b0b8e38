// A pjsip.conf whose type=acl cannot be read stops start-up with the line that says why (an ACL
// left out would leave the door open it was written to close), and a reload to such a file is
// refused whole: the running ACL stays.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../../src/config/config.ts';
import { startServer } from '../../../src/server.ts';
import { HAVE_SIPP, sipp } from '../../interop/sipp-peer.ts';

const root = mkdtempSync(join(tmpdir(), 'patchbay-pjsip-acl-'));
after(() => rmSync(root, { recursive: true, force: true }));

const TRANSPORT = '[udp]\ntype=transport\nprotocol=udp\nbind=127.0.0.1:0\n';
const configWith = (file: string, data: string) => loadConfig({ path: null, env: {}, overrides: { http: { port: 0 }, dirs: { data: join(root, data) }, sip: { pjsip_conf: file } } });

test('a bad mask stops start-up naming pjsip.conf:line; a reload to one keeps the running ACL', async () => {
  const bad = join(root, 'bad.conf');
  writeFileSync(bad, `${TRANSPORT}[acl]\ntype=acl\ndeny=0.0.0.0/0\npermit=10.0.0.0/255.0.0.300\n`);
  await assert.rejects(startServer(configWith(bad, 'bad')), (error: Error) => /bad\.conf:8: \[acl\] permit: bad ACL entry '10\.0\.0\.0\/255\.0\.0\.300'/.test(error.message) && /stops start-up/.test(error.message));

  const good = join(root, 'pjsip.conf');
  writeFileSync(good, `${TRANSPORT}[acl]\ntype=acl\ndeny=192.0.2.0/24\n`);
  const server = await startServer(configWith(good, 'good'), { logDestination: { write: () => true } as never });
  try {
    assert.deepEqual(server.core.pjsip.config.acls.get('acl')?.rules.map((rule) => [rule.text.replace(/^!/, ''), rule.allow]), [['192.0.2.0/24', false]]);
    writeFileSync(good, `${TRANSPORT}[acl]\ntype=acl\ndeny=192.0.2.0/99\n`);
    await assert.rejects(server.core.modules.reload('chan_pjsip.so'));
    assert.deepEqual(server.core.pjsip.config.acls.get('acl')?.rules.map((rule) => [rule.text.replace(/^!/, ''), rule.allow]), [['192.0.2.0/24', false]]);
  } finally {
    await server.stop();
  }
});

test("an acl of the YAML's config_objects that cannot be built blocks all SIP traffic, as Asterisk's res_pjsip_acl", { skip: HAVE_SIPP ? false : 'sipp is not installed' }, async () => {
  const config = loadConfig({ path: null, env: {}, overrides: { http: { port: 0 }, dirs: { data: join(root, 'yaml') }, sip: { port: 0, bind: '127.0.0.1' }, config_objects: { res_pjsip: { acl: { a: { deny: '0.0.0.0/0', permit: '10.0.0.0/99' } } } } } });
  const lines: string[] = [];
  const server = await startServer(config, { logDestination: { write: (line: string) => lines.push(line) > 0 } as never });
  try {
    const run = await sipp('options.xml', [`127.0.0.1:${server.core.pjsip.port}`], { cwd: root, timeoutMs: 30_000, trace: true }).done;
    assert.notEqual(run.status, 0);
    assert.match(run.messages, /SIP\/2\.0 403 Forbidden/);
    assert.ok(lines.some((line) => /There is an error in ACL configuration \(a\)\. Blocking ALL SIP traffic\./.test(line)));
  } finally {
    await server.stop();
  }
});
