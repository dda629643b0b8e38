// One WebRTC call of bench/webrtc-calls.ts, placed the way a browser places it but without a
// browser: SIP over WebSocket (RFC 7118, its own connection, as each JsSIP page has) offering
// UDP/TLS/RTP/SAVPF with ICE credentials, a certificate fingerprint and setup:actpass; then, at the
// answer's host candidate, ICE checks as the controlling agent with USE-CANDIDATE (the server is
// ICE-lite), the DTLS-SRTP handshake in the role the answer leaves us (the server answers `active`,
// so we are the DTLS server), and SRTP both ways. The STUN codec and DTLS are werift's, as in the
// server (src/media/webrtc: the same DtlsKeying drives our side), and SRTP is the server's own
// engine, so a caller costs a few µs a packet: a thousand of them fit in a few processes, where a
// browser would need a core for a few dozen (bench/webrtc-calls.ts says what that choice leaves out).
// Every message from the server is parsed only as far as the bench needs, and a malformed one
// fails this call, never the process.
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { classes, Message, methods, parseMessage } from 'werift-ice';
import WebSocket from 'ws';
import { SrtpSession } from '../src/media/srtp/session.ts';
import type { DtlsIdentity } from '../src/media/webrtc/dtls-identity.ts';
import { DtlsKeying, type ExportedKeys } from '../src/media/webrtc/dtls-keying.ts';
import { iceCredentials, looksLikeStun } from '../src/media/webrtc/ice-lite.ts';
import { looksLikeDtls, looksLikeRtp } from '../src/media/webrtc/webrtc-demux.ts';
import { randomToken, responseCopies, sipHeader, tagOf } from '../test/helpers/sip-inbox.ts';
import type { CallerAudio } from './webrtc-audio.ts';

/** RFC 7675 §5.1: a browser checks consent about every 5 s. */
const CONSENT_INTERVAL_MS = 5_000;
/** ICE checks until the first answer: every 100 ms (a browser starts at 50 ms), for at most this long. */
const CHECK_INTERVAL_MS = 100;
const CHECKS_FOR_MS = 20_000;
/** A final answer to the INVITE within this time, or the call failed. */
const ANSWER_TIMEOUT_MS = 30_000;
/** A message larger than this from the server is refused (the server's own SIP limit is 64 KiB). */
const MAX_SIP_MESSAGE = 65_536;
/** The largest frame a caller sends (webrtc-audio.ts's Opus tone is well under it), and SRTP's tag. */
const MAX_PAYLOAD_BYTES = 400;
const SRTP_TAG_BYTES = 10;

export interface CallerOptions {
  /** ws://host:port/ws */
  readonly url: string;
  /** The extension dialled (EXTENSIONS.echo or .playback of sip-capacity-target.ts). */
  readonly extension: string;
  /** The endpoint's name, our From user. */
  readonly user: string;
  /** What the call offers and sends (the process codes it once for all its calls). */
  readonly audio: CallerAudio;
}

/** What one call measured; times in ms from the INVITE, undefined when the call did not get that far. */
export interface CallerFigures {
  /** Date.now() at the INVITE and at the keys: the bench's set-up rate across its processes. */
  readonly invitedAt?: number;
  readonly keyedAt?: number;
  readonly answeredMs?: number;
  readonly checkedMs?: number;
  readonly keyedMs?: number;
  /** From the first answered ICE check to the exported keys: the DTLS handshake proper. */
  readonly handshakeMs?: number;
  readonly failure?: string;
  /** The server ended the call (BYE) before we did. */
  readonly endedByServer: boolean;
  /** SRTP packets sent, and received that authenticated, since the last resetCounts(). */
  readonly sent: number;
  readonly back: number;
  /** Received that did not authenticate (after the keys). */
  readonly refused: number;
}

interface RemoteMedia {
  readonly address: string;
  readonly port: number;
  readonly ufrag: string;
  readonly pwd: string;
  readonly fingerprint: { readonly algorithm: string; readonly value: string };
  readonly setup: string;
}

