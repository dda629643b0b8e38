// Call quality for the console and the call records: per channel whose technology carries RTP
// (the driver's rtpStatistics, a technology-neutral hook), packets, loss, jitter, round-trip time
// and an estimated MOS (util/e-model.ts). The core knows no technology: any driver that reports
// RTP statistics is measured. Live figures are sampled on a timer (a stream's figures vanish
// with it, so the last sample is what a channel is remembered by); when a channel ends, its last
// figures are kept in a bounded side table keyed by its uniqueid, which is what the call's CDR
// (uniqueid, and the dstchannel's) is joined with.
import { estimateMos, mosRating } from '../util/e-model.ts';
import type { Channel } from './channels/channel.ts';

export interface QualityFigures {
  readonly uniqueid: string;
  readonly linkedid: string;
  readonly channel: string;
  readonly codec: string;
  readonly packets_received: number;
  readonly packets_sent: number;
  /** Packets the far end sent that never arrived, and what the far end reported missing (RTCP). */
  readonly lost_received: number;
  readonly lost_sent: number;
  /** The worse direction's loss, percent of packets expected. */
  readonly loss_percent: number;
  /** The worse direction's interarrival jitter, ms. */
  readonly jitter_ms: number;
  /** RTCP round-trip time, ms (0 until a report came back). */
  readonly rtt_ms: number;
  readonly r: number;
  readonly mos: number;
  readonly rating: string;
  /** ms since the epoch of the sample. */
  readonly sampled_at: number;
}

export interface CallQualityOptions {
  readonly channels: { list(): Channel[]; onLifecycle(event: 'destroyed', listener: (channel: Channel) => void): () => void };
  /** How often live channels are sampled. */
  readonly sampleMs?: number;
  /** Ended channels remembered. */
  readonly keepEnded?: number;
  /** Told of each channel's last figures when it ends (the call records' side table). */
  readonly onEnded?: (figures: QualityFigures & { ended_at: number }) => void;
}

const DEFAULT_SAMPLE_MS = 1000;
const DEFAULT_KEEP_ENDED = 2000;

const percent = (lost: number, received: number): number => (lost + received > 0 ? (100 * lost) / (lost + received) : 0);
const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

/** The figures of one channel now, or undefined when it carries no RTP (or its stream is gone). */
export function measureChannel(channel: Channel, now = Date.now()): QualityFigures | undefined {
  const stats = channel.driver.rtpStatistics?.();
  if (!stats) return undefined;
  const codec = channel.driver.nativeFormat?.() ?? '';
  const lossReceived = percent(stats.rxploss, stats.rxcount);
  // txploss is the far end's count of our packets it missed (its RTCP reports).
  const lossSent = stats.txcount > 0 ? Math.min(100, (100 * stats.txploss) / stats.txcount) : 0;
  const lossPercent = Math.max(lossReceived, lossSent);
  const jitterMs = 1000 * Math.max(stats.rxjitter, stats.txjitter);
  const rttMs = 1000 * stats.rtt;
  const { r, mos } = estimateMos({ lossPercent, jitterMs, rttMs, codec });
  return {
    uniqueid: channel.id,
    linkedid: channel.linkedId,
    channel: channel.name,
    codec,
    packets_received: stats.rxcount,
    packets_sent: stats.txcount,
    lost_received: stats.rxploss,
    lost_sent: stats.txploss,
    loss_percent: round(lossPercent, 2),
    jitter_ms: round(jitterMs),
    rtt_ms: round(rttMs),
    r,
    mos,
    rating: mosRating(mos),
    sampled_at: now,
  };
}

export class CallQuality {
  /** Last sample of each live channel that carries RTP. */
  readonly #live = new Map<string, QualityFigures>();
  /** uniqueid → last figures of ended channels, oldest first. */
  readonly #ended = new Map<string, QualityFigures & { ended_at: number }>();
  readonly #keepEnded: number;
  #timer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: () => void;

  constructor(private readonly options: CallQualityOptions) {
    this.#keepEnded = options.keepEnded ?? DEFAULT_KEEP_ENDED;
    this.#unsubscribe = options.channels.onLifecycle('destroyed', (channel) => this.#remember(channel));
    this.#timer = setInterval(() => this.sample(), options.sampleMs ?? DEFAULT_SAMPLE_MS);
    this.#timer.unref();
  }

  /** Reads every live channel's figures now. */
  sample(): void {
    const now = Date.now();
    for (const channel of this.options.channels.list()) {
      const figures = measureChannel(channel, now);
      if (figures) this.#live.set(channel.id, figures);
    }
  }

  /** Live channels with RTP, freshly measured, worst MOS first. */
  live(): QualityFigures[] {
    this.sample();
    const live = new Set(this.options.channels.list().map((channel) => channel.id));
    for (const id of this.#live.keys()) if (!live.has(id)) this.#live.delete(id);
    return [...this.#live.values()].sort((a, b) => a.mos - b.mos);
  }

  /** Ended channels' last figures, newest first (at most `limit`). */
  ended(limit = 200): Array<QualityFigures & { ended_at: number }> {
    return [...this.#ended.values()].reverse().slice(0, limit);
  }

  /** The figures a channel ended with, by its uniqueid or its name. */
  endedChannel(idOrName: string): (QualityFigures & { ended_at: number }) | undefined {
    const byId = this.#ended.get(idOrName);
    if (byId) return byId;
    for (const figures of this.#ended.values()) if (figures.channel === idOrName) return figures;
    return undefined;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#unsubscribe();
  }

  #remember(channel: Channel): void {
    // Measured once more in case the stream is still open, else its last sample.
    const figures = measureChannel(channel) ?? this.#live.get(channel.id);
    this.#live.delete(channel.id);
    if (!figures) return;
    const ended = { ...figures, ended_at: Date.now() };
    this.#ended.set(channel.id, ended);
    this.options.onEnded?.(ended);
    while (this.#ended.size > this.#keepEnded) this.#ended.delete(this.#ended.keys().next().value!);
  }
}
