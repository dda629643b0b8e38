// RTP the test sends itself from a RawPhone's socket, one packet every 20 ms: u-law audio for the
// server to learn the source (symmetric RTP), then RFC 4733 telephone events (a digit pressed).
import type { RawPhone } from './raw-phone.ts';

/** An RFC 4733 event payload: `event` (0–9 digits, 10 `*`, 11 `#`) at volume 10, `duration` in samples. */
export function telephoneEvent(event: number, duration: number, end: boolean): Buffer {
  return Buffer.from([event, (end ? 0x80 : 0) | 10, duration >> 8, duration & 0xff]);
}

/** Packets from `phone`'s RTP socket to `port` on 127.0.0.1, with one SSRC and running sequence numbers. */
export class PacedRtpSender {
  private sequence: number;
  /** The next packet's RTP timestamp (8 kHz); audio advances it, a telephone event keeps it. */
  timestamp: number;

  constructor(
    private readonly phone: RawPhone,
    private readonly port: number,
    private readonly ssrc: number,
    start: { readonly sequence: number; readonly timestamp: number },
  ) {
    this.sequence = start.sequence;
    this.timestamp = start.timestamp;
  }

  /** Sends one packet, then waits 20 ms. */
  async send(payloadType: number, payload: Buffer, marker = false): Promise<void> {
    const header = Buffer.alloc(12);
    header[0] = 0x80;
    header[1] = (marker ? 0x80 : 0) | payloadType;
    header.writeUInt16BE(this.sequence++ & 0xffff, 2);
    header.writeUInt32BE(this.timestamp >>> 0, 4);
    header.writeUInt32BE(this.ssrc, 8);
    await new Promise<void>((resolve) => this.phone.rtp.send(Buffer.concat([header, payload]), this.port, '127.0.0.1', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /** `count` packets of u-law silence (payload type 0), 20 ms each. */
  async ulawSilence(count: number): Promise<void> {
    for (let i = 0; i < count; i++, this.timestamp += 160) await this.send(0, Buffer.alloc(160, 0xff));
  }
}