/** What the bench needs from the answer's SDP: where to check, with what credentials, whose certificate. */
function remoteMediaOf(sdp: string): RemoteMedia {
  const line = (pattern: RegExp): string | undefined => pattern.exec(sdp)?.[1];
  const candidate = /^a=candidate:\S+ 1 udp \d+ (\d{1,3}(?:\.\d{1,3}){3}) (\d{1,5}) typ host/im.exec(sdp);
  const address = candidate?.[1] ?? line(/^c=IN IP4 (\d{1,3}(?:\.\d{1,3}){3})\s*$/m);
  const port = Number(candidate?.[2] ?? line(/^m=audio (\d{1,5}) /m));
  const ufrag = line(/^a=ice-ufrag:([A-Za-z0-9+/]{4,256})\s*$/m);
  const pwd = line(/^a=ice-pwd:([A-Za-z0-9+/]{22,256})\s*$/m);
  const fingerprint = /^a=fingerprint:(sha-(?:1|256|384|512)) ([0-9A-Fa-f:]{20,200})\s*$/m.exec(sdp);
  const setup = line(/^a=setup:(active|passive|actpass)\s*$/m) ?? 'active';
  if (!address || !(port > 0 && port < 65536) || !ufrag || !pwd || !fingerprint) throw new Error('the answer lacks a host candidate, ICE credentials or a fingerprint');
  return { address, port, ufrag, pwd, fingerprint: { algorithm: fingerprint[1]!, value: fingerprint[2]! }, setup };
}

export class WebRtcCaller {
  readonly #options: CallerOptions;
  readonly #keying: DtlsKeying;
  readonly #ice = iceCredentials();
  readonly #udp = dgram.createSocket('udp4');
  readonly #host = `${randomToken()}.invalid`;
  readonly #callId = `wrtc-${randomToken()}${randomToken()}`;
  readonly #localTag = randomToken();
  /**
   * dgram.send() reads the buffer when the packet leaves, not when called: a caller catching up sends
   * several packets in a row, so each of those needs its own buffer (one reused would go out twice
   * with the last sequence number, and the server would count the others lost).
   */
  readonly #packets = Array.from({ length: 8 }, () => Buffer.alloc(12 + MAX_PAYLOAD_BYTES + SRTP_TAG_BYTES + 16));
  readonly #ssrc = randomBytes(4).readUInt32BE(0);
  #socket: WebSocket | undefined;
  #remote: RemoteMedia | undefined;
  #remoteTag = '';
  #remoteTarget = '';
  #cseq = 1;
  #session: SrtpSession | undefined;
  #sequence = 0;
  #timestamp = 0;
  #consentTimer: NodeJS.Timeout | undefined;
  #checkTimer: NodeJS.Timeout | undefined;
  #started = 0;
  #figures: { -readonly [K in keyof CallerFigures]: CallerFigures[K] } = { endedByServer: false, sent: 0, back: 0, refused: 0 };
  /** Whoever waits for a response (by CSeq method), and for the keys. */
  #waitingResponse: ((message: string) => void) | undefined;
  #waitingKeys: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #closed = false;

  constructor(identity: DtlsIdentity, options: CallerOptions) {
    this.#options = options;
    this.#keying = new DtlsKeying(identity, { onFailure: (reason) => this.#fail(reason) }, (record) => this.#sendUdp(record), (keys) => this.#keyed(keys));
  }

