// The phone of the SIP media tests (media.test.ts, media-metrics.test.ts): raw UDP, hand-written SIP,
// RTP and RTCP sockets of its own (its a=rtcp port is not RTP + 1, so the server must honour it), PCMU
// audio paced as a sound card paces it; and what the tests read and write with it — RTCP compound
// datagrams taken apart by hand, DTMF as tones, a u-law WAV for SIPp to stream.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { dtmfFrequencies } from '../../../src/media/dtmf.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';

/** Polls `probe` every 20 ms until it gives a value, or fails naming `what`. */
export async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One RTCP packet of a compound datagram, read by hand (RFC 3550 6.4). */
export interface RtcpPart {
  readonly type: number;
  readonly count: number;
  readonly ssrc: number;
  readonly bytes: Buffer;
}

export function rtcpParts(datagram: Buffer): RtcpPart[] {
  const parts: RtcpPart[] = [];
  let offset = 0;
  while (offset + 8 <= datagram.length) {
    assert.equal(datagram[offset] >> 6, 2, 'RTCP version 2');
    const length = (datagram.readUInt16BE(offset + 2) + 1) * 4;
    parts.push({ type: datagram[offset + 1], count: datagram[offset] & 0x1f, ssrc: datagram.readUInt32BE(offset + 4), bytes: datagram.subarray(offset, offset + length) });
    offset += length;
  }
  assert.equal(offset, datagram.length, 'the lengths add up to the datagram');
  return parts;
}

/** A phone: SIP, RTP and RTCP sockets of its own; calls extension 100 as `user`. */
export class Phone {
  readonly sip = dgram.createSocket('udp4');
  readonly rtp = dgram.createSocket('udp4');
  readonly rtcp = dgram.createSocket('udp4');
  readonly rtpIn: Buffer[] = [];
  readonly rtcpIn: Array<{ at: number; data: Buffer; port: number }> = [];
  /** RTCP packets that arrived on the RTP socket (multiplexed). */
  readonly muxedIn: Array<{ at: number; data: Buffer }> = [];
  readonly messages: string[] = [];
  readonly callId = `media-${Math.random().toString(36).slice(2)}`;
  readonly tag = `p${Math.random().toString(36).slice(2)}`;
  readonly ssrc = 0x1357_9bdf;
  remoteTag = '';
  answer = '';
  serverRtpPort = 0;
  serverRtcpPort = 0;
  #seq = 100;
  #ts = 8000;
  #timer: NodeJS.Timeout | undefined;
  sent = 0;
  /** The socket RTP leaves from (another one than the SDP's: a NAT mapping the port). */
  rtpFrom: dgram.Socket = this.rtp;

  /** `serverPort`: the server's SIP port, where the phone's requests and responses go. */
  constructor(readonly user: string, readonly serverPort: number) {}

