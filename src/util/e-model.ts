// An estimated MOS from network figures: ITU-T G.107's E-model, simplified the way call-quality
// monitors commonly use it. Only the impairments that a network changes are computed: the delay
// impairment Id (from the one-way mouth-to-ear delay) and the effective equipment impairment
// Ie-eff (from the codec and random packet loss, G.107 §7.3.3); the other factors keep G.107's
// default values, which give R0 − Is = 93.2 for a narrowband call. R is turned into a MOS with
// G.107's Annex B formula.

/** Codec impairment Ie and packet-loss robustness Bpl (ITU-T G.113 Appendix I values). */
interface CodecImpairment {
  readonly ie: number;
  readonly bpl: number;
}

// G.711 with packet-loss concealment (the jitter buffer conceals lost frames); other codecs are
// given G.113's figures where it has them, else G.711's.
const CODECS: Readonly<Record<string, CodecImpairment>> = {
  ulaw: { ie: 0, bpl: 25.1 },
  alaw: { ie: 0, bpl: 25.1 },
  g722: { ie: 0, bpl: 25.1 },
  gsm: { ie: 20, bpl: 43 },
  g729: { ie: 11, bpl: 19 },
  ilbc: { ie: 11, bpl: 32 },
  opus: { ie: 0, bpl: 25.1 },
};

/** R with every factor at G.107's default (R0 − Is − Id(0) − Ie(0) + A). */
const R_DEFAULT = 93.2;

export interface EModelInput {
  /** Packets lost, as a percentage of those expected (0–100). */
  readonly lossPercent: number;
  /** Network round-trip time in ms (RTCP); 0 when unknown. */
  readonly rttMs: number;
  /** Interarrival jitter in ms. */
  readonly jitterMs: number;
  /** The codec's name (`ulaw`, `alaw` …); unknown codecs count as G.711. */
  readonly codec?: string;
}

export interface EModelResult {
  readonly r: number;
  readonly mos: number;
}

/**
 * The one-way delay: half the round trip, a jitter buffer of twice the jitter, and a 20 ms
 * packet plus its look-ahead (a common simplification of G.107's Ta).
 */
function oneWayDelayMs({ rttMs, jitterMs }: EModelInput): number {
  return Math.max(0, rttMs) / 2 + 2 * Math.max(0, jitterMs) + 30;
}

/** G.107's Idd, simplified to the usual linear form with the 177.3 ms knee. */
function delayImpairment(delayMs: number): number {
  return 0.024 * delayMs + (delayMs > 177.3 ? 0.11 * (delayMs - 177.3) : 0);
}

/** G.107 (7.3.3): Ie-eff = Ie + (95 − Ie) · Ppl / (Ppl + Bpl). */
function lossImpairment(lossPercent: number, codec: CodecImpairment): number {
  const ppl = Math.min(100, Math.max(0, lossPercent));
  return codec.ie + ((95 - codec.ie) * ppl) / (ppl + codec.bpl);
}

/** G.107 Annex B: MOS from R. */
export function mosFromR(r: number): number {
  if (r <= 0) return 1;
  if (r >= 100) return 4.5;
  return 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6;
}

export function estimateMos(input: EModelInput): EModelResult {
  const codec = CODECS[input.codec ?? ''] ?? CODECS.ulaw!;
  const r = Math.max(0, Math.min(100, R_DEFAULT - delayImpairment(oneWayDelayMs(input)) - lossImpairment(input.lossPercent, codec)));
  return { r: Math.round(r * 10) / 10, mos: Math.round(mosFromR(r) * 100) / 100 };
}

/** How the console colours a MOS: good from 4.0, fair from 3.6, poor from 3.1, else bad. */
export function mosRating(mos: number): 'good' | 'fair' | 'poor' | 'bad' {
  if (mos >= 4.0) return 'good';
  if (mos >= 3.6) return 'fair';
  if (mos >= 3.1) return 'poor';
  return 'bad';
}
