// The media experience score (MES) as Asterisk 22's res_rtp_asterisk figures it: the formula's
// value for known round trip, jitter and loss (the expected figures worked out by hand from
// calc_media_experience_score's steps), and an RTCP session scoring the stream it receives at each
// report it sends (from the loss of each interval) and our stream from each report block about it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mediaExperienceScore } from '../../../src/media/rtp/media-experience.ts';
import { RtpPayloadCoder } from '../../../src/media/rtp/payload.ts';
import { RtpReceiverStats } from '../../../src/media/rtp/receiver-stats.ts';
import { writeReceiverReport } from '../../../src/media/rtp/rtcp-packet.ts';
import { RtcpSession } from '../../../src/media/rtp/rtcp-session.ts';
import { RtpSender } from '../../../src/media/rtp/sender.ts';
import { rtpStatistics } from '../../../src/media/rtp/statistics.ts';
import { rtpQualityStrings } from '../../../src/core/rtp-quality-variables.ts';

const close = (actual: number, expected: number, what: string): void => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual}, expected ${expected}`);

describe('media experience score', () => {
  test('the formula for known round trip, jitter and loss', () => {
    // A perfect stream: latency 10 ms, R = 93.2 - 10/40 = 92.95, MOS 1 + 3.25325 + 0.1512..., 88.09.
    close(mediaExperienceScore(0, 0, 0, 0), 88.08788736750002, 'no rtt, jitter or loss');
    // 200 ms round trip (over 160 ms: R = 93.2 - (210 - 120)/10 = 84.2), 2 packets lost on average: R 80.2.
    close(mediaExperienceScore(0.2, 0.005, 0, 2), 80.63075088000001, '200 ms, 2 lost');
    // 40 ms, 20 ms jitter with 10 ms deviation (a negligible term, in seconds squared), 3 lost.
    close(mediaExperienceScore(0.04, 0.02, 0.01, 3), 84.55219969133, '40 ms, 3 lost');
    close(mediaExperienceScore(0.5, 0, 0, 0), 55.92432368000001, 'half a second round trip');
    // Jitter counts only when large: 30 s with a 15 s deviation adds 300 ms.
    close(mediaExperienceScore(0.1, 30, 15, 0), 66.29143568, 'huge jitter');
    // R below 0: the lowest opinion, 1 of 5.
    assert.equal(mediaExperienceScore(0, 0, 0, 50), 20);
  });

  test('an RTCP session scores the stream it receives at each report, and ours from the far end\'s report', () => {
    const sender = new RtpSender(new RtpPayloadCoder('ulaw'), { ssrc: 0x5555 });
    const receiver = new RtpReceiverStats(8000);
    // 50 packets, every 20 ms on time, 4 lost in the first interval.
    for (let seq = 0; seq < 50; seq++) if (seq < 10 || seq > 13) receiver.update(0x7777, seq, seq * 160, 160, seq * 20);
    const session = new RtcpSession(5000);
    sender.audio(new Int16Array(160), 1);
    assert.equal(session.localMes, 0, 'nothing before the first report');
    session.build(sender, receiver, 2500, 1_700_000_000_000);
    // Loss of the interval 4, mean 4; no round trip yet; no jitter (packets on time).
    const first = mediaExperienceScore(0, 0, 0, 4);
    close(session.localMes, first, 'the first report');
    // A second interval without loss: the mean loss per interval halves.
    for (let seq = 50; seq < 100; seq++) receiver.update(0x7777, seq, seq * 160, 160, seq * 20);
    session.build(sender, receiver, 7500, 1_700_000_005_000);
    const second = mediaExperienceScore(0, 0, 0, 2);
    close(session.localMes, second, 'the second report');
    assert.equal(session.localLostSpread.max, 4, 'loss counted per interval, as Asterisk\'s rxlost');
    assert.equal(session.localLostSpread.min, 0);

    // The far end's report about our stream: 6 lost, jitter 40 units (5 ms), no LSR (no round trip).
    const rr = new Uint8Array(64);
    const length = writeReceiverReport(rr, 0, 0x7777, { ssrc: 0x5555, fractionLost: 0, cumulativeLost: 6, extendedHighestSequence: 100, jitter: 40, lastSr: 0, delaySinceLastSr: 0 });
    assert.equal(session.receive(rr, length, 0x5555, 8000, 1_700_000_005_500), true);
    const remote = mediaExperienceScore(0, 0.005, 0, 6);
    close(session.remoteMes, remote, 'the far end\'s view');

    const statistics = rtpStatistics(sender, receiver, session);
    close(statistics.txmes, second, 'txmes: ours, as Asterisk names it');
    close(statistics.rxmes, remote, 'rxmes: the far end\'s');
    close(statistics.local_maxmes, second, 'local max');
    close(statistics.local_minmes, first, 'local min');
    close(statistics.local_normdevmes, (first + second) / 2, 'local mean');
    assert.ok(statistics.local_stdevmes > 0);
    close(statistics.remote_maxmes, remote, 'remote max');
    close(statistics.remote_minmes, remote, 'remote min');
    assert.equal(statistics.remote_stdevmes, 0);

    // The hang-up variables carry them where Asterisk's quality strings put them.
    const strings = new Map(rtpQualityStrings(statistics));
    assert.match(strings.get('RTPAUDIOQOS')!, new RegExp(`;rxmes=${remote.toFixed(6)};txmes=${second.toFixed(6)}$`));
    const pad = (value: number): string => value.toFixed(6).padStart(10, '0');
    assert.equal(
      strings.get('RTPAUDIOQOSMES'),
      `   minrxmes=${pad(first)};   maxrxmes=${pad(second)};   avgrxmes=${pad((first + second) / 2)};   stdevrxmes=${pad(statistics.local_stdevmes)};` +
        `   mintxmes=${pad(remote)};   maxtxmes=${pad(remote)};   avgtxmes=${pad(remote)};   stdevtxmes=000.000000;`,
    );
  });
});
