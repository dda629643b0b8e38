// SIP call media against a phone of our own (raw UDP: hand-written SIP, its own RTP and RTCP
// sockets), for what SIPp cannot do: RTCP reports on RTP port + 1 (or muxed on the RTP port with
// rtcp_mux), their fields checked byte by byte, a round-trip time measured from the phone's
// reply and shown with the phone's view of our stream by GET /channels/{id}/rtp_statistics, the
// RTCP BYE at hang-up; DTMF as tones in PCMU audio both ways (dtmf_mode inband and auto without
// telephone-event) and as SIP INFO both ways (dtmf_mode info); strict RTP against a stranger and
// its learning of a NAT-mapped source.
// The phone and the server are media-phone.ts's and media-server.ts's; GET /metrics's figures and
// SIPp's tones are media-metrics.test.ts's.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, test } from 'node:test';
import { DtmfDetector } from '../../../src/media/dtmf.ts';
import { linearToUlaw } from '../../../src/media/g711.ts';
import { mediaExperienceScore } from '../../../src/media/rtp/media-experience.ts';
import { sumOf } from '../../helpers/prometheus.ts';
import { dtmfTones, rtcpParts, waitFor } from './media-phone.ts';
import { useMediaServer, type Json } from './media-server.ts';

const media = useMediaServer();
const { nextEvent, post, answerNext, scrape, scrapeUntil, hangUp } = media;

