// The DTLS certificate of the server's WebRTC media (RFC 5763 §5): generated at start (endpoint
// dtls_auto_generate_cert, the default with webrtc=yes) or read from dtls_cert_file and
// dtls_private_key. Browsers check nothing but its fingerprint in our SDP (a=fingerprint), so a
// self-signed one is what every WebRTC server uses; one per process is enough (as Asterisk does).
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SignatureHash } from 'werift-dtls/lib/dtls/src/index.js';
import { weriftDtls } from './werift-dtls.ts';

export interface DtlsIdentity {
  readonly certPem: string;
  readonly keyPem: string;
  /** `sha-256 AB:CD:…`, what a=fingerprint says. */
  readonly fingerprint: string;
  readonly signatureHash: SignatureHash;
}

/** ECDSA P-256 with SHA-256: what browsers generate themselves, cheap to sign with per handshake. */
function ecdsaSha256(): SignatureHash {
  const { HashAlgorithm, SignatureAlgorithm } = weriftDtls();
  return { hash: HashAlgorithm.sha256_4, signature: SignatureAlgorithm.ecdsa_3 };
}

function rsaSha256(): SignatureHash {
  const { HashAlgorithm, SignatureAlgorithm } = weriftDtls();
  return { hash: HashAlgorithm.sha256_4, signature: SignatureAlgorithm.rsa_1 };
}

export async function generateDtlsIdentity(): Promise<DtlsIdentity> {
  const { CipherContext, NamedCurveAlgorithm } = weriftDtls();
  const signatureHash = ecdsaSha256();
  const { certPem, keyPem } = await CipherContext.createSelfSignedCertificateWithKey(signatureHash, NamedCurveAlgorithm.secp256r1_23);
  return { certPem, keyPem, fingerprint: fingerprintOf(certPem), signatureHash };
}

/** dtls_cert_file and dtls_private_key (PEM); throws with the file's problem. */
export function readDtlsIdentity(certFile: string, keyFile: string): DtlsIdentity {
  const certPem = readFileSync(certFile, 'utf8');
  const keyPem = readFileSync(keyFile, 'utf8');
  const certificate = new X509Certificate(certPem);
  const ec = certificate.publicKey.asymmetricKeyType === 'ec';
  return { certPem, keyPem, fingerprint: fingerprintOf(certPem), signatureHash: ec ? ecdsaSha256() : rsaSha256() };
}

function fingerprintOf(certPem: string): string {
  return `sha-256 ${new X509Certificate(certPem).fingerprint256}`;
}

/** The fingerprint of a DER certificate the far end presented, in the SDP's form for `algorithm`. */
export function derFingerprint(der: Buffer, algorithm: string): string | undefined {
  const hash = { 'sha-1': 'sha1', 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' }[algorithm.toLowerCase()];
  if (!hash) return undefined;
  const hex = createHash(hash).update(der).digest('hex').toUpperCase();
  return hex.match(/../g)!.join(':');
}
