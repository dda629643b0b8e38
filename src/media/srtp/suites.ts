// The SRTP crypto suites Patchbay speaks (RFC 4568 §6.2, as res_srtp offers them): AES in counter
// mode with a 128-bit master key and a 112-bit master salt, HMAC-SHA1 authentication whose tag is
// cut to 80 or 32 bits on RTP. SRTCP always carries the 80-bit tag (RFC 4568 §6.2.2 and §6.2.3).

export type SrtpSuiteName = 'AES_CM_128_HMAC_SHA1_80' | 'AES_CM_128_HMAC_SHA1_32';

export interface SrtpSuite {
  readonly name: SrtpSuiteName;
  /** Master (and session) encryption key bytes. */
  readonly keyBytes: number;
  /** Master (and session) salt bytes. */
  readonly saltBytes: number;
  /** Authentication tag bytes on SRTP packets. */
  readonly rtpTagBytes: number;
  /** Authentication tag bytes on SRTCP packets. */
  readonly rtcpTagBytes: number;
}

export const SRTP_SUITES: Readonly<Record<SrtpSuiteName, SrtpSuite>> = {
  AES_CM_128_HMAC_SHA1_80: { name: 'AES_CM_128_HMAC_SHA1_80', keyBytes: 16, saltBytes: 14, rtpTagBytes: 10, rtcpTagBytes: 10 },
  AES_CM_128_HMAC_SHA1_32: { name: 'AES_CM_128_HMAC_SHA1_32', keyBytes: 16, saltBytes: 14, rtpTagBytes: 4, rtcpTagBytes: 10 },
};

/** Key and salt together, as `inline:` carries them. */
export const MASTER_KEY_SALT_BYTES = 30;

/** HMAC-SHA1 session authentication key bytes (RFC 3711 §8.2: n_a = 160). */
export const AUTH_KEY_BYTES = 20;

/** Longest MKI accepted, in bytes: one master key per direction needs no more. */
export const MAX_MKI_BYTES = 4;

export function isSrtpSuiteName(name: string): name is SrtpSuiteName {
  return name === 'AES_CM_128_HMAC_SHA1_80' || name === 'AES_CM_128_HMAC_SHA1_32';
}

/**
 * One direction's master key as SDES gave it: the suite, key||salt (30 bytes), and the MKI the
 * packets carry when the `inline:` had one (its value and its length in bytes).
 */
export interface SrtpMasterKey {
  readonly suite: SrtpSuiteName;
  readonly keySalt: Uint8Array;
  readonly mki?: { readonly value: number; readonly bytes: number };
}

/** Whether two master keys are the same (a re-INVITE repeating a key keeps the running state). */
export function sameMasterKey(a: SrtpMasterKey | undefined, b: SrtpMasterKey | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.suite !== b.suite || a.mki?.value !== b.mki?.value || a.mki?.bytes !== b.mki?.bytes) return false;
  return Buffer.compare(a.keySalt, b.keySalt) === 0;
}
