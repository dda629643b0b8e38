// RTCP packets (RFC 3550 6.4–6.6): sender and receiver reports with at most one report block,
// SDES with a CNAME, and BYE, written into the caller's buffer; and a compound packet from the
// far end read into a caller's record. Neither allocates per packet. Reading is bounded (a few
// packets, 31 blocks at most each, every length checked against the datagram) and never throws.

export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_BYE = 203;
/** SDES item type of the canonical name. */
const SDES_CNAME = 1;
/** Most packets read from one compound datagram (SR/RR, SDES, BYE, APP, XR ... in practice 2–3). */
const MAX_PACKETS_READ = 16;
const REPORT_BLOCK_BYTES = 24;

/** NTP seconds at the Unix epoch (1900 → 1970). */
const NTP_UNIX_OFFSET = 2_208_988_800;

/** The wall clock as a 64-bit NTP timestamp split in two 32-bit halves, filled in place. */
export class NtpTime {
  seconds = 0;
  fraction = 0;

  /** Sets it from milliseconds since the Unix epoch (fractional milliseconds kept). */
  setFromUnixMs(unixMs: number): this {
    const seconds = Math.floor(unixMs / 1000);
    this.seconds = (seconds + NTP_UNIX_OFFSET) >>> 0;
    this.fraction = Math.floor(((unixMs - seconds * 1000) / 1000) * 0x1_0000_0000) >>> 0;
    return this;
  }

  /** The middle 32 bits (16.16 fixed point seconds): what LSR carries and RTT is computed in. */
  get middle(): number {
    return (((this.seconds & 0xffff) << 16) | (this.fraction >>> 16)) >>> 0;
  }
}

/** What our report block says about the source we receive. */
export interface ReportBlockSource {
  readonly ssrc: number;
  /** 8-bit fixed point fraction lost since the last report. */
  readonly fractionLost: number;
  /** Cumulative packets lost (24-bit signed on the wire; clamped). */
  readonly cumulativeLost: number;
  readonly extendedHighestSequence: number;
  /** Interarrival jitter in timestamp units. */
  readonly jitter: number;
  /** Middle 32 bits of the NTP time of the last SR from that source, 0 if none. */
  readonly lastSr: number;
  /** Delay since that SR in 1/65536 s, 0 if none. */
  readonly delaySinceLastSr: number;
}

/** One report block's figures, filled in place (the block we send, the block read about us). */
export class ReportBlock implements ReportBlockSource {
  ssrc = 0;
  fractionLost = 0;
  cumulativeLost = 0;
  extendedHighestSequence = 0;
  jitter = 0;
  lastSr = 0;
  delaySinceLastSr = 0;
}

function put32(dst: Uint8Array, offset: number, value: number): void {
  dst[offset] = (value >>> 24) & 0xff;
  dst[offset + 1] = (value >>> 16) & 0xff;
  dst[offset + 2] = (value >>> 8) & 0xff;
  dst[offset + 3] = value & 0xff;
}

function get32(src: Uint8Array, offset: number): number {
  return ((src[offset] << 24) | (src[offset + 1] << 16) | (src[offset + 2] << 8) | src[offset + 3]) >>> 0;
}

/** The common header: version 2, no padding, `count` in the low 5 bits, length in 32-bit words minus one. */
function writeHeader(dst: Uint8Array, offset: number, count: number, packetType: number, totalBytes: number): void {
  dst[offset] = 0x80 | (count & 0x1f);
  dst[offset + 1] = packetType;
  const words = totalBytes / 4 - 1;
  dst[offset + 2] = (words >>> 8) & 0xff;
  dst[offset + 3] = words & 0xff;
}

function writeReportBlock(dst: Uint8Array, offset: number, block: ReportBlockSource): void {
  put32(dst, offset, block.ssrc);
  // Cumulative lost is a signed 24-bit number: saturate rather than wrap.
  const lost = Math.max(-0x800000, Math.min(0x7fffff, Math.round(block.cumulativeLost)));
  put32(dst, offset + 4, ((block.fractionLost & 0xff) << 24) | (lost & 0xffffff));
  put32(dst, offset + 8, block.extendedHighestSequence >>> 0);
  put32(dst, offset + 12, Math.min(0xffffffff, Math.floor(block.jitter)) >>> 0);
  put32(dst, offset + 16, block.lastSr >>> 0);
  put32(dst, offset + 20, block.delaySinceLastSr >>> 0);
}

/** A sender report from `ssrc` (with one report block when `block` is given); returns the bytes written. */
export function writeSenderReport(
  dst: Uint8Array,
  offset: number,
  ssrc: number,
  ntp: NtpTime,
  rtpTimestamp: number,
  packets: number,
  octets: number,
  block: ReportBlockSource | undefined,
): number {
  const total = 28 + (block ? REPORT_BLOCK_BYTES : 0);
  writeHeader(dst, offset, block ? 1 : 0, RTCP_SR, total);
  put32(dst, offset + 4, ssrc);
  put32(dst, offset + 8, ntp.seconds);
  put32(dst, offset + 12, ntp.fraction);
  put32(dst, offset + 16, rtpTimestamp >>> 0);
  // The counts wrap at 32 bits (RFC 3550 6.4.1).
  put32(dst, offset + 20, packets % 0x1_0000_0000);
  put32(dst, offset + 24, octets % 0x1_0000_0000);
  if (block) writeReportBlock(dst, offset + 28, block);
  return total;
}

