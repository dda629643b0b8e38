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
