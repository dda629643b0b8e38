// SIP call media against a phone of our own (raw UDP: hand-written SIP, its own RTP and RTCP
// sockets), for what SIPp cannot do: RTCP reports on RTP port + 1 (or muxed on the RTP port with
// rtcp_mux), their fields checked byte by byte, a round-trip time measured from the phone's
// reply and shown with the phone's view of our stream by GET /channels/{id}/rtp_statistics, the
// RTCP BYE at hang-up; DTMF as tones in PCMU audio both ways (dtmf_mode inband and auto without
// telephone-event) and as SIP INFO both ways (dtmf_mode info); and SIPp streaming DTMF tones as
// PCMU audio to an inband endpoint.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, test } from 'node:test';
import { DtmfDetector, dtmfFrequencies } from '../../../src/media/dtmf.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import { dtmfFromInfo } from '../../../src/channels/pjsip/dtmf-info.ts';
import { RtpPortRange } from '../../../src/media/rtp/port-range.ts';
import { parsePrometheus, sumOf } from '../../helpers/prometheus.ts';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;
const SCENARIOS = fileURLToPath(new URL('../../sip/scenarios/', import.meta.url));

let work: string;
let server: TestServer;
let events: EventSocket;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'patchbay-sip-media-'));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, '[media-in]\nexten => 100,1,Stasis(media-app)\n');
  const endpoint = (extra: Record<string, string> = {}) => ({ context: 'media-in', allow: 'ulaw', ...extra });
  server = await startTestServer({
    sip: { rtcp_interval_ms: 500 },
    config_objects: {
      res_pjsip: {
        endpoint: {
          plain: endpoint(),
          // Symmetric RTP is the endpoint's choice (rtp_symmetric, default no, as in Asterisk).
          natted: endpoint({ rtp_symmetric: 'yes' }),
          muxer: endpoint({ rtcp_mux: 'yes' }),
          tones: endpoint({ dtmf_mode: 'inband' }),
          auto: endpoint({ dtmf_mode: 'auto' }),
          infos: endpoint({ dtmf_mode: 'info' }),
        },
      },
    },
    dialplan: { file: dialplanFile },
  } as never);
  events = await server.events('app=media-app&subscribeAll=true');
});

