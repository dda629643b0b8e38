// Where sips: and ;transport=tls URIs go (RFC 3261 §19.1.2, §26.2.2; RFC 3263's default ports
// without DNS), where a response over TLS goes (§18.2.2), and the Contact Patchbay writes for a
// dialog over TLS (pjsip's form: ;transport=tls, sips: for a SIPS dialog).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { contactUri } from '../../src/channels/pjsip/addresses.ts';
import { uriDestination } from '../../src/sip/dialog.ts';
import { parseVia } from '../../src/sip/message.ts';
import { responseDestination, type TcpConnection } from '../../src/sip/transport.ts';
import { formatUri, parseUri, type SipUri } from '../../src/sip/uri.ts';

const sip = (text: string): SipUri => {
  const uri = parseUri(text);
  assert.ok(uri && uri.kind === 'sip', text);
  return uri;
};

describe('sips: and transport=tls routing', () => {
  test('a sips: URI goes over TLS, to 5061 unless it names a port, whatever its transport parameter says', () => {
    assert.deepEqual(uriDestination(sip('sips:alice@192.0.2.1')), { transport: 'TLS', host: '192.0.2.1', port: 5061 });
    assert.deepEqual(uriDestination(sip('sips:alice@192.0.2.1:5071')), { transport: 'TLS', host: '192.0.2.1', port: 5071 });
    assert.deepEqual(uriDestination(sip('sips:alice@192.0.2.1;transport=tcp')), { transport: 'TLS', host: '192.0.2.1', port: 5061 });
  });

  test(';transport=tls on a sip: URI is TLS (5061 by default); other transports keep 5060', () => {
    assert.deepEqual(uriDestination(sip('sip:bob@phone.example;transport=TLS')), { transport: 'TLS', host: 'phone.example', port: 5061 });
    assert.deepEqual(uriDestination(sip('sip:bob@[2001:db8::1]:5062;transport=tls')), { transport: 'TLS', host: '2001:db8::1', port: 5062 });
    assert.deepEqual(uriDestination(sip('sip:bob@192.0.2.2;transport=tcp')), { transport: 'TCP', host: '192.0.2.2', port: 5060 });
    assert.deepEqual(uriDestination(sip('sip:bob@192.0.2.2'), 'TLS'), { transport: 'TLS', host: '192.0.2.2', port: 5061 });
  });

  test('a response to a request over TLS takes its connection; without one, Via TLS means 5061', () => {
    const connection: TcpConnection = { id: 1, protocol: 'TLS', remoteAddress: '192.0.2.3', remotePort: 40001, localAddress: '127.0.0.1', localPort: 5061, closed: false };
    const via = parseVia('SIP/2.0/TLS 192.0.2.3;branch=z9hG4bK-1;rport')!;
    assert.deepEqual(responseDestination(via, { transport: 'TLS', address: '192.0.2.3', port: 40001, connection, listener: 'tls' }), {
      transport: 'TLS',
      host: '192.0.2.3',
      port: 40001,
      connection,
      listener: 'tls',
    });
    assert.deepEqual(responseDestination(via), { transport: 'TLS', host: '192.0.2.3', port: 5061 });
  });

  test('our Contact over TLS: ;transport=tls, and sips: in a SIPS dialog; none over UDP', () => {
    assert.equal(formatUri(contactUri('alice', '203.0.113.5', 5061, 'TLS', false)), 'sip:alice@203.0.113.5:5061;transport=tls');
    assert.equal(formatUri(contactUri('alice', '203.0.113.5', 5061, 'TLS', true)), 'sips:alice@203.0.113.5:5061;transport=tls');
    assert.equal(formatUri(contactUri('alice', '203.0.113.5', 5060, 'TCP', false)), 'sip:alice@203.0.113.5:5060;transport=tcp');
    assert.equal(formatUri(contactUri('alice', '203.0.113.5', 5060, 'UDP', false)), 'sip:alice@203.0.113.5:5060');
  });
});
