// A protocol=tls transport's certificates at `module reload chan_pjsip.so` (and SIGHUP, which calls
// the same): a renewed pair on disk is presented to new connections; a broken one is refused with
// an ERROR line and the running certificate stays. A TLS transport whose files cannot be read
// stops start-up, as a port that cannot be bound does.
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { makeTestCa, NO_OPENSSL, type TestCa } from '../../helpers/tls-certs.ts';

async function presentedSerial(port: number): Promise<string> {
  const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  const serial = socket.getPeerCertificate().serialNumber;
  socket.destroy();
  return serial;
}

describe('TLS certificates at reload', { skip: NO_OPENSSL }, () => {
  let ca: TestCa;
  let server: TestServer;
  let cert: string;
  let key: string;

  before(async () => {
    ca = await makeTestCa();
    const first = await ca.issue('patchbay', 'IP:127.0.0.1');
    cert = join(ca.dir, 'live.crt');
    key = join(ca.dir, 'live.key');
    copyFileSync(first.cert, cert);
    copyFileSync(first.key, key);
    server = await startTestServer({
      config_objects: { res_pjsip: { transport: { tls: { protocol: 'tls', bind: '127.0.0.1:0', cert_file: cert, priv_key_file: key } } } },
    });
  });

  after(async () => {
    await server?.stop();
    ca?.remove();
  });

  test('a renewed pair is used for new connections; a broken one keeps the old with an ERROR', async () => {
    const port = server.core.pjsip.listeners().find((listener) => listener.protocol === 'TLS')?.port;
    assert.ok(port);
    const before = await presentedSerial(port);
    const renewed = await ca.issue('patchbay', 'IP:127.0.0.1');
    copyFileSync(renewed.cert, cert);
    copyFileSync(renewed.key, key);
    server.core.pjsip.reload();
    const renewedSerial = await presentedSerial(port);
    assert.notEqual(renewedSerial, before);

    writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n');
    server.core.pjsip.reload();
    assert.equal(await presentedSerial(port), renewedSerial, 'the running certificate stays');
    const errors = server.logLines.filter((line) => line.includes('new certificates refused'));
    assert.equal(errors.length, 1, server.logLines.slice(-5).join(''));
    assert.equal((JSON.parse(errors[0]!) as { level: number }).level, 50, 'an ERROR line');
  });

  test('a TLS transport whose certificate cannot be read stops start-up', async () => {
    await assert.rejects(
      startTestServer({ config_objects: { res_pjsip: { transport: { tls: { protocol: 'tls', bind: '127.0.0.1:0', cert_file: join(ca.dir, 'missing.crt'), priv_key_file: key } } } } }),
      /cert_file .*missing\.crt: ENOENT/,
    );
  });
});
