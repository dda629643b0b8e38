// A tiny SIP phone over raw UDP for the SIPp call suite (sipp-calls.test.ts), for what SIPp cannot
// check: it offers PCMU and telephone-event with its own RTP socket, so a test sees every RTP packet
// the server sends and can send RFC 4733 events to the server's RTP port from the answer; it calls
// extension 100 as bob, re-INVITEs, and answers the server's requests (BYE) at once.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { SipInbox } from '../helpers/sip-inbox.ts';

/**
 * A tiny phone of our own (raw UDP, hand-written SIP), for what SIPp cannot check: it offers PCMU and
 * telephone-event with its own RTP socket, so the test sees every RTP packet the server sends and can
 * send RFC 4733 events to the server's RTP port from the answer.
 */
export class TestPhone {
  readonly sip = dgram.createSocket('udp4');
  readonly rtp = dgram.createSocket('udp4');
  readonly packets: Buffer[] = [];
  readonly #inbox = new SipInbox('phone');
  readonly callId = `phone-${Math.random().toString(36).slice(2)}`;
  readonly tag = `t${Math.random().toString(36).slice(2)}`;
  remoteTag = '';
  remoteRtpPort = 0;
  #cseq = 1;

  /** `serverPort` gives the server's SIP port (UDP on 127.0.0.1) when the phone sends. */
  constructor(private readonly serverPort: () => number) {}

  async open(): Promise<void> {
    await new Promise<void>((resolve) => this.sip.bind(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => this.rtp.bind(0, '127.0.0.1', resolve));
    this.sip.on('message', (message) => {
      const text = message.toString('latin1');
      // Answer the server's requests (BYE) at once.
      if (!text.startsWith('SIP/2.0')) this.#reply(text, 200, 'OK');
      this.#inbox.add(text);
    });
    this.rtp.on('message', (packet) => this.packets.push(packet));
  }

  get sipPort(): number {
    return this.sip.address().port;
  }

  close(): void {
    this.sip.close();
    this.rtp.close();
  }

  /** The next SIP message whose first line matches, within `timeoutMs`. */
  nextMessage(firstLine: RegExp, timeoutMs = 10_000): Promise<string> {
    return this.#inbox.next(firstLine, timeoutMs);
  }

  #send(text: string): void {
    this.sip.send(Buffer.from(text, 'latin1'), this.serverPort(), '127.0.0.1');
  }

