// SIP over TLS against SIPp. Patchbay listens on a protocol=tls transport only, with a certificate
// from a CA made at test time, verify_client and require_client_cert on. The Debian SIPp has no TLS,
// so test/interop/tls-relay.ts carries its TCP over TLS (a real handshake with a client certificate
// toward Patchbay; a relay certificate Patchbay verifies against the CA the other way):
// - SIPp calls 100 (a Stasis app answers, SIPp hangs up);
// - Patchbay calls an endpoint whose contact is a sips: URI: verified (verify_server) TLS, a sips:
//   Request-URI with a TLS Via, and ACK and BYE over the same connection;
// - a contact whose certificate another CA signed is refused: the call fails, nothing reaches it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestCa, NO_OPENSSL, type CertPair, type TestCa } from '../helpers/tls-certs.ts';
import { HAVE_SIPP, nextEvent, ofChannel, randomPort, sipp, startSippServer, type Json, type SippServer } from './sipp-peer.ts';
import { tcpToTls, tlsToTcp, type TlsRelay } from './tls-relay.ts';
import { readFileSync } from 'node:fs';

describe('SIP over TLS with SIPp', { skip: HAVE_SIPP ? NO_OPENSSL : 'SIPp is not installed' }, () => {
  let ca: TestCa;
  let otherCa: TestCa;
  let patchbayCert: CertPair;
  let phoneCert: CertPair;
  let sippServerCert: CertPair;
  let impostorCert: CertPair;
  let peer: SippServer;
  let calleeRelay: TlsRelay;
  let impostorRelay: TlsRelay;
  const calleePort = randomPort();
  const relays: TlsRelay[] = [];

  before(async () => {
    [ca, otherCa] = await Promise.all([makeTestCa(), makeTestCa('Not Our CA')]);
    patchbayCert = await ca.issue('patchbay', 'DNS:localhost,IP:127.0.0.1');
    phoneCert = await ca.issue('sipp-phone', 'DNS:phone.test');
    sippServerCert = await ca.issue('sipp-server', 'IP:127.0.0.1');
    impostorCert = await otherCa.issue('impostor', 'IP:127.0.0.1');
    calleeRelay = await tlsToTcp({ host: '127.0.0.1', port: calleePort }, { cert: readFileSync(sippServerCert.cert), key: readFileSync(sippServerCert.key) });
    impostorRelay = await tlsToTcp({ host: '127.0.0.1', port: randomPort() }, { cert: readFileSync(impostorCert.cert), key: readFileSync(impostorCert.key) });
    relays.push(calleeRelay, impostorRelay);
    peer = await startSippServer(
      'sipp-tls',
      '[tls-in]\nexten => 100,1,Stasis(tls-app)\n',
      {
        transport: {
          'transport-tls': {
            protocol: 'tls',
            bind: '127.0.0.1:0',
            cert_file: patchbayCert.cert,
            priv_key_file: patchbayCert.key,
            ca_list_file: ca.cert,
            method: 'tlsv1_2',
            verify_server: 'yes',
            verify_client: 'yes',
            require_client_cert: 'yes',
          },
        },
        endpoint: {
          caller: { context: 'tls-in', allow: 'ulaw', transport: 'transport-tls' },
          callee: { context: 'tls-in', allow: 'ulaw', aors: 'callee', transport: 'transport-tls' },
          impostor: { context: 'tls-in', allow: 'ulaw', aors: 'impostor', transport: 'transport-tls' },
        },
        aor: {
          callee: { contact: `sips:sipp@127.0.0.1:${calleeRelay.port}` },
          impostor: { contact: `sip:sipp@127.0.0.1:${impostorRelay.port};transport=tls` },
        },
      },
      'tls-app',
    );
  });

  after(async () => {
    await peer?.close();
    for (const relay of relays) await relay.close();
    ca?.remove();
    otherCa?.remove();
  });

  test('SIPp calls 100 over TLS with a client certificate; the app answers; SIPp hangs up', { timeout: 60_000 }, async () => {
    const [host, port] = peer.target().split(':');
    const relay = await tcpToTls({ host: host!, port: Number(port) }, { ca: readFileSync(ca.cert), cert: readFileSync(phoneCert.cert), key: readFileSync(phoneCert.key), servername: 'localhost' });
    relays.push(relay);
    const run = sipp('tls-call.xml', [`127.0.0.1:${relay.port}`, '-t', 't1', '-s', '100', '-set', 'caller', 'caller', '-set', 'contact', `sip:caller@127.0.0.1:${relay.port};transport=tcp`, '-d', '1000'], { cwd: peer.work });
    const start = await nextEvent(peer.events, (e) => e.type === 'StasisStart', 20_000);
    const channel = start.channel as Json;
    assert.match(channel.name, /^PJSIP\/caller-/);
    assert.equal((await peer.server.ari(`/channels/${channel.id}/answer`, { method: 'POST' })).status, 204);
    await nextEvent(peer.events, ofChannel('ChannelDestroyed', channel.id), 20_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    assert.equal(relay.connections, 1);
  });

  test('Patchbay calls a sips: contact: verified TLS, sips: Request-URI and TLS Via, ACK and BYE on the same connection', { timeout: 60_000 }, async () => {
    const run = sipp('tls-answer.xml', ['-t', 't1', '-set', 'contact', `sips:sipp@127.0.0.1:${calleeRelay.port}`], { cwd: peer.work, port: calleePort });
    // Its TCP port listens before the call's connection is tried (refused at once, else).
    await run.listening;
    const response = await peer.server.ari('/channels?endpoint=PJSIP/callee&app=tls-app', { method: 'POST' });
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    const start = await nextEvent(peer.events, (e) => e.type === 'StasisStart' && e.channel?.id === channel.id, 20_000);
    assert.equal(start.channel.state, 'Up');
    assert.equal((await peer.server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
    await nextEvent(peer.events, ofChannel('ChannelDestroyed', channel.id), 20_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    assert.equal(calleeRelay.connections, 1, 'INVITE, ACK and BYE over one TLS connection');
  });

  test('a contact whose certificate the CA did not sign is refused (verify_server): the call fails, nothing is delivered', { timeout: 60_000 }, async () => {
    const response = await peer.server.ari('/channels?endpoint=PJSIP/impostor&app=tls-app', { method: 'POST' });
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    await nextEvent(peer.events, ofChannel('ChannelDestroyed', channel.id), 20_000);
    assert.equal(impostorRelay.received, 0, 'no SIP sent to it');
  });
});
