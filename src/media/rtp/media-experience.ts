// The media experience score (MES, 0–100) Asterisk 22's res_rtp_asterisk reports in
// `rtp_statistics` and RTPAUDIOQOSMES: an E-model-like rating (ITU-T G.107 simplified) of one
// direction of a stream from its round-trip time, jitter and loss, turned into an opinion score
// (1–4.5) and rescaled to 0–100. Asterisk computes it for the stream it receives as it writes each
// RTCP report (local), and for the stream it sends from each report block the far end sends about
// it (remote); RtcpSession does the same. Arithmetic only: it runs on the media path.

/** The transmission rating ("R") of G.107 with every factor at its default: the best a call can get. */
const DEFAULT_R = 93.2;

/**
 * The score of one direction: `rttSeconds` the mean round-trip time, `jitterSeconds` the current
 * interarrival jitter and `jitterStdevSeconds` its standard deviation, `meanLost` the mean of the
 * lost-packet samples (per report). Asterisk's units are kept (seconds), so the jitter term, a
 * product of two figures in seconds, weighs little beside the round-trip time; ~88.1 for a
 * perfect stream.
 */
export function mediaExperienceScore(rttSeconds: number, jitterSeconds: number, jitterStdevSeconds: number, meanLost: number): number {
  // Latency as the user feels it: the round trip, jitter weighed by its deviation, 10 ms of coding.
  const effectiveLatency = rttSeconds * 1000 + jitterSeconds * 2 * (jitterStdevSeconds / 3) + 10;
  // Beyond 160 ms the lag degrades the call faster.
  let r = effectiveLatency < 160 ? DEFAULT_R - effectiveLatency / 40 : DEFAULT_R - (effectiveLatency - 120) / 10;
  r -= meanLost * 2;
  const opinion = r < 0 ? 1 : r > 100 ? 4.5 : 1 + 0.035 * r + r * (r - 60) * (100 - r) * 0.000007;
  // The 0–5 opinion scale onto 0–100.
  return (opinion / 5) * 100;
}
