// The figures ARI's `rtp_statistics` reports (the RTPstat model without the channel id, which the
// interface layer adds), from one stream's sender and receiver, and what RTCP learnt: without it
// the far end's view (txploss, txjitter, rtt and the remote_* spreads) stays 0.
import type { RtpReceiverStats } from './receiver-stats.ts';
import type { RtcpFigures } from './rtcp-session.ts';
import type { RtpSender } from './sender.ts';

export interface RtpStatistics {
  txcount: number;
  rxcount: number;
  txoctetcount: number;
  rxoctetcount: number;
  txploss: number;
  rxploss: number;
  local_ssrc: number;
  remote_ssrc: number;
  txjitter: number;
  rxjitter: number;
  local_maxjitter: number;
  local_minjitter: number;
  local_normdevjitter: number;
  local_stdevjitter: number;
  remote_maxjitter: number;
  remote_minjitter: number;
  remote_normdevjitter: number;
  remote_stdevjitter: number;
  local_maxrxploss: number;
  local_minrxploss: number;
  local_normdevrxploss: number;
  local_stdevrxploss: number;
  remote_maxrxploss: number;
  remote_minrxploss: number;
  remote_normdevrxploss: number;
  remote_stdevrxploss: number;
  rtt: number;
  maxrtt: number;
  minrtt: number;
  normdevrtt: number;
  stdevrtt: number;
  /**
   * Media experience scores (media-experience.ts), named as Asterisk's: `txmes` is the score of the
   * stream we receive, figured at each report we send (`local_*mes` its spread); `rxmes` that of our
   * stream from the far end's reports (`remote_*mes`). Unrounded here; ARI shows the two as integers.
   */
  txmes: number;
  rxmes: number;
  remote_maxmes: number;
  remote_minmes: number;
  remote_normdevmes: number;
  remote_stdevmes: number;
  local_maxmes: number;
  local_minmes: number;
  local_normdevmes: number;
  local_stdevmes: number;
}

export function rtpStatistics(sender: RtpSender, receiver: RtpReceiverStats, rtcp?: RtcpFigures): RtpStatistics {
  const jitter = receiver.jitterSpread;
  const remoteJitter = rtcp?.remoteJitterSpread;
  const remoteLost = rtcp?.remoteLostSpread;
  const localLost = rtcp?.localLostSpread;
  const rtt = rtcp?.rttSpread;
  const remoteMes = rtcp?.remoteMesSpread;
  const localMes = rtcp?.localMesSpread;
  return {
    txcount: sender.packets,
    rxcount: receiver.packets,
    txoctetcount: sender.octets,
    rxoctetcount: receiver.octets,
    txploss: rtcp?.remoteLost ?? 0,
    rxploss: receiver.lost,
    local_ssrc: sender.ssrc,
    remote_ssrc: receiver.ssrc,
    txjitter: rtcp?.remoteJitter ?? 0,
    rxjitter: receiver.jitterSeconds,
    local_maxjitter: jitter.max,
    local_minjitter: jitter.min,
    local_normdevjitter: jitter.mean,
    local_stdevjitter: jitter.stdev,
    remote_maxjitter: remoteJitter?.max ?? 0,
    remote_minjitter: remoteJitter?.min ?? 0,
    remote_normdevjitter: remoteJitter?.mean ?? 0,
    remote_stdevjitter: remoteJitter?.stdev ?? 0,
    local_maxrxploss: localLost?.max ?? 0,
    local_minrxploss: localLost?.min ?? 0,
    local_normdevrxploss: localLost?.mean ?? 0,
    local_stdevrxploss: localLost?.stdev ?? 0,
    remote_maxrxploss: remoteLost?.max ?? 0,
    remote_minrxploss: remoteLost?.min ?? 0,
    remote_normdevrxploss: remoteLost?.mean ?? 0,
    remote_stdevrxploss: remoteLost?.stdev ?? 0,
    rtt: rtcp?.rtt ?? 0,
    maxrtt: rtt?.max ?? 0,
    minrtt: rtt?.min ?? 0,
    normdevrtt: rtt?.mean ?? 0,
    stdevrtt: rtt?.stdev ?? 0,
    txmes: rtcp?.localMes ?? 0,
    rxmes: rtcp?.remoteMes ?? 0,
    remote_maxmes: remoteMes?.max ?? 0,
    remote_minmes: remoteMes?.min ?? 0,
    remote_normdevmes: remoteMes?.mean ?? 0,
    remote_stdevmes: remoteMes?.stdev ?? 0,
    local_maxmes: localMes?.max ?? 0,
    local_minmes: localMes?.min ?? 0,
    local_normdevmes: localMes?.mean ?? 0,
    local_stdevmes: localMes?.stdev ?? 0,
  };
}

