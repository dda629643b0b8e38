// webrtc=yes turns on what browsers need, as Asterisk's does; the DTLS certificate files go
// together; ws/wss transports are taken (not warned about and ignored any more).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildPjsipObject } from '../../../src/channels/pjsip/config/index.ts';
import type { PjsipEndpoint, PjsipObject, PjsipTransport } from '../../../src/channels/pjsip/config/types.ts';

function endpointOf(value: PjsipObject | undefined): PjsipEndpoint {
  if (value?.type !== 'endpoint') throw new Error('not an endpoint');
  return value;
}

function transportOf(value: PjsipObject | undefined): PjsipTransport {
  if (value?.type !== 'transport') throw new Error('not a transport');
  return value;
}

test('webrtc=yes implies AVPF, ICE, DTLS (fingerprint verified, actpass, a generated certificate), rtcp-mux and BUNDLE', () => {
  const built = buildPjsipObject({ type: 'endpoint', id: 'browser', fields: { allow: 'ulaw', webrtc: 'yes' } });
  assert.deepEqual(built.errors, []);
  assert.deepEqual(built.warnings, []);
  const endpoint = endpointOf(built.value);
  assert.deepEqual(
    { useAvpf: endpoint.useAvpf, iceSupport: endpoint.iceSupport, mediaEncryption: endpoint.mediaEncryption, dtlsVerify: endpoint.dtlsVerify, dtlsSetup: endpoint.dtlsSetup, dtlsAutoGenerateCert: endpoint.dtlsAutoGenerateCert, rtcpMux: endpoint.rtcpMux, bundle: endpoint.bundle },
    { useAvpf: true, iceSupport: true, mediaEncryption: 'dtls', dtlsVerify: 'fingerprint', dtlsSetup: 'actpass', dtlsAutoGenerateCert: true, rtcpMux: true, bundle: true },
  );
  const plain = endpointOf(buildPjsipObject({ type: 'endpoint', id: 'phone', fields: { allow: 'ulaw' } }).value);
  assert.equal(plain.mediaEncryption, 'no');
  assert.equal(plain.iceSupport, false);
});

test('dtls_cert_file without dtls_private_key is an error; with both, no generated certificate', () => {
  const half = buildPjsipObject({ type: 'endpoint', id: 'browser', fields: { allow: 'ulaw', webrtc: 'yes', dtls_cert_file: '/etc/cert.pem' } });
  assert.match(half.errors.join('\n'), /dtls_private_key/);
  const both = buildPjsipObject({ type: 'endpoint', id: 'browser', fields: { allow: 'ulaw', webrtc: 'yes', dtls_cert_file: '/etc/cert.pem', dtls_private_key: '/etc/key.pem' } });
  assert.deepEqual(both.errors, []);
  assert.equal(endpointOf(both.value).dtlsAutoGenerateCert, false);
});

test('protocol=ws and wss transports are taken; flow is still warned about', () => {
  for (const protocol of ['ws', 'wss']) {
    const built = buildPjsipObject({ type: 'transport', id: protocol, fields: { protocol } });
    assert.deepEqual(built.warnings, [], protocol);
    assert.equal(transportOf(built.value).protocol, protocol);
  }
  const flow = buildPjsipObject({ type: 'transport', id: 'flow', fields: { protocol: 'flow' } });
  assert.equal(flow.value, undefined);
  assert.match(flow.warnings.join('\n'), /protocol=flow is not implemented/);
});

test('what is not built is named: DTLS without ICE', () => {
  const bare = buildPjsipObject({ type: 'endpoint', id: 'b', fields: { allow: 'ulaw', media_encryption: 'dtls' } });
  assert.match(bare.warnings.join('\n'), /without ice_support=yes/);
});
