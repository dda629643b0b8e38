// The RTPAUDIOQOS* texts and who gets them, on the kernel alone (the SIP frames are
// test/interop/sipp-rtp-quality.test.ts): Asterisk 22's formats (%u, %f, %010.6f and the label
// indents its format strings have), each variable set only while it has no value, and the *BRIDGED
// copies only for the peer of a two-member bridge.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bridge, type BridgeEnvironment } from '../../src/core/bridges/bridge.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { ChannelDriver } from '../../src/core/channels/driver.ts';
import type { RtpStatistics } from '../../src/media/rtp/statistics.ts';
import { RTP_STATISTICS_FIELDS } from '../../src/media/rtp/statistics.ts';
import { rtpQualityStrings, setRtpQualityVariables } from '../../src/core/rtp-quality-variables.ts';
import { kernel, unitChannel, type Kernel } from './kernel-helpers.ts';

function statistics(figures: Partial<RtpStatistics>): RtpStatistics {
  const all = Object.fromEntries(RTP_STATISTICS_FIELDS.map((field) => [field, 0])) as Record<keyof RtpStatistics, number>;
  return { ...all, ...figures };
}

/** A channel whose driver reports `stats` as its RTP statistics (undefined: a technology without RTP). */
function rtpChannel(k: Kernel, stats: RtpStatistics | undefined): Channel {
  const { channel, driver } = unitChannel(k, { state: 'Up' });
  const withStatistics: ChannelDriver = {
    call: () => driver.call(),
    answer: () => driver.answer(),
    hangup: (cause) => driver.hangup(cause),
    indicate: (indication) => driver.indicate(indication),
    sendDigit: (digit) => driver.sendDigit(digit),
    writeFrame: (frame) => driver.writeFrame(frame),
    ...(stats ? { rtpStatistics: () => stats } : {}),
  };
  channel.driver = withStatistics;
  return channel;
}

function mixingBridge(k: Kernel): Bridge {
  const env: BridgeEnvironment = {
    publish: (event, scope) => k.applications.publish(event, scope),
    memberJoined: () => undefined,
    memberLeft: () => undefined,
    destroyed: () => undefined,
  };
  return new Bridge(env, { id: `qos-${Math.random()}`, name: '', type: 'mixing', videoMode: 'talker' });
}

const qosVarsets = (k: Kernel): string[] =>
  k.events.flatMap((event) => (event.type === 'ChannelVarset' && event.variable.startsWith('RTPAUDIOQOS') ? [`${event.channel?.name} ${event.variable}`] : []));

test('the five texts in Asterisk 22\'s formats', () => {
  const texts = rtpQualityStrings(
    statistics({
      local_ssrc: 23420183, remote_ssrc: 3390111744, rxploss: 2, rxjitter: 0.00125, rxcount: 200, txjitter: 0.0165, txcount: 190, txploss: 1, rtt: 0.0004,
      local_minjitter: 0, local_maxjitter: 0.003, local_normdevjitter: 0.000707, local_stdevjitter: 0.000659,
      local_maxrxploss: 2, local_normdevrxploss: 0.5, maxrtt: 0.0006, minrtt: 0.0002, normdevrtt: 0.0004, stdevrtt: 0.0001,
    }),
  );
  assert.deepEqual(Object.fromEntries(texts), {
    RTPAUDIOQOS: 'ssrc=23420183;themssrc=3390111744;lp=2;rxjitter=0.001250;rxcount=200;txjitter=0.016500;txcount=190;rlp=1;rtt=0.000400;rxmes=0.000000;txmes=0.000000',
    RTPAUDIOQOSJITTER: 'minrxjitter=000.000000;maxrxjitter=000.003000;avgrxjitter=000.000707;stdevrxjitter=000.000659;mintxjitter=000.000000;maxtxjitter=000.000000;avgtxjitter=000.000000;stdevtxjitter=000.000000;',
    RTPAUDIOQOSLOSS: '  minrxlost=000.000000;  maxrxlost=002.000000;  avgrxlost=000.500000;  stdevrxlost=000.000000;  mintxlost=000.000000;  maxtxlost=000.000000;  avgtxlost=000.000000;  stdevtxlost=000.000000;',
    RTPAUDIOQOSRTT: '     minrtt=000.000200;     maxrtt=000.000600;     avgrtt=000.000400;     stdevrtt=000.000100;',
    RTPAUDIOQOSMES: '   minrxmes=000.000000;   maxrxmes=000.000000;   avgrxmes=000.000000;   stdevrxmes=000.000000;   mintxmes=000.000000;   maxtxmes=000.000000;   avgtxmes=000.000000;   stdevtxmes=000.000000;',
  });
});

test('figures that are not finite or not counts never make a malformed text', () => {
  const [[, quality], [, jitter]] = rtpQualityStrings(statistics({ rxcount: Number.NaN, rxploss: -3, rxjitter: Number.POSITIVE_INFINITY, local_maxjitter: -0.5, local_minjitter: 1234.5 }));
  assert.match(quality, /^ssrc=0;themssrc=0;lp=0;rxjitter=0\.000000;rxcount=0;/);
  assert.match(jitter, /^minrxjitter=1234\.500000;maxrxjitter=-00.500000;/);
});

test('a channel alone: its five variables once; a value already there is left alone', () => {
  const k = kernel();
  const channel = rtpChannel(k, statistics({ rxcount: 5 }));
  channel.setVariable('RTPAUDIOQOSRTT', 'set by the dialplan');
  setRtpQualityVariables(channel);
  setRtpQualityVariables(channel);
  const setByHand = `${channel.name} RTPAUDIOQOSRTT`;
  assert.deepEqual(qosVarsets(k), [setByHand, ...['RTPAUDIOQOS', 'RTPAUDIOQOSJITTER', 'RTPAUDIOQOSLOSS', 'RTPAUDIOQOSMES'].map((name) => `${channel.name} ${name}`)]);
  assert.equal(channel.getVariable('RTPAUDIOQOSRTT'), 'set by the dialplan');
});

test('without RTP statistics nothing is set', () => {
  const k = kernel();
  setRtpQualityVariables(rtpChannel(k, undefined));
  assert.deepEqual(qosVarsets(k), []);
});

test('in a two-member bridge the peer gets each text as *BRIDGED right after it; with three members or alone, nobody does', () => {
  const k = kernel();
  const bridge = mixingBridge(k);
  const a = rtpChannel(k, statistics({ rxcount: 1 }));
  const b = rtpChannel(k, statistics({ rxcount: 2 }));
  const c = rtpChannel(k, statistics({ rxcount: 3 }));
  bridge.add(a);
  bridge.add(b);
  setRtpQualityVariables(a);
  const names = ['RTPAUDIOQOS', 'RTPAUDIOQOSJITTER', 'RTPAUDIOQOSLOSS', 'RTPAUDIOQOSRTT', 'RTPAUDIOQOSMES'];
  assert.deepEqual(qosVarsets(k), names.flatMap((name) => [`${a.name} ${name}`, `${b.name} ${name}BRIDGED`]));
  assert.equal(b.getVariable('RTPAUDIOQOSBRIDGED'), a.getVariable('RTPAUDIOQOS'));
  k.events.length = 0;
  bridge.add(c);
  setRtpQualityVariables(c);
  assert.deepEqual(qosVarsets(k), names.map((name) => `${c.name} ${name}`), 'three members: no peer');
  k.events.length = 0;
  bridge.remove(c);
  bridge.remove(a);
  setRtpQualityVariables(b);
  assert.deepEqual(qosVarsets(k), names.map((name) => `${b.name} ${name}`), 'alone: no peer');
});
