// A small SIP phone over one TCP connection, for the tests that must see what a phone sees on its
// connection (which peer a Via or Contact names) and close that connection at a chosen moment. It
// registers over the connection, answers every INVITE with PCMU (its own RTP socket), every other
// request but ACK with 200, and sends a 1000 Hz PCMU tone to the far end's RTP address while a call
// is up; every RTP packet it receives is kept.
import dgram from 'node:dgram';
import net from 'node:net';
import { ulawEncode } from '../../src/media/g711.ts';
import { randomToken, responseCopies, SipInbox, sipHeader, tagOf } from './sip-inbox.ts';

export { sipHeader };

export interface AnsweredCall {
  readonly callId: string;
  readonly invite: string;
  readonly localTag: string;
  readonly remoteTag: string;
}

export class RawTcpPhone {
  readonly rtp = dgram.createSocket('udp4');
  /** RTP packets received (payload lengths), newest last. */
  readonly received: Array<{ at: number; payloadType: number }> = [];
  #socket: net.Socket | undefined;
  #buffer = '';
  readonly #inbox: SipInbox;
  readonly #calls = new Map<string, AnsweredCall>();
  #tone: NodeJS.Timeout | undefined;
  #cseq = 1;
  /** Whether INVITEs are answered (200) or left ringing (180 only). */
  answer = true;

  constructor(readonly user: string) {
    this.#inbox = new SipInbox(user);
  }

  async open(serverPort: number): Promise<void> {
    await new Promise<void>((resolve) => this.rtp.bind(0, '127.0.0.1', resolve));
    this.rtp.on('message', (packet) => {
      if (packet.length > 12) this.received.push({ at: Date.now(), payloadType: packet[1] & 0x7f });
    });
    const socket = net.connect({ host: '127.0.0.1', port: serverPort });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => this.#data(chunk.toString('latin1')));
    this.#socket = socket;
  }

  get localPort(): number {
    return this.#socket?.localPort ?? 0;
  }

  /** Closes the connection (as a phone that crashed or lost its network would). */
  closeConnection(): void {
    this.#socket?.destroy();
    this.stopTone();
  }

  close(): void {
    this.closeConnection();
    this.rtp.close();
  }