  #headers(method: string, cseq: number, branch = `z9hG4bK${Math.random().toString(36).slice(2)}`): string {
    return [
      `Via: SIP/2.0/UDP 127.0.0.1:${this.sipPort};branch=${branch};rport`,
      'Max-Forwards: 70',
      `From: <sip:bob@127.0.0.1:${this.sipPort}>;tag=${this.tag}`,
      `To: <sip:100@127.0.0.1:${this.serverPort()}>${this.remoteTag ? `;tag=${this.remoteTag}` : ''}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:bob@127.0.0.1:${this.sipPort}>`,
    ].join('\r\n');
  }

  #reply(request: string, status: number, reason: string): void {
    const lines = request.split('\r\n');
    const keep = lines.filter((line) => /^(via|from|to|call-id|cseq):/i.test(line));
    this.#send(`SIP/2.0 ${status} ${reason}\r\n${keep.join('\r\n')}\r\nContent-Length: 0\r\n\r\n`);
  }

  /** The SIP messages received and not yet taken, by first line. */
  pending(): string[] {
    return this.#inbox.firstLines();
  }

  /** The phone's default offer: PCMU and telephone-event on its RTP socket. */
  offer(): string {
    return ['v=0', 'o=phone 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${this.rtp.address().port} RTP/AVP 0 101`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16', 'a=ptime:20', 'a=sendrecv', ''].join('\r\n');
  }

  /**
   * INVITE extension 100 as bob with `sdp` (default: the phone's offer; '' for none); resolves with
   * the final response, which it ACKs (a 2xx with `ackBody`, the answer to a late offer).
   */
  async call(sdp = this.offer(), ackBody = '', ack = true): Promise<string> {
    const branch = `z9hG4bK${Math.random().toString(36).slice(2)}`;
    const body = sdp ? `Content-Type: application/sdp\r\nContent-Length: ${sdp.length}\r\n\r\n${sdp}` : 'Content-Length: 0\r\n\r\n';
    this.#send(`INVITE sip:100@127.0.0.1:${this.serverPort()} SIP/2.0\r\n${this.#headers('INVITE', this.#cseq, branch)}\r\n${body}`);
    const final = await this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 15_000);
    this.remoteTag = /^(?:to|t):.*;tag=([^;\s]+)/im.exec(final)?.[1] ?? '';
    if (!/^SIP\/2\.0 2/.test(final)) {
      // ACK for a non-2xx: the same branch, the same transaction.
      this.#send(`ACK sip:100@127.0.0.1:${this.serverPort()} SIP/2.0\r\n${this.#headers('ACK', this.#cseq, branch)}\r\nContent-Length: 0\r\n\r\n`);
      return final;
    }
    this.remoteRtpPort = Number(/^m=audio (\d+)/m.exec(final)?.[1] ?? 0);
    if (!ack) return final;
    const ackText = ackBody ? `Content-Type: application/sdp\r\nContent-Length: ${ackBody.length}\r\n\r\n${ackBody}` : 'Content-Length: 0\r\n\r\n';
    this.#send(`ACK sip:100@127.0.0.1:${this.serverPort()} SIP/2.0\r\n${this.#headers('ACK', this.#cseq)}\r\n${ackText}`);
    return final;
  }

  /** A re-INVITE in the dialog with `sdp` (CSeq 2, 3, ...); resolves with the final response, ACKed. */
  async reinvite(sdp: string): Promise<string> {
    const cseq = ++this.#cseq;
    this.#send(`INVITE sip:100@127.0.0.1:${this.serverPort()} SIP/2.0\r\n${this.#headers('INVITE', cseq)}\r\nContent-Type: application/sdp\r\nContent-Length: ${sdp.length}\r\n\r\n${sdp}`);
    const final = await this.nextMessage(new RegExp('^SIP\\/2\\.0 [2-6]'), 10_000);
    assert.match(final, new RegExp(`^CSeq:\\s*${cseq} INVITE`, 'mi'));
    this.#send(`ACK sip:100@127.0.0.1:${this.serverPort()} SIP/2.0\r\n${this.#headers('ACK', cseq)}\r\nContent-Length: 0\r\n\r\n`);
    return final;
  }

  /** Sends one digit as RFC 4733 telephone-events (PT 101): 5 updates 20 ms apart, 3 end packets. */
  async sendDigit(event: number, durationSamples = 800): Promise<void> {
    const ssrc = 0x1234abcd;
    const timestamp = 160_000;
    let sequence = 1000;
    const packet = (marker: boolean, end: boolean, duration: number): Buffer => {
      const buffer = Buffer.alloc(16);
      buffer[0] = 0x80;
      buffer[1] = (marker ? 0x80 : 0) | 101;
      buffer.writeUInt16BE(sequence++ & 0xffff, 2);
      buffer.writeUInt32BE(timestamp, 4);
      buffer.writeUInt32BE(ssrc, 8);
      buffer[12] = event;
      buffer[13] = (end ? 0x80 : 0) | 10;
      buffer.writeUInt16BE(duration, 14);
      return buffer;
    };
    const steps = 5;
    for (let i = 1; i <= steps; i++) {
      this.rtp.send(packet(i === 1, false, Math.round((durationSamples * i) / (steps + 1))), this.remoteRtpPort, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (let i = 0; i < 3; i++) this.rtp.send(packet(false, true, durationSamples), this.remoteRtpPort, '127.0.0.1');
  }
}