  async open(): Promise<this> {
    await new Promise<void>((resolve) => this.sip.bind(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => this.rtp.bind(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => this.rtcp.bind(0, '127.0.0.1', resolve));
    this.sip.on('message', (message) => {
      const text = message.toString('latin1');
      if (!text.startsWith('SIP/2.0')) this.reply(text, 200, 'OK');
      this.messages.push(text);
    });
    this.rtp.on('message', (packet) => {
      if (packet[1] >= 192 && packet[1] <= 223) this.muxedIn.push({ at: Date.now(), data: packet });
      else this.rtpIn.push(packet);
    });
    this.rtcp.on('message', (data, rinfo) => this.rtcpIn.push({ at: Date.now(), data, port: rinfo.port }));
    return this;
  }

  close(): void {
    this.stopAudio();
    this.sip.close();
    this.rtp.close();
    this.rtcp.close();
  }

  get sipPort(): number {
    return this.sip.address().port;
  }

  send(text: string): void {
    this.sip.send(Buffer.from(text, 'latin1'), this.serverPort, '127.0.0.1');
  }

  headers(method: string, cseq: number): string {
    return [
      `Via: SIP/2.0/UDP 127.0.0.1:${this.sipPort};branch=z9hG4bK${Math.random().toString(36).slice(2)};rport`,
      'Max-Forwards: 70',
      `From: <sip:${this.user}@127.0.0.1:${this.sipPort}>;tag=${this.tag}`,
      `To: <sip:100@127.0.0.1:${this.serverPort}>${this.remoteTag ? `;tag=${this.remoteTag}` : ''}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:${this.user}@127.0.0.1:${this.sipPort}>`,
    ].join('\r\n');
  }

  reply(request: string, status: number, reason: string): void {
    const keep = request.split('\r\n').filter((line) => /^(via|from|to|call-id|cseq):/i.test(line));
    this.send(`SIP/2.0 ${status} ${reason}\r\n${keep.join('\r\n')}\r\nContent-Length: 0\r\n\r\n`);
  }

  async nextMessage(firstLine: RegExp, timeoutMs = 10_000): Promise<string> {
    return waitFor(`SIP ${firstLine}`, () => {
      const index = this.messages.findIndex((m) => firstLine.test(m.split('\r\n')[0]));
      return index >= 0 ? this.messages.splice(index, 1)[0] : undefined;
    }, timeoutMs);
  }

  offer(options: { telephoneEvent?: boolean; mux?: boolean } = {}): string {
    const te = options.telephoneEvent ?? true;
    return [
      'v=0',
      'o=phone 1 1 IN IP4 127.0.0.1',
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      `m=audio ${this.rtp.address().port} RTP/AVP 0${te ? ' 101' : ''}`,
      'a=rtpmap:0 PCMU/8000',
      ...(te ? ['a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16'] : []),
      // The phone's RTCP port is not RTP + 1: the server must honour a=rtcp.
      `a=rtcp:${this.rtcp.address().port}`,
      ...(options.mux ? ['a=rtcp-mux'] : []),
      'a=ptime:20',
      'a=sendrecv',
      '',
    ].join('\r\n');
  }

  /** INVITE with `sdp`; resolves with the 200 (ACKed). */
  async call(sdp: string): Promise<string> {
    this.send(`INVITE sip:100@127.0.0.1:${this.serverPort} SIP/2.0\r\n${this.headers('INVITE', 1)}\r\nContent-Type: application/sdp\r\nContent-Length: ${sdp.length}\r\n\r\n${sdp}`);
    const final = await this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 15_000);
    assert.match(final, /^SIP\/2\.0 200/);
    // The INVITE's provisional responses (100 Trying, sent at once) are the INVITE's: a later wait
    // for the response to an INFO or a re-INVITE must not take them.
    for (let i = this.messages.length - 1; i >= 0; i--) if (/^SIP\/2\.0 1\d\d/.test(this.messages[i]) && /^CSeq:\s*1 INVITE/im.test(this.messages[i])) this.messages.splice(i, 1);
    this.remoteTag = /^(?:to|t):.*;tag=([^;\s]+)/im.exec(final)?.[1] ?? '';
    this.answer = final;
    this.serverRtpPort = Number(/^m=audio (\d+)/m.exec(final)?.[1] ?? 0);
    this.serverRtcpPort = Number(/^a=rtcp:(\d+)/m.exec(final)?.[1] ?? 0);
    this.send(`ACK sip:100@127.0.0.1:${this.serverPort} SIP/2.0\r\n${this.headers('ACK', 1)}\r\nContent-Length: 0\r\n\r\n`);
    return final;
  }

  /** Sends one PCMU packet of `samples` (160). */
  sendPcmu(samples: Int16Array): void {
    const packet = Buffer.alloc(12 + 160);
    packet[0] = 0x80;
    packet[1] = 0;
    packet.writeUInt16BE(this.#seq & 0xffff, 2);
    packet.writeUInt32BE(this.#ts >>> 0, 4);
    packet.writeUInt32BE(this.ssrc, 8);
    for (let i = 0; i < 160; i++) packet[12 + i] = linearToUlaw(samples[i] ?? 0);
    this.rtpFrom.send(packet, this.serverRtpPort, '127.0.0.1');
    this.#seq += 1;
    this.#ts += 160;
    this.sent += 1;
  }

  get sequence(): number {
    return this.#seq;
  }

  /** Skips `count` sequence numbers (packets "lost" on the way). */
  lose(count: number): void {
    this.#seq += count;
    this.#ts += 160 * count;
  }

  /**
   * Streams 20 ms frames from `source` until stopAudio(), paced by the wall clock as a phone's
   * sound card is: a timer that fires late (a loaded machine) sends the frames it owes at once.
   */
  startAudio(source: (frame: number) => Int16Array): void {
    let frame = 0;
    const started = performance.now();
    this.#timer = setInterval(() => {
      const due = Math.floor((performance.now() - started) / 20) + 1;
      for (let owed = 0; frame < due && owed < 25; owed++) this.sendPcmu(source(frame++));
    }, 20);
  }

  stopAudio(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The PCMU audio received, decoded. */
  receivedAudio(): Int16Array {
    const payloads = this.rtpIn.filter((p) => (p[1] & 0x7f) === 0).map((p) => p.subarray(12));
    const out = new Int16Array(payloads.reduce((n, p) => n + p.length, 0));
    let i = 0;
    for (const payload of payloads) for (const byte of payload) out[i++] = ulawToLinear(byte);
    return out;
  }
}

/** `digits` as DTMF tones, each `toneMs` then `gapMs` of silence, in 20 ms frames (frame index → samples). */
export function dtmfTones(digits: string, toneMs: number, gapMs: number, leadMs = 200): (frame: number) => Int16Array {
  const total = Math.round(((leadMs + digits.length * (toneMs + gapMs) + 400) * 8000) / 1000);
  const signal = new Int16Array(total);
  let at = Math.round((leadMs * 8000) / 1000);
  for (const digit of digits) {
    const [low, high] = dtmfFrequencies(digit)!;
    const length = Math.round((toneMs * 8000) / 1000);
    for (let i = 0; i < length; i++) signal[at + i] = Math.round(6000 * Math.sin((2 * Math.PI * low * i) / 8000) + 6000 * Math.sin((2 * Math.PI * high * i) / 8000));
    at += length + Math.round((gapMs * 8000) / 1000);
  }
  return (frame) => (frame * 160 + 160 <= signal.length ? signal.subarray(frame * 160, frame * 160 + 160) : new Int16Array(160));
}

/** A mono 8 kHz u-law WAV (format 7) of `samples`. */
export function ulawWav(samples: Int16Array): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(7, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(samples.length, 40);
  const data = Buffer.alloc(samples.length);
  for (let i = 0; i < samples.length; i++) data[i] = linearToUlaw(samples[i]);
  return Buffer.concat([header, data]);
}