  get figures(): CallerFigures {
    return { ...this.#figures };
  }

  /** The call is up with its keys: media can flow. */
  get talking(): boolean {
    return this.#session !== undefined && !this.#closed && !this.#figures.endedByServer;
  }

  /**
   * Connects, INVITEs, ACKs, checks and keys; resolves once SRTP can flow, rejects with the reason
   * (recorded in figures.failure too).
   */
  async call(): Promise<void> {
    try {
      await new Promise<void>((resolve, reject) => {
        this.#udp.once('error', reject);
        this.#udp.bind(0, '127.0.0.1', () => resolve());
      });
      this.#udp.on('message', (packet, from) => this.#receiveUdp(packet, from.address, from.port));
      this.#socket = await this.#connect();
      this.#started = performance.now();
      this.#figures.invitedAt = Date.now();
      const answer = await this.#invite();
      this.#figures.answeredMs = performance.now() - this.#started;
      this.#remote = remoteMediaOf(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      // Our DTLS role is the other side of the answer's: active there makes us the server (RFC 5763 §5).
      this.#keying.configureRemote({ iceUfrag: this.#remote.ufrag, fingerprint: this.#remote.fingerprint, role: this.#remote.setup === 'passive' ? 'client' : 'server' });
      const keys = new Promise<void>((resolve, reject) => (this.#waitingKeys = { resolve, reject }));
      this.#startChecks();
      await keys;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#figures.failure ??= reason;
      throw new Error(reason);
    }
  }

  /** The next 20 ms frame of the tone, SRTP protected, to the checked pair. */
  sendOne(): void {
    const session = this.#session;
    const remote = this.#remote;
    if (!session || !remote || this.#closed) return;
    const audio = this.#options.audio;
    const payload = audio.frames[this.#sequence % audio.frames.length]!;
    const packet = this.#packets[this.#sequence % this.#packets.length]!;
    packet[0] = 0x80;
    packet[1] = audio.payloadType;
    packet.writeUInt16BE(this.#sequence++ & 0xffff, 2);
    packet.writeUInt32BE((this.#timestamp += audio.ticksPerFrame) >>> 0, 4);
    packet.writeUInt32BE(this.#ssrc, 8);
    const size = Math.min(payload.length, MAX_PAYLOAD_BYTES);
    payload.copy(packet, 12, 0, size);
    const length = session.protectRtp(packet, 12 + size);
    if (length <= 0) return;
    this.#udp.send(packet, 0, length, remote.port, remote.address);
    this.#figures.sent += 1;
  }

  resetCounts(): void {
    this.#figures.sent = 0;
    this.#figures.back = 0;
    this.#figures.refused = 0;
  }

  /** BYE (when the call was answered), then closes everything. */
  async hangUp(): Promise<void> {
    if (this.#closed) return;
    if (this.#remoteTarget && !this.#figures.endedByServer && this.#socket?.readyState === WebSocket.OPEN) {
      const cseq = ++this.#cseq;
      const done = this.#response('BYE', cseq, 10_000).catch(() => undefined);
      this.#send(this.#request('BYE', this.#remoteTarget, cseq));
      await done;
    }
    this.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#consentTimer);
    clearInterval(this.#checkTimer);
    this.#keying.close();
    this.#waitingKeys?.reject(new Error(this.#figures.failure ?? 'closed before the keys'));
    this.#socket?.close();
    this.#udp.close();
  }

  #connect(): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.#options.url, 'sip', { maxPayload: MAX_SIP_MESSAGE });
      socket.once('open', () => resolve(socket));
      socket.once('error', (error) => reject(new Error(`WebSocket: ${error.message}`)));
      socket.on('message', (data, isBinary) => this.#receiveSip(isBinary ? '' : data.toString()));
      socket.on('close', () => {
        if (this.#closed) return;
        if (this.#session) this.#figures.endedByServer = true;
        this.#fail('the WebSocket closed');
      });
    });
  }

  async #invite(): Promise<string> {
    const body = this.#offer();
    const uri = `sip:${this.#options.extension}@127.0.0.1`;
    const branch = `z9hG4bK${randomToken()}`;
    const final = this.#response('INVITE', 1, ANSWER_TIMEOUT_MS, true);
    this.#send(this.#request('INVITE', uri, 1, branch, ['Content-Type: application/sdp'], body));
    const response = await final;
    const status = Number(response.slice(8, 11));
    this.#remoteTag = tagOf(sipHeader(response, '(?:to|t)'));
    if (status >= 300) {
      // A failure's ACK is part of the INVITE transaction: same branch, same request URI.
      this.#send(this.#request('ACK', uri, 1, branch));
      throw new Error(`INVITE answered ${response.slice(8, response.indexOf('\r\n'))}`);
    }
    this.#remoteTarget = /<([^>]{1,512})>/.exec(sipHeader(response, '(?:contact|m)') ?? '')?.[1] ?? uri;
    this.#send(this.#request('ACK', this.#remoteTarget, 1));
    return response;
  }

  /** A browser's audio offer, with the one codec the bench sends (and telephone-event, as browsers offer). */
  #offer(): string {
    const port = this.#udp.address().port;
    const [algorithm, value] = this.#keying.fingerprint.split(' ');
    return [
      'v=0', `o=- ${randomBytes(6).readUIntBE(0, 6)} 2 IN IP4 127.0.0.1`, 's=-', 't=0 0', 'a=group:BUNDLE 0',
      `m=audio ${port} UDP/TLS/RTP/SAVPF ${this.#options.audio.payloadType} 101`, 'c=IN IP4 127.0.0.1', `a=rtcp:${port} IN IP4 127.0.0.1`,
      `a=candidate:1 1 udp 2122260223 127.0.0.1 ${port} typ host`,
      `a=ice-ufrag:${this.#ice.ufrag}`, `a=ice-pwd:${this.#ice.pwd}`, `a=fingerprint:${algorithm} ${value}`, 'a=setup:actpass', 'a=mid:0',
      'a=sendrecv', 'a=rtcp-mux', ...this.#options.audio.sdpLines, 'a=rtpmap:101 telephone-event/8000', 'a=ptime:20', '',
    ].join('\r\n');
  }

  #request(method: string, uri: string, cseq: number, branch = `z9hG4bK${randomToken()}`, extra: string[] = [], body = ''): string {
    return [
      `${method} ${uri} SIP/2.0`,
      `Via: SIP/2.0/WS ${this.#host};branch=${branch}`,
      'Max-Forwards: 70',
      `From: <sip:${this.#options.user}@127.0.0.1>;tag=${this.#localTag}`,
      `To: <sip:${this.#options.extension}@127.0.0.1>${this.#remoteTag ? `;tag=${this.#remoteTag}` : ''}`,
      `Call-ID: ${this.#callId}`,
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:${this.#options.user}@${this.#host};transport=ws>`,
      ...extra,
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n');
  }

  /** The final response to our `method` with `cseq` (provisional ones skipped), within `timeoutMs`. */
  #response(method: string, cseq: number, timeoutMs: number, keepFailures = false): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waitingResponse = undefined;
        reject(new Error(`no final answer to ${method} in ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.#waitingResponse = (message) => {
        if (!new RegExp(`^CSeq:\\s*${cseq} ${method}\\s*$`, 'im').test(message) || /^SIP\/2\.0 1\d\d/.test(message)) return;
        clearTimeout(timer);
        this.#waitingResponse = undefined;
        if (!keepFailures && !/^SIP\/2\.0 2\d\d/.test(message)) reject(new Error(`${method} answered ${message.slice(8, message.indexOf('\r\n'))}`));
        else resolve(message);
      };
    });
  }

  #receiveSip(message: string): void {
    if (message.length === 0 || message.length > MAX_SIP_MESSAGE || sipHeader(message, '(?:call-id|i)') !== this.#callId) return;
    if (message.startsWith('SIP/2.0 ')) return this.#waitingResponse?.(message);
    const method = /^([A-Z]{1,32}) /.exec(message)?.[1];
    if (!method || method === 'ACK') return;
    // The server's BYE (a call it dropped), or anything else in the dialog: answered 200.
    if (method === 'BYE') {
      this.#figures.endedByServer = true;
      this.#fail('the server hung up');
    }
    const body = method === 'INVITE' ? this.#offer() : '';
    const to = sipHeader(message, '(?:to|t)') ?? '';
    const lines = ['SIP/2.0 200 OK', ...responseCopies(message), `To: ${tagOf(to) ? to : `${to};tag=${this.#localTag}`}`];
    if (body) lines.push(`Contact: <sip:${this.#options.user}@${this.#host};transport=ws>`, 'Content-Type: application/sdp');
    this.#send([...lines, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));
  }

  #send(text: string): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(text);
  }

  #startChecks(): void {
    const until = performance.now() + CHECKS_FOR_MS;
    const check = (): void => {
      if (this.#figures.checkedMs !== undefined) return;
      if (performance.now() > until) return this.#fail('no answer to the ICE checks');
      this.#sendCheck();
    };
    check();
    this.#checkTimer = setInterval(check, CHECK_INTERVAL_MS);
  }

  /** A binding request as the controlling agent, nominating (aggressive nomination, as browsers did). */
  #sendCheck(): void {
    const remote = this.#remote!;
    const request = new Message(methods.BINDING, classes.REQUEST);
    request.setAttribute('USERNAME', `${remote.ufrag}:${this.#ice.ufrag}`);
    request.setAttribute('PRIORITY', 1853824767);
    request.setAttribute('ICE-CONTROLLING', BigInt(`0x${randomBytes(8).toString('hex')}`));
    request.setAttribute('USE-CANDIDATE', null);
    request.addMessageIntegrity(Buffer.from(remote.pwd, 'utf8'));
    request.addFingerprint();
    void this.#sendUdp(request.bytes);
  }

  #receiveUdp(packet: Buffer, address: string, port: number): void {
    const remote = this.#remote;
    if (!remote || address !== remote.address || port !== remote.port || this.#closed) return;
    if (looksLikeRtp(packet)) return this.#receiveRtp(packet);
    if (looksLikeDtls(packet)) return this.#keying.receive(packet);
    if (looksLikeStun(packet)) this.#receiveStun(packet, remote);
  }

  #receiveStun(packet: Buffer, remote: RemoteMedia): void {
    let answer: Message | undefined;
    try {
      answer = parseMessage(packet, Buffer.from(remote.pwd, 'utf8'));
    } catch {
      answer = undefined;
    }
    if (!answer || answer.messageClass !== classes.RESPONSE || this.#figures.checkedMs !== undefined) return;
    this.#figures.checkedMs = performance.now() - this.#started;
    clearInterval(this.#checkTimer);
    this.#keying.pairChecked();
    // Consent freshness: the server stops sending 30 s after the last check.
    this.#consentTimer = setInterval(() => this.#sendCheck(), CONSENT_INTERVAL_MS);
  }

  #receiveRtp(packet: Buffer): void {
    const session = this.#session;
    // RTCP (payload types 72..76 with the marker bit) is not counted: the server's reports, not audio.
    if (!session || (packet[1]! & 0x7f) !== this.#options.audio.payloadType) return;
    if (session.unprotectRtp(packet, packet.length) > 0) this.#figures.back += 1;
    else this.#figures.refused += 1;
  }

  #keyed(keys: ExportedKeys): void {
    if (this.#closed) return;
    this.#session = new SrtpSession(keys.local, keys.remote);
    this.#figures.keyedMs = performance.now() - this.#started;
    this.#figures.keyedAt = Date.now();
    this.#figures.handshakeMs = this.#figures.keyedMs - (this.#figures.checkedMs ?? this.#figures.keyedMs);
    this.#waitingKeys?.resolve();
    this.#waitingKeys = undefined;
  }

  #sendUdp(data: Buffer): Promise<void> {
    const remote = this.#remote;
    if (!remote || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#udp.send(data, remote.port, remote.address, () => resolve()));
  }

  #fail(reason: string): void {
    this.#figures.failure ??= reason;
    this.#waitingKeys?.reject(new Error(reason));
    this.#waitingKeys = undefined;
  }
}
