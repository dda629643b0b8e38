// The far end of a WebRTC call as a browser behaves, built from werift's ICE and DTLS pieces, for the
// tests of our WebRTC sockets (the main thread's and a media worker's): a nominating ICE check with
// our credentials, then DTLS as the client (setup:active) with a certificate of its own, then SRTP
// keyed from its end of the handshake. Packets are told apart by their first byte as RFC 7983 says.
import type dgram from 'node:dgram';
import { classes, Message, methods } from 'werift-ice';
import { CipherContext, DtlsClient, HashAlgorithm, NamedCurveAlgorithm, SignatureAlgorithm } from 'werift-dtls/lib/dtls/src/index.js';
import { SrtpSession } from '../../src/media/srtp/session.ts';
import { derFingerprint } from '../../src/media/webrtc/dtls-identity.ts';
import { waitUntil } from '../sip/helpers.ts';
import { loopbackSocket } from './loopback-udp.ts';

export const PEER_SIGNATURE = { hash: HashAlgorithm.sha256_4, signature: SignatureAlgorithm.ecdsa_3 };

/** The browser's certificate, and its fingerprint as its SDP would carry it. */
export interface PeerCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly fingerprint: string;
}

export async function peerCertificate(): Promise<PeerCertificate> {
  const { certPem, keyPem } = await CipherContext.createSelfSignedCertificateWithKey(PEER_SIGNATURE, NamedCurveAlgorithm.secp256r1_23);
  const fingerprint = derFingerprint(Buffer.from(certPem.replace(/-----[^-]+-----|\s/g, ''), 'base64'), 'sha-256')!;
  return { certPem, keyPem, fingerprint };
}

/** A STUN Binding request as a controlling ICE agent sends it (RFC 8445), signed with `password`. */
export function bindingRequest(username: string, password: string, options: { nominate?: boolean; fingerprint?: boolean } = {}): Buffer {
  const request = new Message(methods.BINDING, classes.REQUEST);
  request.setAttribute('USERNAME', username);
  request.setAttribute('PRIORITY', 1853824767);
  request.setAttribute('ICE-CONTROLLING', BigInt(42));
  if (options.nominate) request.setAttribute('USE-CANDIDATE', null);
  request.addMessageIntegrity(Buffer.from(password, 'utf8'));
  if (options.fingerprint !== false) request.addFingerprint();
  return request.bytes;
}

export interface BrowserLikePeer {
  readonly socket: dgram.Socket;
  /** Not connected yet: the test says when the handshake starts. */
  readonly client: DtlsClient;
  /** Everything neither STUN nor DTLS that reached the peer (SRTP/SRTCP), each a copy. */
  readonly received: Buffer[];
}

/** Checks (and nominates) the pair to `serverPort` with the server's `local` credentials, then readies DTLS. */
export async function browserLikePeer(local: { readonly ufrag: string; readonly pwd: string }, serverPort: number, certificate: PeerCertificate): Promise<BrowserLikePeer> {
  const socket = await loopbackSocket();
  const received: Buffer[] = [];
  const stunAnswers: Buffer[] = [];
  const transport = {
    type: 'udp',
    closed: false,
    onData: (_data: Buffer, _address: readonly [string, number]): void => undefined,
    send: async (data: Buffer) => void socket.send(data, serverPort, '127.0.0.1'),
    close: async () => undefined,
    address: { address: '127.0.0.1', family: 'IPv4', port: 0 },
  };
  socket.on('message', (data, rinfo) => {
    if (data[0]! <= 3) stunAnswers.push(data);
    else if (data[0]! >= 20 && data[0]! <= 63) transport.onData(data, [rinfo.address, rinfo.port]);
    else received.push(Buffer.from(data));
  });
  socket.send(bindingRequest(`${local.ufrag}:peer`, local.pwd, { nominate: true }), serverPort, '127.0.0.1');
  await waitUntil(() => stunAnswers.length > 0, 20_000, 'the STUN answer');
  const client = new DtlsClient({ transport, cert: certificate.certPem, key: certificate.keyPem, signatureHash: PEER_SIGNATURE, srtpProfiles: [1], extendedMasterSecret: true });
  return { socket, client, received };
}

/** The peer's SRTP session from its end of a finished handshake (AES_CM_128_HMAC_SHA1_80). */
export function peerSrtpSession(client: DtlsClient): SrtpSession {
  const keys = client.extractSessionKeys(16, 14) as { localKey: Buffer; localSalt: Buffer; remoteKey: Buffer; remoteSalt: Buffer };
  const suite = 'AES_CM_128_HMAC_SHA1_80' as const;
  return new SrtpSession({ suite, keySalt: Buffer.concat([keys.localKey, keys.localSalt]) }, { suite, keySalt: Buffer.concat([keys.remoteKey, keys.remoteSalt]) });
}

/** `packet` protected with `session`, in a buffer of its own with room for the tag. */
export function protectedCopy(session: SrtpSession, packet: Buffer): Buffer {
  const buffer = Buffer.alloc(packet.length + 32);
  packet.copy(buffer);
  return buffer.subarray(0, session.protectRtp(buffer, packet.length));
}
