// The figures ARI's `rtp_statistics` reports (the RTPstat model without the channel id, which the
// interface layer adds), from one stream's sender and receiver. Without RTCP the far end's view
// (txploss, txjitter, rtt and the remote_* spreads) stays 0.
import type { RtpReceiverStats } from './receiver-stats.ts';
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

export function rtpStatistics(sender: RtpSender, receiver: RtpReceiverStats): RtpStatistics {
  const jitter = receiver.jitterSpread;
  return {
    txcount: sender.packets,
    rxcount: receiver.packets,
    txoctetcount: sender.octets,
    rxoctetcount: receiver.octets,
    txploss: 0,
    rxploss: receiver.lost,
    local_ssrc: sender.ssrc,
    remote_ssrc: receiver.ssrc,
    txjitter: 0,
    rxjitter: receiver.jitterSeconds,
    local_maxjitter: jitter.max,
    local_minjitter: jitter.min,
    local_normdevjitter: jitter.mean,
    local_stdevjitter: jitter.stdev,
    remote_maxjitter: 0,
    remote_minjitter: 0,
    remote_normdevjitter: 0,
    remote_stdevjitter: 0,
    local_maxrxploss: 0,
    local_minrxploss: 0,
    local_normdevrxploss: 0,
    local_stdevrxploss: 0,
    remote_maxrxploss: 0,
    remote_minrxploss: 0,
    remote_normdevrxploss: 0,
    remote_stdevrxploss: 0,
    rtt: 0,
    maxrtt: 0,
    minrtt: 0,
    normdevrtt: 0,
    stdevrtt: 0,
  };
}
