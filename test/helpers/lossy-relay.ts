// A UDP relay that puts packet loss on a real SIP phone's media path: the phone sends its SIP to
// the relay, which forwards it to Patchbay and the answers back; when Patchbay's SDP comes back
// through it, the relay gives the phone its own media ports instead of Patchbay's, and forwards
// RTP and RTCP both ways, leaving out every n-th RTP packet from the phone to Patchbay. The loss
// is then measured by Patchbay's RTP stack, as it would be on a bad network — nothing is faked
// inside the server.
//
// Only what a one-phone test needs: one phone (the first SIP sender), one call, UDP, an SDP with
// one audio stream and RTCP on port + 1 (the phone's `rtcp_mux no`). Requests Patchbay sends on
// its own (a BYE) go to the phone's Contact, not through the relay, as they may.
import dgram from 'node:dgram';

export interface LossyRelayCounts {
  /** RTP packets from the phone forwarded to Patchbay. */
  forwarded: number;
  /** RTP packets from the phone left out. */
  dropped: number;
}

interface Pair {
  readonly socket: dgram.Socket;
  /** Where the phone sends from (learned from its first packet). */
  phone?: dgram.RemoteInfo;
  /** Patchbay's port this one stands for. */
  serverPort: number;
}

export class LossyRelay {
  readonly #sip = dgram.createSocket('udp4');
  #phone: dgram.RemoteInfo | undefined;
  #rtp: Pair | undefined;
  #rtcp: Pair | undefined;
  readonly counts: LossyRelayCounts = { forwarded: 0, dropped: 0 };

  /** `dropEvery` n > 0 leaves out the n-th, 2n-th … RTP packet from the phone (n = 20: 5 %). */
  constructor(
    private readonly serverSipPort: number,
    private readonly dropEvery: number,
  ) {}

  /** The relay's SIP port, where the phone sends its requests. */
  get sipPort(): number {
    return this.#sip.address().port;
  }

  async start(): Promise<void> {
    await bind(this.#sip, 0);
    this.#sip.on('message', (message, from) => this.#sipMessage(message, from));
    // Two neighbouring ports, RTP on the even one, as an SDP without a=rtcp implies.
    for (let attempt = 0; attempt < 20 && !this.#rtcp; attempt++) {
      const rtp = dgram.createSocket('udp4');
      await bind(rtp, 0);
      const port = rtp.address().port;
      const rtcp = dgram.createSocket('udp4');
      const free = port % 2 === 0 && (await bind(rtcp, port + 1).then(() => true, () => false));
      if (!free) {
        rtp.close();
        rtcp.close();
        continue;
      }
      this.#rtp = this.#pair(rtp, true);
      this.#rtcp = this.#pair(rtcp, false);
    }
    if (!this.#rtcp) throw new Error('no two neighbouring UDP ports for the relay');
  }

  close(): void {
    for (const socket of [this.#sip, this.#rtp?.socket, this.#rtcp?.socket]) socket?.close();
  }

  #sipMessage(message: Buffer, from: dgram.RemoteInfo): void {
    if (from.port !== this.serverSipPort) {
      this.#phone = from;
      this.#sip.send(message, this.serverSipPort, '127.0.0.1');
      return;
    }
    if (this.#phone) this.#sip.send(this.#rewriteSdp(message.toString('utf8')), this.#phone.port, this.#phone.address);
  }

  /** Patchbay's audio port in an SDP becomes the relay's; Content-Length follows the new body. */
  #rewriteSdp(text: string): Buffer {
    const split = text.indexOf('\r\n\r\n');
    if (split < 0 || !/^m=audio \d+/m.test(text)) return Buffer.from(text, 'utf8');
    const head = text.slice(0, split);
    let body = text.slice(split + 4);
    body = body.replace(/^m=audio (\d+)/m, (_match, port: string) => {
      this.#rtp!.serverPort = Number(port);
      this.#rtcp!.serverPort = Number(port) + 1;
      return `m=audio ${this.#rtp!.socket.address().port}`;
    });
    body = body.replace(/^c=IN IP4 \S+/m, 'c=IN IP4 127.0.0.1');
    const headers = head.replace(/^(Content-Length|l)\s*:\s*\d+/im, `Content-Length: ${Buffer.byteLength(body, 'utf8')}`);
    return Buffer.from(`${headers}\r\n\r\n${body}`, 'utf8');
  }

  #pair(socket: dgram.Socket, lossy: boolean): Pair {
    const pair: Pair = { socket, serverPort: 0 };
    let fromPhone = 0;
    socket.on('message', (packet, from) => {
      if (pair.serverPort === 0) return;
      if (from.port === pair.serverPort && from.address === '127.0.0.1') {
        if (pair.phone) socket.send(packet, pair.phone.port, pair.phone.address);
        return;
      }
      pair.phone = from;
      if (lossy) {
        fromPhone += 1;
        if (this.dropEvery > 0 && fromPhone % this.dropEvery === 0) {
          this.counts.dropped += 1;
          return;
        }
        this.counts.forwarded += 1;
      }
      socket.send(packet, pair.serverPort, '127.0.0.1');
    });
    return pair;
  }
}

function bind(socket: dgram.Socket, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error): void => reject(error);
    socket.once('error', failed);
    socket.bind(port, '127.0.0.1', () => {
      socket.off('error', failed);
      resolve();
    });
  });
}
