// A small SIP phone over raw UDP for the PBX interop tests, for what SIPp cannot do in one
// scenario: hold several dialogs at once (attended transfer), send an INVITE with Replaces, and
// show the test every RTP packet it receives (was it music on hold?). It answers every INVITE
// (re-INVITEs too) with PCMU and the mirror of the offer's direction, and every other request 200.
import dgram from 'node:dgram';
import { ulawDecode } from '../../src/media/g711.ts';
import { randomToken, responseCopies, SipInbox, sipHeader, tagOf } from '../helpers/sip-inbox.ts';

export interface PhoneDialog {
  readonly callId: string;
  readonly localTag: string;
  remoteTag: string;
  /** The user part the phone called (or was called at). */
  readonly user: string;
  cseq: number;
}

export interface ReceivedRtp {
  readonly at: number;
  readonly payloadType: number;
  /** The RTP header's sequence number and timestamp: where the packet belongs whenever it came. */
  readonly sequence: number;
  readonly timestamp: number;
  readonly payload: Buffer;
}

export class RawPhone {
  readonly sip = dgram.createSocket('udp4');
  readonly rtp = dgram.createSocket('udp4');
  readonly received: ReceivedRtp[] = [];
  /** Every SIP message received, newest last; nextMessage() takes them. */
  readonly #inbox: SipInbox;
  /** Our To tags for dialogs the phone answered, by Call-ID. */
  readonly #answeredTags = new Map<string, string>();
  serverPort = 0;

  constructor(readonly user: string) {
    this.#inbox = new SipInbox(user);
  }

