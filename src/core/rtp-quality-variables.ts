// RTPAUDIOQOS and its companions: the channel variables a call's RTP figures are left in as the call
// ends, for the dialplan's hangup handlers and `h` extension (`${RTPAUDIOQOS}`) and ARI applications
// (one ChannelVarset each). Asterisk 22 sets them from its RTP instance's statistics (rtp_engine.c's
// quality strings) when chan_pjsip's session ends (a BYE, a CANCEL, a failure: before the hang-up is
// queued), when ARI deletes the channel (before the soft hang-up) and when the technology hangs up
// (after the hang-up request, before the channel is destroyed); whichever comes first wins, since a
// variable that already has a value is left alone. Captured from Asterisk 22.10.1 (docs/sip.md).
//
// The core knows no technology: any channel whose driver reports RTP statistics gets them. When the
// channel is one of the two members of a bridge, its peer gets the same strings as the *BRIDGED
// variables, interleaved (RTPAUDIOQOS, RTPAUDIOQOSBRIDGED, RTPAUDIOQOSJITTER, ...), as Asterisk does.
import type { RtpStatistics } from '../media/rtp/statistics.ts';
import type { Channel } from './channels/channel.ts';
import { bridgePeerOf } from './bridges/bridge-peers.ts';

/** A C `%u` of a 32-bit counter; figures that are not whole and non-negative read as 0. */
function unsigned(value: number): string {
  return Number.isFinite(value) && value > 0 ? String(Math.trunc(value) >>> 0) : '0';
}

/** A C `%f`: six decimals. */
function fixed(value: number): string {
  return (Number.isFinite(value) ? value : 0).toFixed(6);
}

/** A C `%010.6f`: six decimals, zero-padded to ten characters (after the sign, when negative). */
function padded(value: number): string {
  const finite = Number.isFinite(value) ? value : 0;
  const digits = Math.abs(finite).toFixed(6);
  return finite < 0 ? `-${digits.padStart(9, '0')}` : digits.padStart(10, '0');
}

/** `label=value;` for each pair, each label after `indent` spaces, as Asterisk's format strings have them. */
function spread(indent: number, pairs: ReadonlyArray<readonly [string, number]>): string {
  const spaces = ' '.repeat(indent);
  let text = '';
  for (const [label, value] of pairs) text += `${spaces}${label}=${padded(value)};`;
  return text;
}

/**
 * The five quality strings, named as the variables that hold them. The media experience scores
 * are placed as Asterisk places them: `rxmes` is the far end's view of our stream and `txmes` ours of
 * its stream, while RTPAUDIOQOSMES's `rx` spread is ours and its `tx` spread the far end's (all 0
 * before the first RTCP report). rxjitter is the jitter measured here and txjitter the far end's
 * RTCP figure (Asterisk shows these two the other way round; docs/differences.md).
 */
export function rtpQualityStrings(stats: RtpStatistics): ReadonlyArray<readonly [string, string]> {
  const quality =
    `ssrc=${unsigned(stats.local_ssrc)};themssrc=${unsigned(stats.remote_ssrc)};lp=${unsigned(stats.rxploss)};` +
    `rxjitter=${fixed(stats.rxjitter)};rxcount=${unsigned(stats.rxcount)};txjitter=${fixed(stats.txjitter)};` +
    `txcount=${unsigned(stats.txcount)};rlp=${unsigned(stats.txploss)};rtt=${fixed(stats.rtt)};rxmes=${fixed(stats.rxmes)};txmes=${fixed(stats.txmes)}`;
  const jitter = spread(0, [
    ['minrxjitter', stats.local_minjitter], ['maxrxjitter', stats.local_maxjitter], ['avgrxjitter', stats.local_normdevjitter], ['stdevrxjitter', stats.local_stdevjitter],
    ['mintxjitter', stats.remote_minjitter], ['maxtxjitter', stats.remote_maxjitter], ['avgtxjitter', stats.remote_normdevjitter], ['stdevtxjitter', stats.remote_stdevjitter],
  ]);
  const loss = spread(2, [
    ['minrxlost', stats.local_minrxploss], ['maxrxlost', stats.local_maxrxploss], ['avgrxlost', stats.local_normdevrxploss], ['stdevrxlost', stats.local_stdevrxploss],
    ['mintxlost', stats.remote_minrxploss], ['maxtxlost', stats.remote_maxrxploss], ['avgtxlost', stats.remote_normdevrxploss], ['stdevtxlost', stats.remote_stdevrxploss],
  ]);
  const rtt = spread(5, [['minrtt', stats.minrtt], ['maxrtt', stats.maxrtt], ['avgrtt', stats.normdevrtt], ['stdevrtt', stats.stdevrtt]]);
  const mes = spread(3, [
    ['minrxmes', stats.local_minmes], ['maxrxmes', stats.local_maxmes], ['avgrxmes', stats.local_normdevmes], ['stdevrxmes', stats.local_stdevmes],
    ['mintxmes', stats.remote_minmes], ['maxtxmes', stats.remote_maxmes], ['avgtxmes', stats.remote_normdevmes], ['stdevtxmes', stats.remote_stdevmes],
  ]);
  return [
    ['RTPAUDIOQOS', quality],
    ['RTPAUDIOQOSJITTER', jitter],
    ['RTPAUDIOQOSLOSS', loss],
    ['RTPAUDIOQOSRTT', rtt],
    ['RTPAUDIOQOSMES', mes],
  ];
}

/**
 * Leaves the channel's RTP figures in its RTPAUDIOQOS* variables (and its two-member bridge peer's
 * *BRIDGED ones), each only where it has no value yet. Nothing for a channel without RTP statistics
 * (no stream, or not a technology that carries RTP) or one already destroyed.
 */
export function setRtpQualityVariables(channel: Channel): void {
  if (channel.destroyed) return;
  const stats = channel.driver.rtpStatistics?.();
  if (!stats) return;
  const peer = bridgePeerOf(channel);
  for (const [name, value] of rtpQualityStrings(stats)) {
    if (!channel.getVariable(name)) channel.setSystemVariable(name, value);
    const bridged = `${name}BRIDGED`;
    if (peer && !peer.getVariable(bridged)) peer.setSystemVariable(bridged, value);
  }
}
