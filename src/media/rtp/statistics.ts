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
}

export function rtpStatistics(sender: RtpSender, receiver: RtpReceiverStats, rtcp?: RtcpFigures): RtpStatistics {
  const jitter = receiver.jitterSpread;
  const remoteJitter = rtcp?.remoteJitterSpread;
  const remoteLost = rtcp?.remoteLostSpread;
  const localLost = rtcp?.localLostSpread;
  const rtt = rtcp?.rttSpread;
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
  };
}