  async open(port = 0): Promise<void> {
    await new Promise<void>((resolve) => this.sip.bind(port, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => this.rtp.bind(0, '127.0.0.1', resolve));
    this.sip.on('message', (message) => this.#receive(message.toString('latin1')));
    this.rtp.on('message', (packet) => {
      if (packet.length > 12) this.received.push({ at: Date.now(), payloadType: packet[1] & 0x7f, sequence: packet.readUInt16BE(2), timestamp: packet.readUInt32BE(4), payload: packet.subarray(12) });
    });
  }

  get sipPort(): number {
    return this.sip.address().port;
  }

  close(): void {
    this.sip.close();
    this.rtp.close();
  }

  /** The next SIP message whose first line matches (and `also`, when given), within `timeoutMs`. */
  nextMessage(firstLine: RegExp, timeoutMs = 10_000, also: (message: string) => boolean = () => true): Promise<string> {
    return this.#inbox.next(firstLine, timeoutMs, also);
  }

  /** The PCMU audio received between `from` and `to` (ms timestamps), as linear samples. */
  audioBetween(from: number, to: number): Int16Array {
    const packets = this.received.filter((packet) => packet.at >= from && packet.at < to && packet.payloadType === 0);
    const samples = new Int16Array(packets.reduce((total, packet) => total + packet.payload.length, 0));
    let offset = 0;
    for (const packet of packets) offset += ulawDecode(packet.payload, samples.subarray(offset));
    return samples;
  }

  sdp(direction = 'sendrecv', version = 1): string {
    return ['v=0', `o=raw 1 ${version} IN IP4 127.0.0.1`, 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${this.rtp.address().port} RTP/AVP 0 101`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16', 'a=ptime:20', `a=${direction}`, ''].join('\r\n');
  }

  /** INVITE `user` at the server (with extra headers, e.g. Replaces); resolves with the dialog and the final response, ACKed. */
  async call(user: string, extraHeaders: string[] = []): Promise<{ dialog: PhoneDialog; final: string }> {
    const dialog: PhoneDialog = { callId: `raw-${randomToken()}`, localTag: `t${randomToken()}`, remoteTag: '', user, cseq: 1 };
    const branch = `z9hG4bK${randomToken()}`;
    const body = this.sdp();
    this.#send(`INVITE sip:${user}@127.0.0.1:${this.serverPort} SIP/2.0\r\n${this.#headers(dialog, 'INVITE', branch)}\r\n${extraHeaders.map((h) => `${h}\r\n`).join('')}Content-Type: application/sdp\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const final = await this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 15_000, (m) => sipHeader(m, '(?:call-id|i)') === dialog.callId);
    dialog.remoteTag = tagOf(sipHeader(final, '(?:to|t)'));
    const ackBranch = /^SIP\/2\.0 2/.test(final) ? `z9hG4bK${randomToken()}` : branch;
    this.#send(`ACK sip:${user}@127.0.0.1:${this.serverPort} SIP/2.0\r\n${this.#headers(dialog, 'ACK', ackBranch)}\r\nContent-Length: 0\r\n\r\n`);
    return { dialog, final };
  }

  /** A re-INVITE in `dialog` offering `direction` (hold: sendonly); resolves with the final response, ACKed. */
  async reinvite(dialog: PhoneDialog, direction: string): Promise<string> {
    dialog.cseq++;
    const cseq = dialog.cseq;
    const body = this.sdp(direction, cseq);
    this.#send(`INVITE sip:${dialog.user}@127.0.0.1:${this.serverPort} SIP/2.0\r\n${this.#headers(dialog, 'INVITE')}\r\nContent-Type: application/sdp\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const final = await this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 10_000, (m) => sipHeader(m, '(?:call-id|i)') === dialog.callId && new RegExp(`^CSeq:\\s*${cseq} INVITE`, 'im').test(m));
    this.#send(`ACK sip:${dialog.user}@127.0.0.1:${this.serverPort} SIP/2.0\r\n${this.#headers(dialog, 'ACK').replace(/^CSeq: .*$/m, `CSeq: ${cseq} ACK`)}\r\nContent-Length: 0\r\n\r\n`);
    return final;
  }

  /** The dialog of a call the phone answered (its Call-ID), to send requests in it. */
  answeredDialog(callId: string, invite: string): PhoneDialog {
    return { callId, localTag: this.#answeredTags.get(callId) ?? '', remoteTag: tagOf(sipHeader(invite, '(?:from|f)')), user: 'patchbay', cseq: 100 };
  }

  /** A request in `dialog` (REFER, BYE, ...); resolves with its final response. */
  async request(dialog: PhoneDialog, method: string, extraHeaders: string[] = []): Promise<string> {
    dialog.cseq++;
    const cseq = dialog.cseq;
    this.#send(`${method} sip:${dialog.user}@127.0.0.1:${this.serverPort} SIP/2.0\r\n${this.#headers(dialog, method)}\r\n${extraHeaders.map((h) => `${h}\r\n`).join('')}Content-Length: 0\r\n\r\n`);
    return this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 10_000, (m) => sipHeader(m, '(?:call-id|i)') === dialog.callId && new RegExp(`^CSeq:\\s*${cseq} ${method}`, 'im').test(m));
  }

  #headers(dialog: PhoneDialog, method: string, branch = `z9hG4bK${randomToken()}`): string {
    return [
      `Via: SIP/2.0/UDP 127.0.0.1:${this.sipPort};branch=${branch};rport`,
      'Max-Forwards: 70',
      `From: <sip:${this.user}@127.0.0.1:${this.sipPort}>;tag=${dialog.localTag}`,
      `To: <sip:${dialog.user}@127.0.0.1:${this.serverPort}>${dialog.remoteTag ? `;tag=${dialog.remoteTag}` : ''}`,
      `Call-ID: ${dialog.callId}`,
      `CSeq: ${method === 'ACK' ? 1 : dialog.cseq} ${method}`,
      `Contact: <sip:${this.user}@127.0.0.1:${this.sipPort}>`,
    ].join('\r\n');
  }

  #send(text: string): void {
    this.sip.send(Buffer.from(text, 'latin1'), this.serverPort, '127.0.0.1');
  }

  #receive(text: string): void {
    if (!text.startsWith('SIP/2.0')) this.#answer(text);
    this.#inbox.add(text);
  }

  /** 200 to any request but ACK; an INVITE gets our SDP with the mirrored direction. */
  #answer(request: string): void {
    const method = request.split(' ')[0];
    if (method === 'ACK') return;
    const callId = sipHeader(request, '(?:call-id|i)') ?? '';
    const keep = responseCopies(request);
    let to = sipHeader(request, '(?:to|t)') ?? '';
    if (!tagOf(to)) {
      const tag = this.#answeredTags.get(callId) ?? `a${randomToken()}`;
      this.#answeredTags.set(callId, tag);
      to = `${to};tag=${tag}`;
    }
    let tail = 'Content-Length: 0\r\n\r\n';
    if (method === 'INVITE') {
      const offered = /^a=(sendonly|recvonly|inactive|sendrecv)/m.exec(request)?.[1] ?? 'sendrecv';
      const mirror = offered === 'sendonly' ? 'recvonly' : offered === 'recvonly' ? 'sendonly' : offered;
      const body = this.sdp(mirror, 2 + this.#inbox.size);
      tail = `Contact: <sip:${this.user}@127.0.0.1:${this.sipPort}>\r\nContent-Type: application/sdp\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    }
    this.#send(`SIP/2.0 200 OK\r\n${keep.join('\r\n')}\r\nTo: ${to}\r\n${tail}`);
  }
}