  async register(serverPort: number, expires = 120): Promise<string> {
    const cseq = this.#cseq++;
    this.#send([
      `REGISTER sip:127.0.0.1:${serverPort};transport=tcp SIP/2.0`,
      `Via: SIP/2.0/TCP 127.0.0.1:${this.localPort};branch=z9hG4bK${randomToken()};rport`,
      'Max-Forwards: 70',
      `From: <sip:${this.user}@127.0.0.1>;tag=reg${randomToken()}`,
      `To: <sip:${this.user}@127.0.0.1>`,
      `Call-ID: reg-${this.user}-${randomToken()}`,
      `CSeq: ${cseq} REGISTER`,
      `Contact: <sip:${this.user}@127.0.0.1:${this.localPort};transport=tcp>`,
      `Expires: ${expires}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'));
    return this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 10_000, (m) => new RegExp(`^CSeq:\\s*${cseq} REGISTER`, 'im').test(m));
  }

  /** The next SIP message whose first line matches (and `also`), within `timeoutMs`. */
  nextMessage(firstLine: RegExp, timeoutMs = 15_000, also: (message: string) => boolean = () => true): Promise<string> {
    return this.#inbox.next(firstLine, timeoutMs, also);
  }

  /** BYE in a call the phone answered; resolves with the final response. */
  async bye(callId: string): Promise<string> {
    const call = this.#calls.get(callId);
    if (!call) throw new Error(`no call ${callId}`);
    const target = /<([^>]+)>/.exec(sipHeader(call.invite, '(?:contact|m)') ?? '')?.[1] ?? 'sip:127.0.0.1';
    const cseq = 100 + this.#cseq++;
    this.#send([
      `BYE ${target} SIP/2.0`,
      `Via: SIP/2.0/TCP 127.0.0.1:${this.localPort};branch=z9hG4bK${randomToken()};rport`,
      'Max-Forwards: 70',
      `From: <sip:${this.user}@127.0.0.1>;tag=${call.localTag}`,
      `To: ${sipHeader(call.invite, '(?:from|f)')}`,
      `Call-ID: ${callId}`,
      `CSeq: ${cseq} BYE`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'));
    this.stopTone();
    return this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 10_000, (m) => new RegExp(`^CSeq:\\s*${cseq} BYE`, 'im').test(m));
  }

  stopTone(): void {
    if (this.#tone) clearInterval(this.#tone);
    this.#tone = undefined;
  }

  #send(text: string): void {
    this.#socket?.write(Buffer.from(text, 'latin1'));
  }

  /** Frames messages by Content-Length (RFC 3261 §18.3). */
  #data(text: string): void {
    this.#buffer += text;
    for (;;) {
      while (this.#buffer.startsWith('\r\n')) this.#buffer = this.#buffer.slice(2);
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.#buffer.slice(0, end);
      const length = Number(sipHeader(head, '(?:content-length|l)') ?? 0);
      if (this.#buffer.length < end + 4 + length) return;
      const message = this.#buffer.slice(0, end + 4 + length);
      this.#buffer = this.#buffer.slice(end + 4 + length);
      this.#receive(message);
    }
  }

  #receive(message: string): void {
    if (!message.startsWith('SIP/2.0')) this.#answerRequest(message);
    this.#inbox.add(message);
  }

  #answerRequest(request: string): void {
    const method = request.split(' ')[0];
    if (method === 'ACK') return;
    const callId = sipHeader(request, '(?:call-id|i)') ?? '';
    const keep = responseCopies(request);
    let to = sipHeader(request, '(?:to|t)') ?? '';
    const known = this.#calls.get(callId);
    const localTag = known?.localTag ?? (tagOf(to) || `a${randomToken()}`);
    if (!tagOf(to)) to = `${to};tag=${localTag}`;
    const contact = `Contact: <sip:${this.user}@127.0.0.1:${this.localPort};transport=tcp>`;
    if (method === 'INVITE') {
      this.#calls.set(callId, { callId, invite: request, localTag, remoteTag: tagOf(sipHeader(request, '(?:from|f)')) });
      if (!this.answer) {
        this.#send(`SIP/2.0 180 Ringing\r\n${keep.join('\r\n')}\r\nTo: ${to}\r\n${contact}\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      const body = ['v=0', `o=raw 1 1 IN IP4 127.0.0.1`, 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${this.rtp.address().port} RTP/AVP 0`, 'a=rtpmap:0 PCMU/8000', 'a=ptime:20', 'a=sendrecv', ''].join('\r\n');
      this.#send(`SIP/2.0 200 OK\r\n${keep.join('\r\n')}\r\nTo: ${to}\r\n${contact}\r\nContent-Type: application/sdp\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      this.#startTone(request);
      return;
    }
    if (method === 'BYE') this.stopTone();
    this.#send(`SIP/2.0 200 OK\r\n${keep.join('\r\n')}\r\nTo: ${to}\r\nContent-Length: 0\r\n\r\n`);
    // A CANCEL of a ringing INVITE: that INVITE ends 487 (RFC 3261 §9.2).
    const ringing = method === 'CANCEL' ? this.#calls.get(callId) : undefined;
    if (ringing) {
      const inviteKeep = responseCopies(ringing.invite);
      this.#send(`SIP/2.0 487 Request Terminated\r\n${inviteKeep.join('\r\n')}\r\nTo: ${to}\r\nContent-Length: 0\r\n\r\n`);
    }
  }

  /** 1000 Hz PCMU, 20 ms a packet, to the offer's connection address and port. */
  #startTone(invite: string): void {
    this.stopTone();
    const host = /^c=IN IP4 (\S+)/m.exec(invite)?.[1];
    const port = Number(/^m=audio (\d+)/m.exec(invite)?.[1] ?? 0);
    if (!host || !port) return;
    let seq = 0;
    let timestamp = 0;
    const ssrc = Math.floor(Math.random() * 0xffffffff);
    const samples = new Int16Array(160);
    this.#tone = setInterval(() => {
      for (let i = 0; i < 160; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * (timestamp + i)) / 8000));
      const packet = Buffer.alloc(12 + 160);
      packet[0] = 0x80;
      packet[1] = 0;
      packet.writeUInt16BE(seq++ & 0xffff, 2);
      packet.writeUInt32BE(timestamp >>> 0, 4);
      packet.writeUInt32BE(ssrc, 8);
      ulawEncode(samples, packet.subarray(12));
      timestamp += 160;
      this.rtp.send(packet, port, host);
    }, 20);
    this.#tone.unref();
  }
}