after(async () => {
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

async function nextEvent(match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

const post = (path: string, method = 'POST'): Promise<Response> => server.ari(path, { method });

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One RTCP packet of a compound datagram, read by hand (RFC 3550 6.4). */
interface RtcpPart {
  readonly type: number;
  readonly count: number;
  readonly ssrc: number;
  readonly bytes: Buffer;
}

function rtcpParts(datagram: Buffer): RtcpPart[] {
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
class Phone {
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

  constructor(readonly user: string) {}

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
    this.sip.send(Buffer.from(text, 'latin1'), server.core.pjsip.port, '127.0.0.1');
  }

  headers(method: string, cseq: number): string {
    return [
      `Via: SIP/2.0/UDP 127.0.0.1:${this.sipPort};branch=z9hG4bK${Math.random().toString(36).slice(2)};rport`,
      'Max-Forwards: 70',
      `From: <sip:${this.user}@127.0.0.1:${this.sipPort}>;tag=${this.tag}`,
      `To: <sip:100@127.0.0.1:${server.core.pjsip.port}>${this.remoteTag ? `;tag=${this.remoteTag}` : ''}`,
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
    this.send(`INVITE sip:100@127.0.0.1:${server.core.pjsip.port} SIP/2.0\r\n${this.headers('INVITE', 1)}\r\nContent-Type: application/sdp\r\nContent-Length: ${sdp.length}\r\n\r\n${sdp}`);
    const final = await this.nextMessage(/^SIP\/2\.0 [2-6]\d\d/, 15_000);
    assert.match(final, /^SIP\/2\.0 200/);
    // The INVITE's provisional responses (100 Trying, sent at once) are the INVITE's: a later wait
    // for the response to an INFO or a re-INVITE must not take them.
    for (let i = this.messages.length - 1; i >= 0; i--) if (/^SIP\/2\.0 1\d\d/.test(this.messages[i]) && /^CSeq:\s*1 INVITE/im.test(this.messages[i])) this.messages.splice(i, 1);
    this.remoteTag = /^(?:to|t):.*;tag=([^;\s]+)/im.exec(final)?.[1] ?? '';
    this.answer = final;
    this.serverRtpPort = Number(/^m=audio (\d+)/m.exec(final)?.[1] ?? 0);
    this.serverRtcpPort = Number(/^a=rtcp:(\d+)/m.exec(final)?.[1] ?? 0);
    this.send(`ACK sip:100@127.0.0.1:${server.core.pjsip.port} SIP/2.0\r\n${this.headers('ACK', 1)}\r\nContent-Length: 0\r\n\r\n`);
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
function dtmfTones(digits: string, toneMs: number, gapMs: number, leadMs = 200): (frame: number) => Int16Array {
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

/** Answers the next call into media-app; returns the channel id. */
async function answerNext(phone: Phone, sdp: string): Promise<{ id: string; answer: string }> {
  const calling = phone.call(sdp);
  const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith(`PJSIP/${phone.user}-`));
  const id = start.channel.id as string;
  assert.equal((await post(`/channels/${id}/answer`)).status, 204);
  return { id, answer: await calling };
}

/** GET /metrics, checked as Prometheus text. */
async function scrape(): Promise<Map<string, number>> {
  const response = await fetch(`${server.url}/metrics`);
  assert.equal(response.status, 200);
  return parsePrometheus(await response.text());
}

/** Scrapes until `probe` holds (the figures a hang-up adds land as the call ends). */
async function scrapeUntil(what: string, probe: (samples: Map<string, number>) => boolean, timeoutMs = 5000): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const samples = await scrape();
    if (probe(samples)) return samples;
    if (Date.now() > deadline) throw new Error(`timed out waiting for /metrics: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function hangUp(phone: Phone, id: string): Promise<void> {
  assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
  await phone.nextMessage(/^BYE /);
  await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
}

// A test that fails mid-call (a timeout on a loaded machine) would leave its call up and fail the
// later tests that count calls: every call still up after a test is hung up here.
afterEach(async () => {
  const left = (await (await server.ari('/channels')).json()) as Array<{ id: string }>;
  for (const channel of left) await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && ((await (await server.ari('/channels')).json()) as unknown[]).length > 0) await new Promise((resolve) => setTimeout(resolve, 50));
});

describe('SIP call media', () => {
  test('RTCP: SR on the far end\'s a=rtcp port with our SSRC and a report block on its stream; its RR gives the round-trip time; rtp_statistics shows both sides; BYE at hang-up', { timeout: 60_000 }, async () => {
    const phone = await new Phone('plain').open();
    const rttBefore = await scrape();
    try {
      const { id, answer } = await answerNext(phone, phone.offer());
      assert.ok(phone.serverRtpPort % 2 === 0, `RTP port ${phone.serverRtpPort} is even`);
      assert.equal(phone.serverRtcpPort, phone.serverRtpPort + 1, 'a=rtcp names the port above RTP');
      assert.doesNotMatch(answer, /rtcp-mux/);
      // The server sends media (a tone), the phone sends 1.2 s of audio with 3 packets lost on the way.
      assert.equal((await post(`/channels/${id}/play?media=${encodeURIComponent('tone:440')}`)).status, 201);
      const silence = new Int16Array(160);
      for (let i = 0; i < 30; i++) {
        if (i === 10) phone.lose(3);
        phone.sendPcmu(silence);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // A sender report from the phone, so the server's next report carries LSR/DLSR.
      const sr = Buffer.alloc(28);
      sr[0] = 0x80;
      sr[1] = 200;
      sr.writeUInt16BE(6, 2);
      sr.writeUInt32BE(phone.ssrc, 4);
      sr.writeUInt32BE(0xe000_1234, 8);
      sr.writeUInt32BE(0x8000_0000, 12);
      sr.writeUInt32BE(12345, 16);
      sr.writeUInt32BE(phone.sent, 20);
      sr.writeUInt32BE(phone.sent * 160, 24);
      const srSentAt = Date.now();
      phone.rtcp.send(sr, phone.serverRtcpPort, '127.0.0.1');

      // The server's report after the phone's SR: on the phone's a=rtcp port, from the server's RTCP port.
      const report = await waitFor('an RTCP report after the phone\'s SR', () => phone.rtcpIn.find((r) => r.at > srSentAt + 5), 5000);
      assert.equal(report.port, phone.serverRtcpPort, 'sent from RTP port + 1');
      const parts = rtcpParts(report.data);
      const rtpSsrc = phone.rtpIn.find((p) => (p[1] & 0x7f) === 0)!.readUInt32BE(8);
      assert.equal(parts[0].type, 200, 'SR: the server sent media in the interval');
      assert.equal(parts[0].ssrc, rtpSsrc, 'the SSRC of the server\'s RTP');
      assert.equal(parts[0].count, 1, 'one report block');
      const sender = parts[0].bytes;
      const ntpSeconds = sender.readUInt32BE(8) - 2_208_988_800;
      assert.ok(Math.abs(ntpSeconds - Date.now() / 1000) < 5, `NTP time ${ntpSeconds}`);
      assert.ok(sender.readUInt32BE(20) > 0, 'packets sent');
      assert.equal(sender.readUInt32BE(24), sender.readUInt32BE(20) * 160, 'octets: 160 per PCMU packet');
      const block = sender.subarray(28);
      assert.equal(block.readUInt32BE(0), phone.ssrc, 'the block is about the phone\'s stream');
      assert.equal(block.readUIntBE(5, 3), 3, 'cumulative lost');
      assert.equal(block.readUInt32BE(8), 100 + 32, 'extended highest sequence number');
      assert.ok(block.readUInt32BE(12) < 8000, `jitter ${block.readUInt32BE(12)} units`);
      assert.equal(block.readUInt32BE(16), ((0x1234 << 16) | 0x8000) >>> 0, 'LSR: the middle of the phone\'s SR timestamp');
      const dlsr = block.readUInt32BE(20) / 65536;
      assert.ok(dlsr > 0 && dlsr < 2, `DLSR ${dlsr} s`);
      assert.equal(parts[1]?.type, 202, 'SDES follows');
      assert.equal(parts[1].bytes[8], 1, 'with a CNAME');

      // The phone answers with an RR about the server's stream 200 ms later, claiming DLSR 0: RTT ≈ 0.2 s.
      const lsr = ((sender.readUInt32BE(8) & 0xffff) << 16) | (sender.readUInt32BE(12) >>> 16);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const rr = Buffer.alloc(32);
      rr[0] = 0x81;
      rr[1] = 201;
      rr.writeUInt16BE(7, 2);
      rr.writeUInt32BE(phone.ssrc, 4);
      rr.writeUInt32BE(rtpSsrc, 8);
      rr.writeUInt32BE((10 << 24) | 2, 12); // fraction 10/256, 2 lost
      rr.writeUInt32BE(1000, 16);
      rr.writeUInt32BE(40, 20); // jitter 40 units = 5 ms
      rr.writeUInt32BE(lsr >>> 0, 24);
      rr.writeUInt32BE(0, 28);
      phone.rtcp.send(rr, phone.serverRtcpPort, '127.0.0.1');

      let statistics: Json = {};
      for (const deadline = Date.now() + 3000; !(statistics.rtt > 0) && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const response = await server.ari(`/channels/${id}/rtp_statistics`);
        assert.equal(response.status, 200);
        statistics = (await response.json()) as Json;
      }
      assert.ok(statistics.rtt >= 0.19 && statistics.rtt < 0.6, `rtt ${statistics.rtt}`);
      assert.equal(statistics.maxrtt, statistics.rtt);
      assert.equal(statistics.txploss, 2, 'the loss the phone reported of our stream');
      assert.equal(statistics.txjitter, 0.005, 'the jitter the phone reported');
      assert.equal(statistics.rxploss, 3);
      assert.equal(statistics.rxcount, 30);
      assert.equal(statistics.rxoctetcount, 30 * 160);
      assert.ok(statistics.txcount > 0);
      assert.equal(statistics.local_ssrc, rtpSsrc);
      assert.equal(statistics.remote_ssrc, phone.ssrc);
      assert.equal(statistics.channel_uniqueid, id);
      // /metrics sums the live calls' counts: the lost packets and what they are a share of.
      const live = await scrapeUntil('the live call\'s packets', (samples) => sumOf(samples, 'patchbay_sip_rtp_received_packets') === 30);
      assert.equal(sumOf(live, 'patchbay_sip_rtp_lost_packets'), 3);
      assert.ok(sumOf(live, 'patchbay_sip_rtp_sent_packets') >= statistics.txcount);

      // Hang-up: an RTCP BYE reaches the phone's RTCP port.
      const before = phone.rtcpIn.length;
      await hangUp(phone, id);
      const bye = await waitFor('RTCP BYE', () => phone.rtcpIn.slice(before).find((r) => rtcpParts(r.data).some((part) => part.type === 203)), 3000);
      assert.equal(rtcpParts(bye.data).find((part) => part.type === 203)!.ssrc, rtpSsrc);

      // The call's last round-trip time went into the RTT histogram when its media ended.
      const count = sumOf(rttBefore, 'patchbay_sip_rtcp_rtt_seconds_count');
      const after = await scrapeUntil('the RTT histogram counts the call', (samples) => sumOf(samples, 'patchbay_sip_rtcp_rtt_seconds_count') === count + 1);
      const rtt = sumOf(after, 'patchbay_sip_rtcp_rtt_seconds_sum') - sumOf(rttBefore, 'patchbay_sip_rtcp_rtt_seconds_sum');
      assert.ok(Math.abs(rtt - statistics.rtt) < 1e-9, `the histogram observed ${rtt} s, rtp_statistics said ${statistics.rtt} s`);
      const bucket = (le: string) => (after.get(`patchbay_sip_rtcp_rtt_seconds_bucket{le="${le}"}`) ?? 0) - (rttBefore.get(`patchbay_sip_rtcp_rtt_seconds_bucket{le="${le}"}`) ?? 0);
      assert.equal(bucket('0.15'), 0, 'not in the buckets below it');
      assert.equal(bucket('1'), 1, 'in the buckets from its own up');
    } finally {
      phone.close();
    }
  });

  test('RTCP without media sent: receiver reports (RR) every interval', { timeout: 30_000 }, async () => {
    const phone = await new Phone('plain').open();
    try {
      const { id } = await answerNext(phone, phone.offer());
      phone.startAudio(() => new Int16Array(160));
      await waitFor('two reports', () => (phone.rtcpIn.length >= 2 ? true : undefined), 4000);
      phone.stopAudio();
      const first = rtcpParts(phone.rtcpIn[0].data);
      assert.equal(first[0].type, 201, 'RR: the server sent no media');
      assert.ok(first[0].count <= 1);
      const gap = phone.rtcpIn[1].at - phone.rtcpIn[0].at;
      assert.ok(gap >= 200 && gap <= 1000, `reports ${gap} ms apart (interval 500 ms, randomised 0.5–1.5)`);
      await hangUp(phone, id);
    } finally {
      phone.close();
    }
  });

  test('rtcp_mux=yes and an offer with a=rtcp-mux: answered with a=rtcp-mux, RTCP on the RTP ports both ways', { timeout: 30_000 }, async () => {
    const phone = await new Phone('muxer').open();
    try {
      const { id, answer } = await answerNext(phone, phone.offer({ mux: true }));
      assert.match(answer, /^a=rtcp-mux\r$/m);
      assert.equal(phone.serverRtcpPort, phone.serverRtpPort);
      phone.startAudio(() => new Int16Array(160));
      const report = await waitFor('a muxed RTCP report', () => phone.muxedIn[0], 4000);
      phone.stopAudio();
      assert.equal(rtcpParts(report.data)[0].type, 201);
      assert.equal(phone.rtcpIn.length, 0, 'nothing on the separate RTCP port');
      // The phone's RR on the RTP port is taken as RTCP, not as audio.
      const rr = Buffer.alloc(8);
      rr[0] = 0x80;
      rr[1] = 201;
      rr.writeUInt16BE(1, 2);
      rr.writeUInt32BE(phone.ssrc, 4);
      phone.rtp.send(rr, phone.serverRtpPort, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const statistics = (await (await server.ari(`/channels/${id}/rtp_statistics`)).json()) as Json;
      assert.equal(statistics.rxcount, phone.sent, 'the RR was not counted as RTP');
      await hangUp(phone, id);
    } finally {
      phone.close();
    }
  });

  test('dtmf_mode=inband: no telephone-event in the answer; tones in the phone\'s audio raise ChannelDtmfReceived in order; sent digits arrive as tones', { timeout: 60_000 }, async () => {
    const phone = await new Phone('tones').open();
    try {
      const { id, answer } = await answerNext(phone, phone.offer());
      assert.doesNotMatch(answer, /telephone-event/);
      phone.startAudio(dtmfTones('15#', 120, 80));
      const digits: Json[] = [];
      while (digits.length < 3) digits.push(await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id, 10_000));
      phone.stopAudio();
      assert.deepEqual(digits.map((d) => d.digit), ['1', '5', '#']);
      // 120 ms tones; the phone's 20 ms timer runs late on a loaded machine, so the bound is loose.
      for (const digit of digits) assert.ok(digit.duration_ms >= 60 && digit.duration_ms <= 260, `duration ${digit.duration_ms} ms`);

      phone.rtpIn.length = 0;
      assert.equal((await post(`/channels/${id}/dtmf?dtmf=73&duration=120&between=100`)).status, 204);
      await new Promise((resolve) => setTimeout(resolve, 900));
      const heard: string[] = [];
      const detector = new DtmfDetector({ rate: 8000, onDigitEnd: (digit) => heard.push(digit) });
      detector.process(phone.receivedAudio());
      detector.process(new Int16Array(800));
      assert.deepEqual(heard, ['7', '3']);
      assert.equal(phone.rtpIn.filter((p) => (p[1] & 0x7f) !== 0).length, 0, 'no telephone-events');
      await hangUp(phone, id);
    } finally {
      phone.close();
    }
  });

  test('strict RTP: a stranger sending RTP of the right payload type to the call\'s port gets none of its audio and is not heard (RTP bleed)', { timeout: 60_000 }, async () => {
    const phone = await new Phone('tones').open();
    const attacker = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => attacker.bind(0, '127.0.0.1', resolve));
    const stolen: Buffer[] = [];
    attacker.on('message', (packet) => stolen.push(packet));
    try {
      const { id } = await answerNext(phone, phone.offer());
      assert.equal((await post(`/channels/${id}/play?media=${encodeURIComponent('tone:440')}`)).status, 201);
      const silence = new Int16Array(160);
      phone.startAudio(() => silence);
      await waitFor('the server\'s audio at the phone', () => (phone.rtpIn.length >= 10 ? true : undefined));
      // The stranger: PCMU with the phone's payload type, sequence numbers ahead of the phone's,
      // its own SSRC, 60 packets in sequence, carrying the tone of 9.
      const nine = dtmfTones('9', 400, 100, 100);
      const packet = Buffer.alloc(12 + 160);
      for (let i = 0; i < 60; i++) {
        packet[0] = 0x80;
        packet[1] = 0;
        packet.writeUInt16BE((phone.sequence + 500 + i) & 0xffff, 2);
        packet.writeUInt32BE((1_000_000 + i * 160) >>> 0, 4);
        packet.writeUInt32BE(0x0bad_f00d, 8);
        const samples = nine(i % 25);
        for (let k = 0; k < 160; k++) packet[12 + k] = linearToUlaw(samples[k]);
        attacker.send(packet, phone.serverRtpPort, '127.0.0.1');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const receivedBefore = phone.rtpIn.length;
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(stolen.length, 0, 'the stranger received none of the call\'s audio');
      assert.ok(phone.rtpIn.length - receivedBefore >= 10, `the phone kept receiving audio (${phone.rtpIn.length - receivedBefore} packets in 400 ms)`);
      // The phone's own tones are still heard, and they are the first digit: the 9 never reached the channel.
      phone.stopAudio();
      phone.startAudio(dtmfTones('5', 160, 100));
      const digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id, 10_000);
      phone.stopAudio();
      assert.equal(digit.digit, '5');
      assert.equal(stolen.length, 0);
      await hangUp(phone, id);
    } finally {
      attacker.close();
      phone.close();
    }
  });

  test('strict RTP learning: a phone whose RTP comes from another port than its SDP says (NAT) gets the call\'s audio there after a few packets', { timeout: 60_000 }, async () => {
    const phone = await new Phone('natted').open();
    const mapped = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => mapped.bind(0, '127.0.0.1', resolve));
    const atMapped: Buffer[] = [];
    mapped.on('message', (packet) => atMapped.push(packet));
    try {
      phone.rtpFrom = mapped;
      const { id } = await answerNext(phone, phone.offer());
      assert.equal((await post(`/channels/${id}/play?media=${encodeURIComponent('tone:440')}`)).status, 201);
      const silence = new Int16Array(160);
      phone.startAudio(() => silence);
      await waitFor('the server\'s audio at the mapped port', () => (atMapped.length >= 10 ? true : undefined));
      const atSdpPort = phone.rtpIn.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(phone.rtpIn.length, atSdpPort, 'nothing more to the SDP\'s port once the source was learned');
      assert.ok(atMapped.length >= 20, `${atMapped.length} packets at the mapped port`);
      phone.stopAudio();
      await hangUp(phone, id);
    } finally {
      mapped.close();
      phone.close();
    }
  });

  test('dtmf_mode=auto: telephone-event offered and answered → RFC 4733; a phone without it → tones', { timeout: 60_000 }, async () => {
    const withEvents = await new Phone('auto').open();
    try {
      const { id, answer } = await answerNext(withEvents, withEvents.offer());
      assert.match(answer, /telephone-event/);
      withEvents.rtpIn.length = 0;
      assert.equal((await post(`/channels/${id}/dtmf?dtmf=4`)).status, 204);
      await waitFor('telephone-events', () => (withEvents.rtpIn.some((p) => (p[1] & 0x7f) === 101) ? true : undefined));
      await hangUp(withEvents, id);
    } finally {
      withEvents.close();
    }
    const without = await new Phone('auto').open();
    try {
      const { id, answer } = await answerNext(without, without.offer({ telephoneEvent: false }));
      assert.doesNotMatch(answer, /telephone-event/);
      without.startAudio(dtmfTones('9', 150, 100));
      const digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id, 10_000);
      without.stopAudio();
      assert.equal(digit.digit, '9');
      await hangUp(without, id);
    } finally {
      without.close();
    }
  });

  test('dtmf_mode=info: INFO dtmf-relay and dtmf from the phone are answered 200 and raise digits; sent digits leave as INFO', { timeout: 30_000 }, async () => {
    const phone = await new Phone('infos').open();
    try {
      const { id, answer } = await answerNext(phone, phone.offer());
      assert.doesNotMatch(answer, /telephone-event/);
      const info = (cseq: number, type: string, body: string): void =>
        phone.send(`INFO sip:100@127.0.0.1:${server.core.pjsip.port} SIP/2.0\r\n${phone.headers('INFO', cseq)}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      info(2, 'application/dtmf-relay', 'Signal=9\r\nDuration=250\r\n');
      assert.match(await phone.nextMessage(/^SIP\/2\.0 \d/), /^SIP\/2\.0 200/);
      let digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id);
      assert.equal(digit.digit, '9');
      assert.equal(digit.duration_ms, 250);
      info(3, 'application/dtmf', '*');
      digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id);
      assert.equal(digit.digit, '*');
      assert.equal(digit.duration_ms, 100);
      info(4, 'application/dtmf-relay', 'Signal=11\r\n');
      digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id);
      assert.equal(digit.digit, '#', 'Signal=11 is #');
      // Other content is answered 200 and raises nothing.
      info(5, 'text/plain', 'Signal=5');
      await phone.nextMessage(/^SIP\/2\.0 200/);

      assert.equal((await post(`/channels/${id}/dtmf?dtmf=4&duration=180`)).status, 204);
      const request = await phone.nextMessage(/^INFO /);
      assert.match(request, /^Content-Type:\s*application\/dtmf-relay\r$/im);
      assert.match(request, /^Signal=4\r\nDuration=180\r\n$/m);
      await hangUp(phone, id);
    } finally {
      phone.close();
    }
  });
});

