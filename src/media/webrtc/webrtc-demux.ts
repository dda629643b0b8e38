// Telling apart what arrives on a WebRTC call's one UDP port by its first byte (RFC 7983 §7): STUN
// is 0..3 (ice-lite.ts looksLikeStun), DTLS 20..63, RTP and RTCP 128..191 (version 2).

/** DTLS records start with a content type of 20..63. */
export function looksLikeDtls(packet: Uint8Array): boolean {
  return packet.length >= 13 && packet[0]! >= 20 && packet[0]! <= 63;
}

/** RTP and RTCP start with version 2: a first byte of 128..191. */
export function looksLikeRtp(packet: Uint8Array): boolean {
  return packet.length >= 12 && packet[0]! >= 128 && packet[0]! <= 191;
}