describe('SIP call media', () => {
  test('RTCP: SR on the far end\'s a=rtcp port with our SSRC and a report block on its stream; its RR gives the round-trip time; rtp_statistics shows both sides; BYE at hang-up', { timeout: 60_000 }, async () => {
    const phone = await media.phone('plain').open();
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
      const report = await waitFor('an RTCP report after the phone\'s SR', () => phone.rtcpIn.find((r) => r.at > srSentAt + 5), 15_000);
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
        const response = await media.server.ari(`/channels/${id}/rtp_statistics`);
        assert.equal(response.status, 200);
        statistics = (await response.json()) as Json;
      }
      // At most the time from the SR's sending (its NTP time) to now, which a loaded machine
      // stretches well past the 0.2 s slept (0.6 s was fixed before).
      const serverSrSentAt = ntpSeconds + sender.readUInt32BE(12) / 2 ** 32;
      const longest = Date.now() / 1000 - serverSrSentAt + 0.05;
      assert.ok(statistics.rtt >= 0.19 && statistics.rtt < Math.max(0.6, longest), `rtt ${statistics.rtt}; at most ${longest.toFixed(3)} s since the SR`);
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
      // Media experience scores, as Asterisk figures them: the phone's RR (one, so its jitter's
      // deviation is 0) scores our stream from its round trip, 5 ms jitter and 2 lost; ARI shows the
      // score as an integer, its spread as reals. Ours of the phone's stream came with each report sent.
      const remoteMes = mediaExperienceScore(statistics.normdevrtt, 0.005, 0, 2);
      assert.equal(statistics.rxmes, Math.trunc(remoteMes), `rxmes ${statistics.rxmes}, the formula ${remoteMes}`);
      assert.ok(Math.abs(statistics.remote_maxmes - remoteMes) < 1e-9 && statistics.remote_minmes === statistics.remote_maxmes, `remote_*mes ${statistics.remote_minmes}..${statistics.remote_maxmes}`);
      assert.equal(statistics.remote_stdevmes, 0);
      assert.ok(statistics.rxmes > 50 && statistics.rxmes < 90, `a 0.2 s round trip with loss scores below a clean call: ${statistics.rxmes}`);
      assert.ok(Number.isInteger(statistics.txmes) && statistics.txmes > 50 && statistics.txmes <= 89, `txmes ${statistics.txmes}`);
      assert.ok(statistics.local_minmes > 50 && statistics.local_maxmes <= 89 && statistics.local_minmes <= statistics.local_maxmes, `local_*mes ${statistics.local_minmes}..${statistics.local_maxmes}`);
      // /metrics sums the live calls' counts: the lost packets and what they are a share of.
      const live = await scrapeUntil('the live call\'s packets', (samples) => sumOf(samples, 'patchbay_sip_rtp_received_packets') === 30);
      assert.equal(sumOf(live, 'patchbay_sip_rtp_lost_packets'), 3);
      assert.ok(sumOf(live, 'patchbay_sip_rtp_sent_packets') >= statistics.txcount);

      // Hang-up: an RTCP BYE reaches the phone's RTCP port; the quality variables carry the scores.
      const before = phone.rtcpIn.length;
      const varsets = new Map<string, string>();
      assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
      await phone.nextMessage(/^BYE /);
      await nextEvent((e) => {
        if (e.type === 'ChannelVarset' && e.channel?.id === id) varsets.set(e.variable, e.value);
        return e.type === 'ChannelDestroyed' && e.channel?.id === id;
      });
      const pad = (value: number): string => value.toFixed(6).padStart(10, '0');
      assert.match(varsets.get('RTPAUDIOQOS') ?? '', new RegExp(`;rxmes=${remoteMes.toFixed(6).replace('.', '\\.')};txmes=\\d+\\.\\d{6}$`));
      const mesText = varsets.get('RTPAUDIOQOSMES') ?? '';
      assert.match(mesText, new RegExp(`   mintxmes=${pad(remoteMes).replace('.', '\\.')};   maxtxmes=${pad(remoteMes).replace('.', '\\.')};`));
      const minrxmes = Number(/minrxmes=([\d.]+);/.exec(mesText)?.[1]);
      assert.ok(minrxmes > 50 && minrxmes <= 89, `RTPAUDIOQOSMES ${mesText}`);
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
    const phone = await media.phone('plain').open();
    try {
      const { id } = await answerNext(phone, phone.offer());
      phone.startAudio(() => new Int16Array(160));
      await waitFor('two reports', () => (phone.rtcpIn.length >= 2 ? true : undefined), 15_000);
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
    const phone = await media.phone('muxer').open();
    try {
      const { id, answer } = await answerNext(phone, phone.offer({ mux: true }));
      assert.match(answer, /^a=rtcp-mux\r$/m);
      assert.equal(phone.serverRtcpPort, phone.serverRtpPort);
      phone.startAudio(() => new Int16Array(160));
      const report = await waitFor('a muxed RTCP report', () => phone.muxedIn[0], 15_000);
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
      // Its audio all counted first (a loaded machine reads the last packets late), then the check.
      let statistics: Json = {};
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        statistics = (await (await media.server.ari(`/channels/${id}/rtp_statistics`)).json()) as Json;
        if (statistics.rxcount >= phone.sent) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      statistics = (await (await media.server.ari(`/channels/${id}/rtp_statistics`)).json()) as Json;
      assert.equal(statistics.rxcount, phone.sent, 'the RR was not counted as RTP');
      await hangUp(phone, id);
    } finally {
      phone.close();
    }
  });

  test('dtmf_mode=inband: no telephone-event in the answer; tones in the phone\'s audio raise ChannelDtmfReceived in order; sent digits arrive as tones', { timeout: 60_000 }, async () => {
    const phone = await media.phone('tones').open();
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
    const phone = await media.phone('tones').open();
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
      // Ten more packets: 200 ms on an idle machine, counted rather than timed on a loaded one.
      await waitFor('ten more packets at the phone', () => (phone.rtpIn.length - receivedBefore >= 10 ? true : undefined), 10_000).catch(() => undefined);
      assert.equal(stolen.length, 0, 'the stranger received none of the call\'s audio');
      assert.ok(phone.rtpIn.length - receivedBefore >= 10, `the phone kept receiving audio (${phone.rtpIn.length - receivedBefore} packets)`);
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
    const phone = await media.phone('natted').open();
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
      await waitFor('20 packets at the mapped port', () => (atMapped.length >= 20 ? true : undefined), 10_000).catch(() => undefined);
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
    const withEvents = await media.phone('auto').open();
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
    const without = await media.phone('auto').open();
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
    const phone = await media.phone('infos').open();
    try {
      const { id, answer } = await answerNext(phone, phone.offer());
      assert.doesNotMatch(answer, /telephone-event/);
      const info = (cseq: number, type: string, body: string): void =>
        phone.send(`INFO sip:100@127.0.0.1:${media.server.core.pjsip.port} SIP/2.0\r\n${phone.headers('INFO', cseq)}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
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
