// SIP call media in GET /metrics, against the phone of media-phone.ts: a stranger's RTP and RTCP to a
// call's ports counted (and named once in the log), jitter, loss and lateness in the jitter buffer's
// figures; and SIPp streaming DTMF tones as PCMU audio to an inband endpoint.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { linearToUlaw } from '../../../src/media/g711.ts';
import { sumOf } from '../../helpers/prometheus.ts';
import { dtmfTones, ulawWav, waitFor } from './media-phone.ts';
import { useMediaServer, type Json } from './media-server.ts';

const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;
const SCENARIOS = fileURLToPath(new URL('../../sip/scenarios/', import.meta.url));

const media = useMediaServer();
const { nextEvent, post, answerNext, scrape, scrapeUntil, hangUp } = media;

describe('SIP media in GET /metrics', () => {
  test('a stranger\'s RTP and RTCP to a call\'s ports: stranger counters rise and stay after hang-up; one warning line names the channel and the stranger', { timeout: 60_000 }, async () => {
    const phone = await media.phone('plain').open();
    const attacker = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => attacker.bind(0, '127.0.0.1', resolve));
    const before = await scrape();
    try {
      const { id } = await answerNext(phone, phone.offer());
      const channel = (await (await media.server.ari(`/channels/${id}`)).json()) as Json;
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
      const warnings = media.server.logLines.filter((line) => line.includes('strict RTP') && line.includes(`127.0.0.1:${port}`));
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
    const phone = await media.phone('plain').open();
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
    const dir = join(media.work, 'sipp-dtmf');
    mkdirSync(dir);
    const tones = dtmfTones('28*', 100, 100, 300);
    const frames = Array.from({ length: 60 }, (_, frame) => tones(frame));
    const signal = new Int16Array(frames.length * 160);
    frames.forEach((frame, index) => signal.set(frame, index * 160));
    writeFileSync(join(dir, 'audio.wav'), ulawWav(signal));
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn('sipp', ['-sf', join(SCENARIOS, 'call-wait-bye.xml'), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', '20s', '-timeout_error', `127.0.0.1:${media.server.core.pjsip.port}`, '-s', '100', '-set', 'caller', 'tones'], { cwd: dir });
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
