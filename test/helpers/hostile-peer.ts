// A hand-driven SIP peer for the live hostile-input sweep (test/channels/pjsip/live-sweep.test.ts):
// one UDP socket or one TCP connection from a chosen local address, which sends whatever bytes a
// case builds — well-formed or not — keeps every message it receives, answers the server's own
// requests (BYE, re-INVITE, NOTIFY, OPTIONS) with 200 so a dialog's far end behaves, and can set up
// a call (INVITE, 200, ACK) to drive into odd states.
import dgram from 'node:dgram';
import net from 'node:net';
import { randomToken, responseCopies, SipInbox, sipHeader, tagOf } from './sip-inbox.ts';

export type PeerTransport = 'UDP' | 'TCP';

/** A dialog the peer set up: what its in-dialog requests need. */
export interface PeerDialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** The server's Contact URI (the request URI of in-dialog requests). */
  readonly target: string;
  /** The INVITE's branch and CSeq (a CANCEL after the 200 names them). */
  readonly inviteBranch: string;
  readonly inviteCseq: number;
  cseq: number;
}

/** The pieces of a request the sweep builds; anything left out is filled in well-formed. */
export interface RequestParts {
  readonly method: string;
  readonly uri?: string;
  readonly callId?: string;
  readonly fromTag?: string;
  readonly toTag?: string;
  readonly cseq?: number | string;
  readonly branch?: string;
  readonly user?: string;
  /** The user part of To (default `hold`; a REGISTER names its AOR there). */
  readonly toUser?: string;
  readonly headers?: readonly string[];
  readonly body?: string | Buffer;
  readonly contentType?: string;
  /** The Content-Length written (default: the body's length). */
  readonly contentLength?: number;
  readonly maxForwards?: number | string;
}

/** The SDP offer of a well-behaved phone with its RTP at `port`. */
export function plainSdp(port: number): string {
  return ['v=0', 'o=peer 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 0 101`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16', 'a=sendrecv', ''].join('\r\n');
}

export class HostilePeer {
  readonly inbox: SipInbox;
  /** Every response received (first line and CSeq), in order: a case's 5xx check reads them. */
  readonly responses: Array<{ status: number; cseq: string; callId: string }> = [];
  #udp: dgram.Socket | undefined;
  #tcp: net.Socket | undefined;
  #buffer = Buffer.alloc(0);
  #closed = false;
  #seq = 1;

  private constructor(
    readonly transport: PeerTransport,
    readonly address: string,
    readonly serverPort: number,
  ) {
    this.inbox = new SipInbox(`${transport} peer ${address}`);
  }