/** The figures of RtpStatistics in the order writeRtpStatistics stores them (a media worker shares them as numbers). */
export const RTP_STATISTICS_FIELDS = [
  'txcount', 'rxcount', 'txoctetcount', 'rxoctetcount', 'txploss', 'rxploss', 'local_ssrc', 'remote_ssrc', 'txjitter', 'rxjitter',
  'local_maxjitter', 'local_minjitter', 'local_normdevjitter', 'local_stdevjitter',
  'remote_maxjitter', 'remote_minjitter', 'remote_normdevjitter', 'remote_stdevjitter',
  'local_maxrxploss', 'local_minrxploss', 'local_normdevrxploss', 'local_stdevrxploss',
  'remote_maxrxploss', 'remote_minrxploss', 'remote_normdevrxploss', 'remote_stdevrxploss',
  'rtt', 'maxrtt', 'minrtt', 'normdevrtt', 'stdevrtt',
  'txmes', 'rxmes', 'remote_maxmes', 'remote_minmes', 'remote_normdevmes', 'remote_stdevmes',
  'local_maxmes', 'local_minmes', 'local_normdevmes', 'local_stdevmes',
] as const satisfies ReadonlyArray<keyof RtpStatistics>;

/**
 * What rtpStatistics reports, stored as numbers from `offset` in RTP_STATISTICS_FIELDS' order and
 * without making an object: a media worker does it every tick for every stream.
 */
export function writeRtpStatistics(sender: RtpSender, receiver: RtpReceiverStats, rtcp: RtcpFigures, into: Float64Array, offset: number): void {
  const jitter = receiver.jitterSpread;
  let i = offset;
  into[i++] = sender.packets;
  into[i++] = receiver.packets;
  into[i++] = sender.octets;
  into[i++] = receiver.octets;
  into[i++] = rtcp.remoteLost;
  into[i++] = receiver.lost;
  into[i++] = sender.ssrc;
  into[i++] = receiver.ssrc;
  into[i++] = rtcp.remoteJitter;
  into[i++] = receiver.jitterSeconds;
  i = writeSpread(jitter, into, i);
  i = writeSpread(rtcp.remoteJitterSpread, into, i);
  i = writeSpread(rtcp.localLostSpread, into, i);
  i = writeSpread(rtcp.remoteLostSpread, into, i);
  into[i++] = rtcp.rtt;
  i = writeSpread(rtcp.rttSpread, into, i);
  into[i++] = rtcp.localMes;
  into[i++] = rtcp.remoteMes;
  i = writeSpread(rtcp.remoteMesSpread, into, i);
  writeSpread(rtcp.localMesSpread, into, i);
}

function writeSpread(spread: { readonly max: number; readonly min: number; readonly mean: number; readonly stdev: number }, into: Float64Array, at: number): number {
  into[at] = spread.max;
  into[at + 1] = spread.min;
  into[at + 2] = spread.mean;
  into[at + 3] = spread.stdev;
  return at + 4;
}

/** The RtpStatistics that writeRtpStatistics stored from `offset`. */
export function readRtpStatistics(from: Float64Array, offset: number): RtpStatistics {
  const statistics: Partial<Record<keyof RtpStatistics, number>> = {};
  for (let i = 0; i < RTP_STATISTICS_FIELDS.length; i++) statistics[RTP_STATISTICS_FIELDS[i]] = from[offset + i];
  return statistics as RtpStatistics;
}