/** A receiver report from `ssrc` (with one report block when `block` is given); returns the bytes written. */
export function writeReceiverReport(dst: Uint8Array, offset: number, ssrc: number, block: ReportBlockSource | undefined): number {
  const total = 8 + (block ? REPORT_BLOCK_BYTES : 0);
  writeHeader(dst, offset, block ? 1 : 0, RTCP_RR, total);
  put32(dst, offset + 4, ssrc);
  if (block) writeReportBlock(dst, offset + 8, block);
  return total;
}

/** SDES with one chunk for `ssrc` carrying the CNAME `cname` (ASCII, at most 255 bytes); returns the bytes written. */
export function writeSdesCname(dst: Uint8Array, offset: number, ssrc: number, cname: Uint8Array): number {
  const nameBytes = Math.min(255, cname.length);
  // Chunk: SSRC, item (type, length, text), then at least one null octet to end the list, padded to 32 bits.
  const chunk = 4 + 2 + nameBytes + 1;
  const padded = (chunk + 3) & ~3;
  const total = 4 + padded;
  writeHeader(dst, offset, 1, RTCP_SDES, total);
  put32(dst, offset + 4, ssrc);
  dst[offset + 8] = SDES_CNAME;
  dst[offset + 9] = nameBytes;
  for (let i = 0; i < nameBytes; i++) dst[offset + 10 + i] = cname[i];
  for (let i = offset + 10 + nameBytes; i < offset + total; i++) dst[i] = 0;
  return total;
}

/** BYE for `ssrc`, without a reason; returns the bytes written. */
export function writeBye(dst: Uint8Array, offset: number, ssrc: number): number {
  writeHeader(dst, offset, 1, RTCP_BYE, 8);
  put32(dst, offset + 4, ssrc);
  return 8;
}

/**
 * What a compound packet from the far end said, filled in place by readRtcpCompound(); the
 * report block's figures (the inherited fields) are about our stream, when `hasBlock`.
 */
export class RtcpReading extends ReportBlock {
  /** SSRC of the first SR/RR's sender. */
  senderSsrc = 0;
  /** An SR was present: its NTP middle 32 bits, RTP timestamp and counts. */
  hasSenderInfo = false;
  srNtpMiddle = 0;
  srRtpTimestamp = 0;
  srPackets = 0;
  srOctets = 0;
  /** A report block about `ourSsrc` was present: its figures are the inherited fields. */
  hasBlock = false;
  /** A BYE was present. */
  bye = false;

  clear(): void {
    this.senderSsrc = 0;
    this.hasSenderInfo = false;
    this.hasBlock = false;
    this.bye = false;
  }
}

/**
 * Reads a compound RTCP datagram: the SR or RR that must come first (RFC 3550 6.1), the report
 * block about `ourSsrc` in any SR/RR, and whether a BYE is present. False when the datagram is not
 * RTCP (version, type of the first packet, lengths that do not add up); `out` then says nothing.
 */
export function readRtcpCompound(src: Uint8Array, length: number, ourSsrc: number, out: RtcpReading): boolean {
  out.clear();
  if (length < 8 || length > src.length) return false;
  const firstType = src[1];
  if (firstType !== RTCP_SR && firstType !== RTCP_RR) return false;
  let offset = 0;
  let packets = 0;
  while (offset + 4 <= length && packets < MAX_PACKETS_READ) {
    if (src[offset] >> 6 !== 2) return packets > 0;
    const count = src[offset] & 0x1f;
    const type = src[offset + 1];
    const bytes = (((src[offset + 2] << 8) | src[offset + 3]) + 1) * 4;
    if (offset + bytes > length) return packets > 0;
    packets += 1;
    if (type === RTCP_SR || type === RTCP_RR) {
      const fixed = type === RTCP_SR ? 28 : 8;
      if (bytes < fixed) return packets > 1;
      if (packets === 1) out.senderSsrc = get32(src, offset + 4);
      if (type === RTCP_SR && packets === 1) {
        out.hasSenderInfo = true;
        out.srNtpMiddle = (((get32(src, offset + 8) & 0xffff) << 16) | (get32(src, offset + 12) >>> 16)) >>> 0;
        out.srRtpTimestamp = get32(src, offset + 16);
        out.srPackets = get32(src, offset + 20);
        out.srOctets = get32(src, offset + 24);
      }
      // Only the blocks that fit in the packet's stated length are read.
      const blocks = Math.min(count, Math.floor((bytes - fixed) / REPORT_BLOCK_BYTES));
      for (let i = 0; i < blocks; i++) {
        const at = offset + fixed + i * REPORT_BLOCK_BYTES;
        if (get32(src, at) !== ourSsrc >>> 0) continue;
        out.hasBlock = true;
        out.ssrc = ourSsrc >>> 0;
        out.fractionLost = src[at + 4];
        // Sign-extend the 24-bit cumulative loss.
        out.cumulativeLost = ((src[at + 5] << 24) | (src[at + 6] << 16) | (src[at + 7] << 8)) >> 8;
        out.extendedHighestSequence = get32(src, at + 8);
        out.jitter = get32(src, at + 12);
        out.lastSr = get32(src, at + 16);
        out.delaySinceLastSr = get32(src, at + 20);
      }
    } else if (type === RTCP_BYE) {
      out.bye = true;
    }
    offset += bytes;
  }
  return true;
}

/** RFC 5761 4: with RTCP multiplexed on the RTP port, the second byte of RTCP packets is 192–223. */
export function looksLikeRtcp(packet: Uint8Array, length: number): boolean {
  return length >= 8 && packet[0] >> 6 === 2 && packet[1] >= 192 && packet[1] <= 223;
}
