// Where a stream's RTCP goes and whose reports it takes: the far end's RTCP port from its SDP
// (a=rtcp, else the RTP port + 1), or the RTP port itself when rtcp-mux was agreed (RFC 5761);
// once a report came from the far end, reports are taken only from its port, and with symmetric
// RTP (rtp_symmetric) ours go where it came from (symmetric RTCP). A report every
// interval (SR after sending, RR otherwise), a BYE when the stream closes. The packet is built in
// the session's buffer and the send callback is bound once: nothing is allocated per report.
import type { MediaSocket } from './media-socket.ts';
import { performance } from 'node:perf_hooks';
import type { MediaProtection } from './protection.ts';
import type { RtpReceiverStats } from './receiver-stats.ts';
import { RtcpSession } from './rtcp-session.ts';
import type { RtpSender } from './sender.ts';

/** What the far end's SDP says about its RTCP. */
export interface RtcpTarget {
  readonly remoteAddress?: string;
  readonly remotePort: number;
  /** a=rtcp; absent: remotePort + 1. */
  readonly remoteRtcpPort?: number;
  /** RTCP shares the RTP port. */
  readonly rtcpMux?: boolean;
  /** SRTCP: reports are protected before they leave and checked when they arrive. */
  readonly protection?: MediaProtection;
}

export class RtcpLink {
  readonly session: RtcpSession;
  #address: string | undefined;
  #port = 0;
  #muxed = false;
  /** Once a report came from the far end: only its port counts, and (symmetric) ours go there. */
  #latched = false;
  #sourcePort = 0;
  #protection: MediaProtection | undefined;

  constructor(
    private readonly rtpSocket: MediaSocket,
    private readonly rtcpSocket: MediaSocket | undefined,
    intervalMs: number,
    /** Report to where the far end's reports come from (false: always to the SDP's RTCP address). */
    private readonly symmetric = true,
  ) {
    this.session = new RtcpSession(intervalMs);
  }

  /** Applies the SDP; `moved` (the media address changed) forgets where reports came from. */
  configure(target: RtcpTarget, moved: boolean): void {
    this.#muxed = target.rtcpMux === true;
    this.#protection = target.protection;
    if (moved) this.#latched = false;
    if (!this.#latched || !this.symmetric) {
      this.#address = target.remoteAddress;
      this.#port = target.rtcpMux ? target.remotePort : (target.remoteRtcpPort ?? Math.min(target.remotePort + 1, 65535));
    }
  }

  /** The media's source was learned elsewhere: multiplexed reports follow it until one latches. */
  followSource(address: string, port: number): void {
    if (!this.#muxed || this.#latched || !this.symmetric) return;
    this.#address = address;
    this.#port = port;
  }

  /** Sends a report when one is due (without anybody to report to yet, asks again an interval later). */
  reportIfDue(sender: RtpSender, receiver: RtpReceiverStats | undefined, now: number): void {
    if (!this.session.due(now)) return;
    const socket = this.#socketInUse();
    if (!socket || !this.#address || this.#port <= 0) {
      this.session.postpone(now);
      return;
    }
    const length = this.#protect(this.session.build(sender, receiver, now, unixNowMs()));
    if (length > 0) socket.send(this.session.packet, 0, length, this.#port, this.#address, this.#onSent);
  }

  /**
   * A report from `address`:`port`: 'stranger' when it came from one (not the media's source
   * address or, strict, not its port); 'refused' when SRTCP's check failed (dropped unread).
   * `muxed`: it came on the RTP port. Muxed reports are taken only from the port the media comes
   * from; on the RTCP port, once a report was taken, only from that report's port (the first may
   * come from any port of the far end's address: NAT maps RTCP apart).
   */
  take(message: Buffer, address: string, port: number, muxed: boolean, media: { readonly address: string | undefined; readonly port: number }, strict: boolean, ourSsrc: number): 'taken' | 'stranger' | 'refused' {
    if (address !== media.address) return 'stranger';
    if (strict && (muxed ? port !== media.port : this.#latched && port !== this.#sourcePort)) return 'stranger';
    const length = this.#protection ? this.#protection.unprotectRtcp(message, message.length) : message.length;
    if (length < 0) return 'refused';
    if (!this.session.receive(message, length, ourSsrc, performance.now(), unixNowMs())) return 'taken';
    if (muxed === this.#muxed) {
      this.#latched = true;
      this.#sourcePort = port;
      if (this.symmetric) {
        this.#address = address;
        this.#port = port;
      }
    }
    return 'taken';
  }

  /** Sends a BYE (when there was media and somewhere to send it), then calls `done` once it left. */
  bye(sender: RtpSender | undefined, receiver: RtpReceiverStats | undefined, done: () => void): void {
    const socket = this.#socketInUse();
    const length = socket && this.#port > 0 && this.#address ? this.#protect(this.session.build(sender, receiver, performance.now(), unixNowMs(), true)) : 0;
    if (length > 0 && socket) {
      try {
        socket.send(this.session.packet, 0, length, this.#port, this.#address!, done);
        return;
      } catch {
        // the socket is gone already
      }
    }
    done();
  }

  /** The report built in the session's buffer, protected in place (SRTCP) when the stream is. */
  #protect(length: number): number {
    return length > 0 && this.#protection ? this.#protection.protectRtcp(this.session.packet, length) : length;
  }

  /** The socket RTCP leaves from: the RTP socket when multiplexed, else the RTCP socket. */
  #socketInUse(): MediaSocket | undefined {
    return this.#muxed ? this.rtpSocket : this.rtcpSocket;
  }

  readonly #onSent = (): void => {
    // Send errors (unreachable far end) are not fatal to the call.
  };
}

/** The wall clock with sub-millisecond precision (NTP timestamps of sender reports). */
function unixNowMs(): number {
  return performance.timeOrigin + performance.now();
}
