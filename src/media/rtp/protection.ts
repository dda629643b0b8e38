// The seam between a stream and whatever secures its packets (SDES-SRTP today, DTLS-SRTP's keys
// later): every RTP and RTCP packet goes through protect before it is sent and through unprotect
// when it arrives, in place in the stream's own buffers. A packet unprotect refuses (a negative
// length) is dropped and counted by the stream, never delivered.

/** Room a protected packet may need beyond its plain length (tag, MKI, SRTCP index). */
export const MAX_PROTECTION_OVERHEAD = 32;

export interface MediaProtection {
  /** Protects `packet[0, length)` in place; returns the length to send, 0 to send nothing. */
  protectRtp(packet: Uint8Array, length: number): number;
  /** Checks and restores `packet[0, length)` in place; returns the plain length, negative to drop it. */
  unprotectRtp(packet: Uint8Array, length: number): number;
  protectRtcp(packet: Uint8Array, length: number): number;
  unprotectRtcp(packet: Uint8Array, length: number): number;
}
