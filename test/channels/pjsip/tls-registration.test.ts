// Outbound registration over TLS: a `sips:` server_uri (or the registration's TLS transport)
// registers over a TLS connection verified against the CA, from the TLS listener, with a TLS Via
// and a Contact at the TLS listener's port saying so (`;transport=tls`, `sips:` for a sips: AOR).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SipRequest } from '../../../src/sip/message.ts';
import { openSipStack, type SipStack } from '../../../src/sip/stack.ts';
import type { Source } from '../../../src/sip/transport.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { makeTestCa, NO_OPENSSL, type TestCa } from '../../helpers/tls-certs.ts';
import { FAST, waitUntil } from '../../sip/helpers.ts';

describe('outbound registration over TLS', { skip: NO_OPENSSL }, () => {
  let ca: TestCa;
  let registrar: SipStack;
  let server: TestServer;
  const registers: { request: SipRequest; source: Source }[] = [];

  before(async () => {
    ca = await makeTestCa();
    const registrarCert = await ca.issue('registrar', 'IP:127.0.0.1');
    const patchbayCert = await ca.issue('patchbay', 'IP:127.0.0.1');
    registrar = openSipStack(
      {
        host: '127.0.0.1',
        udpPort: false,
        tcpPort: false,
        tlsPort: 0,
        tls: { certFile: registrarCert.cert, privKeyFile: registrarCert.key, method: 'sslv23', verifyServer: false, verifyClient: false, requireClientCert: false, allowWildcardCerts: false },
      },
      {
        onRequest: (request, tx) => {
          registers.push({ request, source: tx.source });
          tx.reply(200, undefined, [['Contact', `${request.get('contact') ?? ''};expires=300`]]);
        },
      },
      { timers: FAST },
    );
    await registrar.transport.start();
    const port = registrar.transport.port('TLS')!;
    server = await startTestServer({
      config_objects: {
        res_pjsip: {
          transport: {
            udp: { protocol: 'udp', bind: '127.0.0.1:0' },
            tls: { protocol: 'tls', bind: '127.0.0.1:0', cert_file: patchbayCert.cert, priv_key_file: patchbayCert.key, ca_list_file: ca.cert, verify_server: 'yes' },
          },
          registration: {
            secure: { server_uri: `sips:127.0.0.1:${port}`, client_uri: `sips:acct@127.0.0.1:${port}`, max_random_initial_delay: 0, expiration: 300, retry_interval: 1 },
            chosen: { server_uri: `sip:127.0.0.1:${port}`, client_uri: `sip:other@127.0.0.1:${port}`, transport: 'tls', contact_user: 'main', max_random_initial_delay: 0, expiration: 300, retry_interval: 1 },
          },
        },
      },
    } as never);
  });

  after(async () => {
    await server?.stop();
    registrar?.layer.close();
    await registrar?.transport.close();
    ca?.remove();
  });

  test('a sips: server_uri, and a registration on a TLS transport, register over verified TLS from the TLS listener', async () => {
    const status = (id: string) => server.core.pjsip.registrations().find((registration) => registration.id === id)?.status;
    await waitUntil(() => status('secure') === 'Registered' && status('chosen') === 'Registered', 10_000, 'both Registered');
    const tlsPort = server.core.pjsip.listeners().find((listener) => listener.protocol === 'TLS')?.port;
    for (const { request, source } of registers) {
      assert.equal(source.transport, 'TLS');
      assert.match(request.get('via') ?? '', new RegExp(`^SIP/2\\.0/TLS 127\\.0\\.0\\.1:${tlsPort};`));
    }
    const secure = registers.find(({ request }) => request.get('to')?.includes('acct@'))!.request;
    assert.match(secure.get('contact') ?? '', new RegExp(`^<sips:s@127\\.0\\.0\\.1:${tlsPort};transport=tls>`));
    const chosen = registers.find(({ request }) => request.get('to')?.includes('other@'))!.request;
    assert.match(chosen.get('contact') ?? '', new RegExp(`^<sip:main@127\\.0\\.0\\.1:${tlsPort};transport=tls>`));
  });
});
