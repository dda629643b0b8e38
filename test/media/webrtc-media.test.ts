// WebRTC media beneath the RTP stream, against a peer built here as a browser would behave: ICE-lite
// answers only checks with our credentials (integrity, fingerprint), DTLS-SRTP keys both sides from
// one handshake, SRTP flows both ways, a certificate that does not match the SDP fingerprint fails
// the media, and nothing is sent before the checks and the keys.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, test } from 'node:test';
import { classes, parseMessage } from 'werift-ice';
import { generateDtlsIdentity, type DtlsIdentity } from '../../src/media/webrtc/dtls-identity.ts';
import { CONSENT_TIMEOUT_MS, IceLiteResponder } from '../../src/media/webrtc/ice-lite.ts';
import { SecureMediaSocket } from '../../src/media/webrtc/secure-media-socket.ts';
import { bindingRequest, browserLikePeer, peerCertificate, peerSrtpSession, protectedCopy, type PeerCertificate } from '../helpers/browser-like-peer.ts';
import { waitUntil } from '../sip/helpers.ts';

test('ICE-lite answers a check with our ufrag and password, with XOR-MAPPED-ADDRESS, integrity and fingerprint; drops the rest', () => {
  const ice = new IceLiteResponder();
  ice.setRemote('peer');
  const { ufrag, pwd } = ice.local;
  assert.match(ufrag, /^[A-Za-z0-9+/]{8}$/);
  assert.match(pwd, /^[A-Za-z0-9+/]{24}$/);
  const answer = ice.handle(bindingRequest(`${ufrag}:peer`, pwd), '192.0.2.7', 40000, 1000);
  assert.ok(answer);
  const parsed = parseMessage(answer, Buffer.from(pwd, 'utf8'));
  assert.ok(parsed, 'the answer parses with our password (integrity checked)');
  assert.equal(parsed.messageClass, classes.RESPONSE);
  assert.deepEqual(parsed.getAttributeValue('XOR-MAPPED-ADDRESS'), ['192.0.2.7', 40000]);
  assert.ok(parsed.attributesKeys.includes('FINGERPRINT'));
  assert.deepEqual(ice.selected, { address: '192.0.2.7', port: 40000 });

  // A wrong password, another ufrag, the far end's ufrag wrong, garbage: dropped unanswered, the pair kept.
  assert.equal(ice.handle(bindingRequest(`${ufrag}:peer`, 'not-the-password-at-all'), '198.51.100.1', 1, 1001), undefined);
  assert.equal(ice.handle(bindingRequest(`other:peer`, pwd), '198.51.100.1', 1, 1001), undefined);
  assert.equal(ice.handle(bindingRequest(`${ufrag}:someone`, pwd), '198.51.100.1', 1, 1001), undefined);
  assert.equal(ice.handle(Buffer.alloc(40, 1), '198.51.100.1', 1, 1001), undefined);
  assert.equal(ice.refused, 4);
  assert.deepEqual(ice.selected, { address: '192.0.2.7', port: 40000 });

  // A nomination moves the pair; consent lapses 30 s after the last check of the pair (RFC 7675).
  assert.ok(ice.handle(bindingRequest(`${ufrag}:peer`, pwd, { nominate: true }), '192.0.2.8', 40002, 2000));
  assert.deepEqual(ice.selected, { address: '192.0.2.8', port: 40002 });
  assert.equal(ice.consented(2000 + CONSENT_TIMEOUT_MS), true);
  assert.equal(ice.consented(2001 + CONSENT_TIMEOUT_MS), false);
});

// ---- a secured socket against a browser-like peer

let identity: DtlsIdentity;
let peerCert: PeerCertificate;
before(async () => {
  identity = await generateDtlsIdentity();
  peerCert = await peerCertificate();
});

const sockets: dgram.Socket[] = [];
after(() => {
  for (const socket of sockets) socket.close();
});

async function udp(): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return socket;
}

/** The browser's side, its socket closed after the tests. */
async function browserPeer(server: SecureMediaSocket, serverPort: number) {
  const peer = await browserLikePeer(server.ice.local, serverPort, peerCert);
  sockets.push(peer.socket);
  return peer;
}

function rtpPacket(sequence: number): Buffer {
  const packet = Buffer.alloc(172, 0xd5);
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt16BE(sequence, 2);
  packet.writeUInt32BE(sequence * 160, 4);
  packet.writeUInt32BE(0x1234, 8);
  return packet;
}

/** What the stream does with the socket as its protection: unprotect what arrives in place; protect, then send. */
function streamReads(server: SecureMediaSocket, into: Buffer[]): void {
  server.on('message', (message) => {
    const length = server.unprotectRtp(message, message.length);
    into.push(length < 0 ? Buffer.alloc(0) : Buffer.from(message.subarray(0, length)));
  });
}

