// webrtc=yes turns on what browsers need, as Asterisk's does; the DTLS certificate files must be
// readable (the key may sit in the certificate's file); ws/wss transports are taken (not warned about and ignored any more).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

test('dtls_cert_file and dtls_private_key must name readable files (as Asterisk); the key defaults to the certificate\'s file; with either, no generated certificate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-dtls-'));
  try {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    writeFileSync(cert, 'not parsed at configuration time\n');
    writeFileSync(key, 'not parsed at configuration time\n');
    const missing = buildPjsipObject({ type: 'endpoint', id: 'browser', fields: { allow: 'ulaw', webrtc: 'yes', dtls_cert_file: join(dir, 'absent.pem') } });
    assert.match(missing.errors.join('\n'), /dtls_cert_file.*not a readable file/);
    const certOnly = buildPjsipObject({ type: 'endpoint', id: 'browser', fields: { allow: 'ulaw', webrtc: 'yes', dtls_cert_file: cert } });
    assert.deepEqual(certOnly.errors, []);
    assert.equal(endpointOf(certOnly.value).dtlsAutoGenerateCert, false);
    const both = buildPjsipObject({ type: 'endpoint', id: 'browser', fields: { allow: 'ulaw', webrtc: 'yes', dtls_cert_file: cert, dtls_private_key: key } });
    assert.deepEqual(both.errors, []);
    assert.equal(endpointOf(both.value).dtlsAutoGenerateCert, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