  static async open(transport: PeerTransport, serverPort: number, address = '127.0.0.1'): Promise<HostilePeer> {
    const peer = new HostilePeer(transport, address, serverPort);
    if (transport === 'UDP') {
      const socket = dgram.createSocket('udp4');
      socket.on('message', (data) => peer.#receive(data.toString('latin1')));
      await new Promise<void>((resolve) => socket.bind(0, address, resolve));
      peer.#udp = socket;
    } else {
      const socket = net.connect({ host: '127.0.0.1', port: serverPort, localAddress: address });
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => (peer.#closed = true));
      socket.on('data', (chunk: Buffer) => peer.#data(chunk));
      peer.#tcp = socket;
    }
    return peer;
  }

  get localPort(): number {
    return this.#udp?.address().port ?? this.#tcp?.localPort ?? 0;
  }

  /** Whether the server closed (or reset) the TCP connection. */
  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    if (this.#udp && !this.#closed) this.#udp.close();
    this.#tcp?.destroy();
    this.#closed = true;
  }

  sendRaw(bytes: string | Buffer): void {
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
    if (this.#udp) this.#udp.send(data, this.serverPort, '127.0.0.1');
    else if (!this.#closed) this.#tcp?.write(data);
  }

  /** The text of a request from its parts (the Via names this peer's transport and port). */
  build(parts: RequestParts): { text: Buffer; branch: string; cseq: string; callId: string } {
    const branch = parts.branch ?? `z9hG4bK${randomToken()}`;
    const cseq = String(parts.cseq ?? this.#seq++);
    const callId = parts.callId ?? `sweep-${randomToken()}`;
    const user = parts.user ?? 'sweeper';
    const body = parts.body === undefined ? Buffer.alloc(0) : typeof parts.body === 'string' ? Buffer.from(parts.body, 'latin1') : parts.body;
    const lines = [
      `${parts.method} ${parts.uri ?? `sip:hold@127.0.0.1:${this.serverPort}`} SIP/2.0`,
      `Via: SIP/2.0/${this.transport} ${this.address}:${this.localPort};branch=${branch};rport`,
      `Max-Forwards: ${parts.maxForwards ?? 70}`,
      `From: <sip:${user}@${this.address}>;tag=${parts.fromTag ?? randomToken()}`,
      `To: <sip:${parts.toUser ?? 'hold'}@127.0.0.1:${this.serverPort}>${parts.toTag ? `;tag=${parts.toTag}` : ''}`,
      `Call-ID: ${callId}`,
      `CSeq: ${cseq} ${parts.method}`,
      `Contact: <sip:${user}@${this.address}:${this.localPort}${this.transport === 'TCP' ? ';transport=tcp' : ''}>`,
      ...(parts.headers ?? []),
      ...(body.length > 0 || parts.contentType ? [`Content-Type: ${parts.contentType ?? 'application/sdp'}`] : []),
      `Content-Length: ${parts.contentLength ?? body.length}`,
      '',
      '',
    ];
    return { text: Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]), branch, cseq, callId };
  }

  send(parts: RequestParts): { branch: string; cseq: string; callId: string } {
    const built = this.build(parts);
    this.sendRaw(built.text);
    return built;
  }

  /** Sends a request and waits for its final response (undefined when none comes within `timeoutMs`). */
  async request(parts: RequestParts, timeoutMs = 8000): Promise<string | undefined> {
    const built = this.build(parts);
    this.sendRaw(built.text);
    // Over UDP the request is sent again each second until answered (a UAC's Timer E, coarser): a
    // datagram lost on a loaded machine is no finding. The server takes the copies as retransmissions.
    const resend = this.#udp && parts.method !== 'ACK' ? setInterval(() => this.sendRaw(built.text), 1000) : undefined;
    try {
      return await this.finalFor(built.callId, built.cseq, parts.method, timeoutMs);
    } finally {
      clearInterval(resend);
    }
  }

  /** The final response to the request of that Call-ID and CSeq, or undefined after `timeoutMs`. */
  async finalFor(callId: string, cseq: string, method: string, timeoutMs = 8000): Promise<string | undefined> {
    const cseqLine = new RegExp(`^(?:cseq):\\s*${cseq}\\s+${method}\\b`, 'im');
    return this.inbox.next(/^SIP\/2\.0 [2-6]\d\d/, timeoutMs, (m) => cseqLine.test(m) && sipHeader(m, '(?:call-id|i)') === callId).catch(() => undefined);
  }

  /** INVITE (to `exten`, with `sdp`), 200, ACK: a confirmed dialog, or the final status that refused it. */
  async call(exten = 'hold', sdp = plainSdp(40000), extra: readonly string[] = []): Promise<PeerDialog | number> {
    const fromTag = randomToken();
    const built = this.build({ method: 'INVITE', uri: `sip:${exten}@127.0.0.1:${this.serverPort}`, fromTag, body: sdp, headers: extra });
    this.sendRaw(built.text);
    // Over UDP, again each second until the server answers anything (as request() does).
    const resend = this.#udp ? setInterval(() => (this.responses.some((r) => r.callId === built.callId) ? clearInterval(resend) : this.sendRaw(built.text)), 1000) : undefined;
    const sent = built;
    const final = await this.finalFor(sent.callId, sent.cseq, 'INVITE', 15_000).finally(() => clearInterval(resend));
    if (!final) return 0;
    const status = statusOf(final);
    if (status >= 300) return status;
    const target = /<([^>]+)>/.exec(sipHeader(final, '(?:contact|m)') ?? '')?.[1] ?? `sip:127.0.0.1:${this.serverPort}`;
    const dialog: PeerDialog = { callId: sent.callId, localTag: fromTag, remoteTag: tagOf(sipHeader(final, '(?:to|t)')), target, inviteBranch: sent.branch, inviteCseq: Number(sent.cseq), cseq: Number(sent.cseq) };
    this.ack(dialog, dialog.inviteCseq);
    return dialog;
  }

  /** An in-dialog request's parts (next CSeq unless given). */
  inDialog(dialog: PeerDialog, parts: RequestParts): RequestParts {
    const cseq = parts.cseq ?? ++dialog.cseq;
    return { uri: dialog.target, callId: dialog.callId, fromTag: dialog.localTag, toTag: dialog.remoteTag, ...parts, cseq };
  }

  /** ACK for the 2xx of the INVITE with CSeq `cseq` (a new transaction, RFC 3261 §13.2.2.4). */
  ack(dialog: PeerDialog, cseq: number): void {
    this.send({ method: 'ACK', uri: dialog.target, callId: dialog.callId, fromTag: dialog.localTag, toTag: dialog.remoteTag, cseq });
  }

  /** Ends the dialog (BYE) and waits for its answer; the status, or 0 without one. */
  async hangUp(dialog: PeerDialog): Promise<number> {
    const final = await this.request(this.inDialog(dialog, { method: 'BYE' }), 8000);
    return final ? statusOf(final) : 0;
  }

  #data(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      while (this.#buffer.length >= 2 && this.#buffer[0] === 0x0d && this.#buffer[1] === 0x0a) this.#buffer = this.#buffer.subarray(2);
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.#buffer.subarray(0, end).toString('latin1');
      const length = Number(sipHeader(head, '(?:content-length|l)') ?? 0);
      if (this.#buffer.length < end + 4 + length) return;
      const message = this.#buffer.subarray(0, end + 4 + length).toString('latin1');
      this.#buffer = this.#buffer.subarray(end + 4 + length);
      this.#receive(message);
    }
  }

  #receive(message: string): void {
    if (message.startsWith('SIP/2.0')) {
      const status = statusOf(message);
      const cseq = sipHeader(message, 'cseq') ?? '';
      this.responses.push({ status, cseq, callId: sipHeader(message, '(?:call-id|i)') ?? '' });
      if (status >= 300 && / INVITE$/i.test(cseq)) this.#ackRefusal(message);
    } else {
      this.#answer(message);
    }
    this.inbox.add(message);
  }

  /**
   * The ACK of a 3xx–6xx to an INVITE (RFC 3261 §17.1.1.3): the same branch, the response's To; it
   * stops the server's retransmissions, which would otherwise land in the next case.
   */
  #ackRefusal(response: string): void {
    const via = sipHeader(response, '(?:via|v)') ?? '';
    const uri = `sip:hold@127.0.0.1:${this.serverPort}`;
    const lines = [
      `ACK ${uri} SIP/2.0`,
      `Via: ${via}`,
      'Max-Forwards: 70',
      `From: ${sipHeader(response, '(?:from|f)')}`,
      `To: ${sipHeader(response, '(?:to|t)')}`,
      `Call-ID: ${sipHeader(response, '(?:call-id|i)')}`,
      `CSeq: ${(sipHeader(response, 'cseq') ?? '').split(/\s+/)[0]} ACK`,
      'Content-Length: 0',
      '',
      '',
    ];
    this.sendRaw(lines.join('\r\n'));
  }

  /** The server's requests get 200 (ACK nothing): the far end of its dialogs behaves. */
  #answer(request: string): void {
    const method = request.split(' ')[0];
    if (method === 'ACK') return;
    let to = sipHeader(request, '(?:to|t)') ?? '';
    if (!tagOf(to)) to = `${to};tag=p${randomToken()}`;
    const contact = `Contact: <sip:sweeper@${this.address}:${this.localPort}${this.transport === 'TCP' ? ';transport=tcp' : ''}>`;
    const body = method === 'INVITE' ? plainSdp(40000) : '';
    const type = body ? 'Content-Type: application/sdp\r\n' : '';
    this.sendRaw(`SIP/2.0 200 OK\r\n${responseCopies(request).join('\r\n')}\r\nTo: ${to}\r\n${contact}\r\n${type}Content-Length: ${body.length}\r\n\r\n${body}`);
  }
}

export function statusOf(response: string): number {
  return Number(/^SIP\/2\.0 (\d{3})/.exec(response)?.[1] ?? 0);
}