function streamSends(server: SecureMediaSocket, packet: Buffer, callback?: () => void): number {
  const buffer = Buffer.alloc(packet.length + 32);
  packet.copy(buffer);
  const length = server.protectRtp(buffer, packet.length);
  if (length > 0) server.send(buffer, 0, length, 9, '127.0.0.1', callback);
  return length;
}

test('DTLS-SRTP: one handshake keys both sides; RTP flows both ways, encrypted on the wire', { timeout: 30_000 }, async () => {
  const raw = await udp();
  const failures: string[] = [];
  const server = new SecureMediaSocket(raw, identity, { onFailure: (reason) => failures.push(reason) });
  const plain: Buffer[] = [];
  streamReads(server, plain);
  server.on('error', () => undefined);
  // Before the keys nothing is protected, so the stream sends nothing and reads nothing.
  assert.equal(streamSends(server, rtpPacket(1)), 0);
  assert.equal(server.unprotectRtp(rtpPacket(1), 172), -1);
  const peer = await browserPeer(server, raw.address().port);
  server.configureRemote({ iceUfrag: 'peer', fingerprint: { algorithm: 'sha-256', value: peerCert.fingerprint }, role: 'server' });
  await peer.client.connect();
  await waitUntil(() => server.secured, 10_000, 'the server keyed');
  assert.deepEqual(failures, []);
  // The peer's SRTP (the SRTP module's session) from its own end of the handshake.
  assert.equal(peer.client.srtp.srtpProfile, 1, 'AES_CM_128_HMAC_SHA1_80');
  const peerSrtp = peerSrtpSession(peer.client);
  const peerProtect = (packet: Buffer): Buffer => protectedCopy(peerSrtp, packet);

  peer.socket.send(peerProtect(rtpPacket(7)), raw.address().port, '127.0.0.1');
  await waitUntil(() => plain.length === 1, 5000, 'the decrypted packet');
  assert.deepEqual(plain[0], rtpPacket(7));

  assert.ok(streamSends(server, rtpPacket(9)) > 172, 'protected: longer by its tag');
  await waitUntil(() => peer.received.length === 1, 5000, 'our SRTP');
  const wire = Buffer.from(peer.received[0]!);
  assert.notDeepEqual(wire.subarray(12, 172), rtpPacket(9).subarray(12), 'encrypted on the wire');
  const length = peerSrtp.unprotectRtp(wire, wire.length);
  assert.deepEqual(wire.subarray(0, length), rtpPacket(9));

  // A forged packet (not authenticated) is refused by the protection (the stream drops and counts it).
  const forged = peerProtect(rtpPacket(8));
  forged[forged.length - 1] ^= 0xff;
  peer.socket.send(forged, raw.address().port, '127.0.0.1');
  await waitUntil(() => plain.length === 2, 5000, 'the forged packet');
  assert.equal(plain[1]!.length, 0, 'refused');
  server.close();
});

test('a DTLS certificate that does not match the SDP fingerprint fails the media', { timeout: 30_000 }, async () => {
  const raw = await udp();
  const failures: string[] = [];
  const server = new SecureMediaSocket(raw, identity, { onFailure: (reason) => failures.push(reason) });
  server.on('error', () => undefined);
  const peer = await browserPeer(server, raw.address().port);
  server.configureRemote({ iceUfrag: 'peer', fingerprint: { algorithm: 'sha-256', value: Array(32).fill('AB').join(':') }, role: 'server' });
  void peer.client.connect().catch(() => undefined);
  await waitUntil(() => failures.length > 0, 10_000, 'the failure');
  assert.match(failures[0]!, /fingerprint/);
  assert.equal(server.secured, false);
  server.close();
});

test('the handshake deadline runs from the first ICE check, not while the call rings without our SDP', { timeout: 30_000 }, async () => {
  const raw = await udp();
  const failures: string[] = [];
  const server = new SecureMediaSocket(raw, identity, { onFailure: (reason) => failures.push(reason), handshakeTimeoutMs: 300 });
  server.on('error', () => undefined);
  server.configureRemote({ iceUfrag: 'peer', role: 'server' });
  await new Promise((resolve) => setTimeout(resolve, 900));
  assert.deepEqual(failures, [], 'no deadline before any check');
  const peer = await udp();
  sockets.push(peer);
  peer.send(bindingRequest(`${server.ice.local.ufrag}:peer`, server.ice.local.pwd, { nominate: true }), raw.address().port, '127.0.0.1');
  await waitUntil(() => failures.length > 0, 10_000, 'the deadline');
  assert.match(failures[0]!, /did not finish/);
  server.close();
});
