// The UDP ports of the configured RTP range (`rtp_start`..`rtp_end`): RTP on an even port, RTCP
// on the odd one above it, as RFC 3550 and Asterisk pair them. Ports are handed out round-robin so
// a port just released is not reused at once (late packets of the last call would reach the next).
// The walk starts at a random even port and, when ports are taken (by this server or another
// program), goes on through the whole range before giving up — as Asterisk's RTP engine does — so
// a server started beside others on the same range does not fail while free ports remain.
import dgram from 'node:dgram';
import { literalAddressLookup } from './literal-lookup.ts';

/** Even ports from a range, handed out round-robin; a port in use is skipped. */
export class RtpPortRange {
  #next: number;

  constructor(
    readonly start: number,
    readonly end: number,
  ) {
    const first = start + (start % 2);
    const pairs = Math.max(1, Math.floor((end - first) / 2));
    this.#next = first + 2 * Math.floor(Math.random() * pairs);
  }

  /** Binds a UDP socket on the next free even port of the range (without its RTCP port). */
  async bind(address: string): Promise<dgram.Socket> {
    return (await this.#bind(address, false)).rtp;
  }

  /** Binds RTP on the next free even port of the range and RTCP on the odd port above it. */
  async bindPair(address: string): Promise<{ rtp: dgram.Socket; rtcp: dgram.Socket }> {
    const pair = await this.#bind(address, true);
    return { rtp: pair.rtp, rtcp: pair.rtcp! };
  }

  async #bind(address: string, withRtcp: boolean): Promise<{ rtp: dgram.Socket; rtcp?: dgram.Socket }> {
    const count = Math.max(1, Math.floor((this.end - this.start) / 2) + 1);
    for (let attempt = 0; attempt < count; attempt++) {
      const port = this.#next;
      this.#next += 2;
      if (this.#next + (withRtcp ? 1 : 0) > this.end) this.#next = this.start + (this.start % 2);
      if (withRtcp && port + 1 > Math.min(this.end, 65535)) continue;
      const rtp = await bindUdp(address, port);
      if (!rtp) continue;
      if (!withRtcp) return { rtp };
      const rtcp = await bindUdp(address, port + 1);
      if (rtcp) return { rtp, rtcp };
      closeQuietly(rtp);
    }
    throw new Error(`no free RTP port${withRtcp ? ' pair' : ''} in ${this.start}-${this.end}`);
  }
}

async function bindUdp(address: string, port: number): Promise<dgram.Socket | undefined> {
  // Literal addresses answered at once: each send() hands its datagram over before it returns (literal-lookup.ts).
  const socket = dgram.createSocket({ type: address.includes(':') ? 'udp6' : 'udp4', lookup: literalAddressLookup() });
  const bound = await new Promise<boolean>((resolve) => {
    socket.once('error', () => resolve(false));
    socket.bind(port, address, () => resolve(true));
  });
  if (bound) {
    socket.removeAllListeners('error');
    return socket;
  }
  closeQuietly(socket);
  return undefined;
}

/** Closes a socket that may never have been bound or may be closed already. */
export function closeQuietly(socket: { close(): unknown }): void {
  try {
    socket.close();
  } catch {
    // never bound, or closed already
  }
}
