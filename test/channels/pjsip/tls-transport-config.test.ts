// protocol=tls transports as Asterisk 22 reads them from pjsip.conf and the YAML config_objects:
// the certificate files, method, cipher and the verify options, with their defaults; a TLS
// transport without a certificate, or with a method node:tls cannot speak, is left out with an error.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildPjsipConfig, loadPjsipConf } from '../../../src/channels/pjsip/config/index.ts';
import { listenersOf } from '../../../src/channels/pjsip/listeners.ts';

describe('protocol=tls transports', () => {
  test('every TLS option is read, and the listener gets them as TLS settings', () => {
    const { config, errors, warnings } = loadPjsipConf(
      `[transport-tls]
type=transport
protocol=tls
bind=127.0.0.1:5061
cert_file=/etc/asterisk/keys/asterisk.crt
priv_key_file=/etc/asterisk/keys/asterisk.key
password=key secret
ca_list_file=/etc/asterisk/keys/ca.crt
ca_list_path=/etc/ssl/certs
method=tlsv1_2
cipher=ECDHE-RSA-AES128-GCM-SHA256,ECDHE-RSA-AES256-GCM-SHA384
verify_server=yes
verify_client=yes
require_client_cert=yes
allow_wildcard_certs=yes
`,
      'pjsip.conf',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(warnings, []);
    const transport = config.transports.get('transport-tls');
    assert.equal(transport?.protocol, 'tls');
    assert.equal(transport.certFile, '/etc/asterisk/keys/asterisk.crt');
    assert.equal(transport.privKeyFile, '/etc/asterisk/keys/asterisk.key');
    assert.equal(transport.password, 'key secret');
    assert.equal(transport.caListFile, '/etc/asterisk/keys/ca.crt');
    assert.equal(transport.caListPath, '/etc/ssl/certs');
    assert.equal(transport.method, 'tlsv1_2');
    assert.equal(transport.cipher, 'ECDHE-RSA-AES128-GCM-SHA256,ECDHE-RSA-AES256-GCM-SHA384');
    assert.deepEqual([transport.verifyServer, transport.verifyClient, transport.requireClientCert, transport.allowWildcardCerts], [true, true, true, true]);
    const [listener] = listenersOf([...config.transports.values()], undefined);
    assert.deepEqual(listener?.protocols, ['TLS']);
    assert.deepEqual({ host: listener?.host, port: listener?.port }, { host: '127.0.0.1', port: 5061 });
    assert.equal(listener?.tls?.certFile, '/etc/asterisk/keys/asterisk.crt');
    assert.equal(listener?.tls?.method, 'tlsv1_2');
    assert.equal(listener?.tls?.requireClientCert, true);
  });

  test("Asterisk's defaults: sslv23, nothing verified, no wildcard certificates", () => {
    const { config, errors } = loadPjsipConf('[t]\ntype=transport\nprotocol=tls\nbind=0.0.0.0:5061\ncert_file=a.crt\npriv_key_file=a.key\n', 'pjsip.conf');
    assert.deepEqual(errors, []);
    const transport = config.transports.get('t');
    assert.equal(transport?.method, 'sslv23');
    assert.deepEqual([transport.verifyServer, transport.verifyClient, transport.requireClientCert, transport.allowWildcardCerts], [false, false, false, false]);
    assert.equal(listenersOf([transport], undefined)[0]?.tls?.caListFile, undefined);
  });

  test('a TLS transport without cert_file and priv_key_file, or with sslv3 or an unknown method, is left out with an error', () => {
    const { config, errors } = loadPjsipConf(
      '[bare]\ntype=transport\nprotocol=tls\nbind=0.0.0.0:5061\n[old]\ntype=transport\nprotocol=tls\ncert_file=a\npriv_key_file=b\nmethod=sslv3\n[odd]\ntype=transport\nprotocol=tls\ncert_file=a\npriv_key_file=b\nmethod=tls9\n',
      'pjsip.conf',
    );
    assert.equal(config.transports.size, 0);
    assert.ok(errors.some((line) => /\[bare\].*cert_file.*required/.test(line)), errors.join('\n'));
    assert.ok(errors.some((line) => /\[old\].*SSLv2 and SSLv3 are not supported/.test(line)), errors.join('\n'));
    assert.ok(errors.some((line) => /\[odd\].*method/.test(line)), errors.join('\n'));
  });

  test('the YAML config_objects say the same', () => {
    const built = buildPjsipConfig([
      { type: 'transport', id: 'tls', fields: { protocol: 'tls', bind: '127.0.0.1:0', cert_file: 'a.crt', priv_key_file: 'a.key', verify_server: true, method: 'tlsv1_3' } },
    ]);
    assert.deepEqual(built.errors, []);
    const transport = built.value.transports.get('tls');
    assert.equal(transport?.protocol, 'tls');
    assert.equal(transport.method, 'tlsv1_3');
    assert.equal(transport.verifyServer, true);
    assert.equal(transport.bind.port, 0);
  });
});
