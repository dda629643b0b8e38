// RTP fixed header (RFC 3550 5.1): writing one into a caller's buffer and reading one from a
// received datagram into a caller's record, so neither allocates per packet.

export const RTP_VERSION = 2;
export const RTP_HEADER_BYTES = 12;
/** Sequence numbers are 16-bit. */
export const RTP_SEQ_MOD = 0x10000;

/** The fields of one received packet, filled in place by parseRtpPacket(). */
export class RtpHeader {
  marker = false;
  payloadType = 0;
  sequence = 0;
  timestamp = 0;
  ssrc = 0;
  /** Where the payload starts and ends (after CSRCs and extension, before padding). */
  payloadStart = 0;
  payloadEnd = 0;

  get payloadBytes(): number {
    return this.payloadEnd - this.payloadStart;
  }
}

/**
 * Reads the header of `packet` into `header`; false (and `header` unspecified) when the datagram
 * is not RTP version 2 or its lengths do not add up.
 */
export function parseRtpPacket(packet: Uint8Array, length: number, header: RtpHeader): boolean {
  if (length < RTP_HEADER_BYTES) return false;
  const first = packet[0];
  if (first >> 6 !== RTP_VERSION) return false;
  let start = RTP_HEADER_BYTES + (first & 0x0f) * 4;
  if (first & 0x10) {
    // Header extension: 16-bit profile field, 16-bit length in 32-bit words.
    if (length < start + 4) return false;
    start += 4 + ((packet[start + 2] << 8) | packet[start + 3]) * 4;
  }
  let end = length;
  if (first & 0x20) end -= packet[length - 1];
  if (end < start) return false;
  header.marker = (packet[1] & 0x80) !== 0;
  header.payloadType = packet[1] & 0x7f;
  header.sequence = (packet[2] << 8) | packet[3];
  header.timestamp = ((packet[4] << 24) | (packet[5] << 16) | (packet[6] << 8) | packet[7]) >>> 0;
  header.ssrc = ((packet[8] << 24) | (packet[9] << 16) | (packet[10] << 8) | packet[11]) >>> 0;
  header.payloadStart = start;
  header.payloadEnd = end;
  return true;
}

/** Writes a 12-byte header (no CSRC, extension or padding) at the start of `packet`. */
export function writeRtpHeader(packet: Uint8Array, marker: boolean, payloadType: number, sequence: number, timestamp: number, ssrc: number): void {
  packet[0] = RTP_VERSION << 6;
  packet[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  packet[2] = (sequence >>> 8) & 0xff;
  packet[3] = sequence & 0xff;
  packet[4] = (timestamp >>> 24) & 0xff;
  packet[5] = (timestamp >>> 16) & 0xff;
  packet[6] = (timestamp >>> 8) & 0xff;
  packet[7] = timestamp & 0xff;
  packet[8] = (ssrc >>> 24) & 0xff;
  packet[9] = (ssrc >>> 16) & 0xff;
  packet[10] = (ssrc >>> 8) & 0xff;
  packet[11] = ssrc & 0xff;
}
