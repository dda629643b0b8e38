// pjsip.conf reload (`module reload chan_pjsip.so`, which SIGHUP runs): endpoints, identifies and
// the rest follow the file without a restart; a file with an error keeps the running objects; a
// changed transport is named as needing a restart and the listener stays.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { loadConfig } from '../../../src/config/config.ts';
import { startServer } from '../../../src/server.ts';

const root = mkdtempSync(join(tmpdir(), 'patchbay-pjsip-reload-'));
after(() => rmSync(root, { recursive: true, force: true }));

const TRANSPORT = '[udp]\ntype=transport\nprotocol=udp\nbind=127.0.0.1:0\n';
const endpoint = (name: string, context = 'default') => `[${name}]\ntype=endpoint\ncontext=${context}\nallow=ulaw\n`;

test('module reload chan_pjsip.so: endpoints follow pjsip.conf, an invalid file keeps them, transports wait for a restart', async () => {
  const file = join(root, 'pjsip.conf');
  writeFileSync(file, TRANSPORT + endpoint('alice') + endpoint('bob'));
  const config = loadConfig({ path: null, env: {}, overrides: { http: { port: 0 }, dirs: { data: join(root, 'data') }, sip: { pjsip_conf: file } } });
  const lines: string[] = [];
  const server = await startServer(config, {
    logDestination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  });
  const endpoints = () => server.core.pjsip.config.endpoints;
  try {
    const port = server.core.pjsip.port;
    assert.deepEqual([...endpoints().keys()].sort(), ['alice', 'bob']);
    // bob removed, carol added, alice's context changed.
    writeFileSync(file, TRANSPORT + endpoint('alice', 'vip') + endpoint('carol'));
    await server.core.modules.reload('chan_pjsip.so');
    assert.deepEqual([...endpoints().keys()].sort(), ['alice', 'carol']);
    assert.equal(endpoints().get('alice')?.context, 'vip');
    // An invalid value: refused whole, the running objects stay.
    writeFileSync(file, TRANSPORT + endpoint('alice') + '[dave]\ntype=endpoint\ndtmf_mode=smoke-signals\n');
    await assert.rejects(server.core.modules.reload('chan_pjsip.so'));
    assert.deepEqual([...endpoints().keys()].sort(), ['alice', 'carol']);
    assert.ok(lines.some((line) => /dtmf_mode/.test(line)), 'the error is logged');
    // A transport moved: named, and SIP keeps listening where it was.
    writeFileSync(file, TRANSPORT.replace('127.0.0.1:0', '127.0.0.1:1') + endpoint('alice'));
    await server.core.modules.reload('chan_pjsip.so');
    assert.ok(lines.some((line) => /transports changed \(udp changed\).*restart to apply/.test(line)));
    assert.equal(server.core.pjsip.port, port);
    assert.deepEqual([...endpoints().keys()], ['alice']);
  } finally {
    await server.stop();
  }
});