/** A mono 8 kHz u-law WAV (format 7) of `samples`. */
function ulawWav(samples: Int16Array): Buffer {
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

describe('SIP media in GET /metrics', () => {
  test('a stranger\'s RTP and RTCP to a call\'s ports: stranger counters rise and stay after hang-up; one warning line names the channel and the stranger', { timeout: 60_000 }, async () => {
    const phone = await new Phone('plain').open();
    const attacker = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => attacker.bind(0, '127.0.0.1', resolve));
    const before = await scrape();
    try {
      const { id } = await answerNext(phone, phone.offer());
      const channel = (await (await server.ari(`/channels/${id}`)).json()) as Json;
      const silence = new Int16Array(160);
      phone.startAudio(() => silence);
      // Learned after `probation` packets in sequence from the phone; a little more to be sure.
      await waitFor('the phone\'s audio flowing', () => (phone.sent >= 15 ? true : undefined));
      // The phone's own report first (it latches the RTCP source), then the stranger's.
      const rr = Buffer.alloc(8);
      rr[0] = 0x80;
      rr[1] = 201;
      rr.writeUInt16BE(1, 2);
      rr.writeUInt32BE(phone.ssrc, 4);
      phone.rtcp.send(rr, phone.serverRtcpPort, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const packet = Buffer.alloc(12 + 160, 0xff);
      for (let i = 0; i < 40; i++) {
        packet[0] = 0x80;
        packet[1] = 0;
        packet.writeUInt16BE((phone.sequence + 300 + i) & 0xffff, 2);
        packet.writeUInt32BE((500_000 + i * 160) >>> 0, 4);
        packet.writeUInt32BE(0x0bad_f00d, 8);
        attacker.send(packet, phone.serverRtpPort, '127.0.0.1');
        if (i < 3) attacker.send(rr, phone.serverRtcpPort, '127.0.0.1');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const strangers = (samples: Map<string, number>) => sumOf(samples, 'patchbay_sip_rtp_stranger_packets_total') - sumOf(before, 'patchbay_sip_rtp_stranger_packets_total');
      const reports = (samples: Map<string, number>) => sumOf(samples, 'patchbay_sip_rtcp_stranger_reports_total') - sumOf(before, 'patchbay_sip_rtcp_stranger_reports_total');
      const during = await scrapeUntil('40 stranger packets counted', (samples) => strangers(samples) >= 40 && reports(samples) >= 3);
      assert.equal(strangers(during), 40, 'every stranger packet, none of the phone\'s');
      assert.equal(reports(during), 3);
      assert.equal(sumOf(during, 'patchbay_sip_calls'), 1);
      phone.stopAudio();
      await hangUp(phone, id);
      const after = await scrapeUntil('the call gone', (samples) => sumOf(samples, 'patchbay_sip_calls') === 0);
      assert.equal(strangers(after), 40, 'the counter outlives the call');
      assert.equal(reports(after), 3);
      // One warning line for the call, naming its channel and the stranger's address.
      const port = attacker.address().port;
      const warnings = server.logLines.filter((line) => line.includes('strict RTP') && line.includes(`127.0.0.1:${port}`));
      assert.equal(warnings.length, 1, `one line, not one per packet: ${warnings.join('')}`);
      const record = JSON.parse(warnings[0]) as Json;
      assert.equal(record.channel, channel.name);
      assert.equal(record.stranger, `127.0.0.1:${port}`);
      assert.ok(record.level >= 40, 'a warning');
    } finally {
      attacker.close();
      phone.close();
    }
  });

  test('jittered audio with a lost and a very late packet: concealed frames, late packets and target delay in /metrics', { timeout: 60_000 }, async () => {
    const phone = await new Phone('plain').open();
    const before = await scrape();
    try {
      const { id } = await answerNext(phone, phone.offer());
      const tone = new Int16Array(160);
      for (let i = 0; i < 160; i++) tone[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
      // 2 s of audio in bursts: five frames every 100 ms (80 ms of jitter), one packet lost now and then.
      let held: Buffer | undefined;
      for (let burst = 0; burst < 20; burst++) {
        for (let k = 0; k < 5; k++) {
          if (burst === 6 && k === 2) {
            // Keep this packet back: it is sent 600 ms later, long after its audio was due.
            const sequence = phone.sequence;
            held = Buffer.alloc(12 + 160);
            held[0] = 0x80;
            held[1] = 0;
            held.writeUInt16BE(sequence & 0xffff, 2);
            held.writeUInt32BE((8000 + (sequence - 100) * 160) >>> 0, 4);
            held.writeUInt32BE(phone.ssrc, 8);
            for (let i = 0; i < 160; i++) held[12 + i] = linearToUlaw(tone[i]);
            phone.lose(1);
            continue;
          }
          if (burst % 5 === 3 && k === 0) {
            phone.lose(1);
            continue;
          }
          phone.sendPcmu(tone);
        }
        if (burst === 12 && held) phone.rtp.send(held, phone.serverRtpPort, '127.0.0.1');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const delta = (samples: Map<string, number>, name: string) => sumOf(samples, name) - sumOf(before, name);
      const during = await scrape();
      const concealed = delta(during, 'patchbay_sip_jitterbuffer_concealed_frames_total');
      const late = delta(during, 'patchbay_sip_jitterbuffer_late_packets_total');
      assert.ok(concealed >= 4, `frames concealed for the lost packets: ${concealed}`);
      assert.ok(late >= 1, `the held packet dropped as late: ${late}`);
      const mean = sumOf(during, 'patchbay_sip_jitterbuffer_mean_target_delay_seconds');
      const max = sumOf(during, 'patchbay_sip_jitterbuffer_max_target_delay_seconds');
      assert.ok(mean >= 0.08 && mean <= 0.2, `the target delay grew with the jitter, within the maximum: ${mean} s`);
      assert.equal(max, mean, 'one call: its delay is the mean and the largest');
      await hangUp(phone, id);
      const after = await scrapeUntil('the call gone', (samples) => sumOf(samples, 'patchbay_sip_calls') === 0);
      assert.ok(delta(after, 'patchbay_sip_jitterbuffer_concealed_frames_total') >= concealed, 'the counter outlives the call');
      assert.ok(delta(after, 'patchbay_sip_jitterbuffer_late_packets_total') >= late);
      assert.equal(sumOf(after, 'patchbay_sip_jitterbuffer_mean_target_delay_seconds'), 0, 'no live call, no delay');
    } finally {
      phone.close();
    }
  });
});

describe('inband DTMF from SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('SIPp streams PCMU with the tones of 2, 8, * to a dtmf_mode=inband endpoint: ChannelDtmfReceived 2, 8, * in order', { timeout: 60_000 }, async () => {
    const dir = join(work, 'sipp-dtmf');
    mkdirSync(dir);
    const tones = dtmfTones('28*', 100, 100, 300);
    const frames = Array.from({ length: 60 }, (_, frame) => tones(frame));
    const signal = new Int16Array(frames.length * 160);
    frames.forEach((frame, index) => signal.set(frame, index * 160));
    writeFileSync(join(dir, 'audio.wav'), ulawWav(signal));
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn('sipp', ['-sf', join(SCENARIOS, 'call-wait-bye.xml'), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', '20s', '-timeout_error', `127.0.0.1:${server.core.pjsip.port}`, '-s', '100', '-set', 'caller', 'tones'], { cwd: dir });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith('PJSIP/tones-'));
    const id = start.channel.id as string;
    assert.equal((await post(`/channels/${id}/answer`)).status, 204);
    const digits: Json[] = [];
    while (digits.length < 3) digits.push(await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id, 8000));
    assert.deepEqual(
      digits.map((d) => d.digit),
      ['2', '8', '*'],
    );
    for (const digit of digits) assert.ok(digit.duration_ms >= 60 && digit.duration_ms <= 140, `duration ${digit.duration_ms} ms`);
    assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
    await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
    assert.equal(await exited, 0, output.slice(-2000));
  });
});

describe('DTMF in INFO bodies', () => {
  test('dtmf-relay and dtmf read; other types, bad signals and huge bodies give nothing; durations bounded', () => {
    const read = (type: string | undefined, body: string) => dtmfFromInfo(type, Buffer.from(body, 'latin1'));
    assert.deepEqual(read('application/dtmf-relay', 'Signal=5\r\nDuration=160\r\n'), { digit: '5', durationMs: 160 });
    assert.deepEqual(read('Application/DTMF-Relay; charset=x', 'signal = a\nduration=99999'), { digit: 'A', durationMs: 10_000 });
    assert.deepEqual(read('application/dtmf-relay', 'Signal=10'), { digit: '*', durationMs: 100 });
    assert.deepEqual(read('application/dtmf', ' # '), { digit: '#', durationMs: 100 });
    assert.equal(read('application/dtmf-relay', 'Signal=16'), undefined);
    assert.equal(read('application/dtmf-relay', 'Signal=E'), undefined);
    assert.equal(read('application/dtmf', '55'), undefined);
    assert.equal(read('text/plain', 'Signal=5'), undefined);
    assert.equal(read(undefined, 'Signal=5'), undefined);
    assert.equal(read('application/dtmf-relay', `Signal=5\r\n${'x'.repeat(2000)}`), undefined);
    assert.equal(read('application/dtmf-relay', ''), undefined);
  });
});

describe('RTP port pairs', () => {
  test('RTP on an even port, RTCP on the odd one above; a pair whose RTCP port is taken is skipped', async () => {
    const start = 40_000 + 2 * Math.floor(Math.random() * 5000);
    const squatter = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => squatter.bind(start + 1, '127.0.0.1', resolve));
    const range = new RtpPortRange(start, start + 5);
    const pair = await range.bindPair('127.0.0.1');
    try {
      assert.equal(pair.rtp.address().port, start + 2, 'the first pair (odd port taken) skipped');
      assert.equal(pair.rtcp.address().port, start + 3);
      // The next pair would end beyond the range (start + 4, start + 5 is in range; start + 6 is not).
      const second = await range.bindPair('127.0.0.1');
      assert.equal(second.rtp.address().port, start + 4);
      second.rtp.close();
      second.rtcp.close();
    } finally {
      pair.rtp.close();
      pair.rtcp.close();
      squatter.close();
    }
  });
});
