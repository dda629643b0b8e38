// Per-leg RTP figures of bench/sip-capacity.ts's B2BUA step: the caller's legs (PJSIP/load-…) and
// the legs Dial() made to the answering SIPp (PJSIP/uas-…) apart, from each channel's ARI
// rtp_statistics at the window's start and end, so that a loss on one side of the server (the
// relay, or the main thread's mixer, falling behind towards one far end) is not hidden in the sum.
// Read with a few requests at a time: 600 legs take a second or two, outside the CPU window.
/** The bench's ARI user; bench/sip-side-by-side.ts passes another server's own. */
const BENCH_USER = 'asterisk:asterisk';
/** Requests in flight at once. */
const CONCURRENCY = 16;

export interface LegCounts {
  readonly received: number;
  readonly sent: number;
  /** Packets the far end sent that never arrived (sequence gaps). */
  readonly lost: number;
}

/** Counts by channel id, for the channels whose name starts with a leg's prefix. */
export type LegSnapshot = ReadonlyMap<string, { readonly leg: string; readonly counts: LegCounts }>;

export interface LegFigures {
  readonly legs: number;
  readonly received: number;
  readonly sent: number;
  /** In % over the window: lost of what the far end sent, and received but not sent on to the other leg's far end. */
  readonly lostPercent: number;
}

async function json(url: string, user: string): Promise<unknown> {
  const response = await fetch(url, { headers: { authorization: `Basic ${Buffer.from(user).toString('base64')}` } });
  if (!response.ok) return undefined;
  return response.json();
}

/** Which channels a snapshot reads, and as whom. */
export interface SnapshotOptions {
  /** `user:password` of the ARI user (the bench's by default). */
  readonly user?: string;
  /** Read at most this many channels, spread evenly over the list: a loaded server answers 500 readings slowly. */
  readonly limit?: number;
  /** Read only these channels (the ones an earlier snapshot read). */
  readonly ids?: ReadonlySet<string>;
}

/** Each leg's RTP counts now: `prefixes` maps a channel-name prefix to the leg's name. */
export async function snapshotLegs(base: string, prefixes: Readonly<Record<string, string>>, options: SnapshotOptions = {}): Promise<LegSnapshot> {
  const user = options.user ?? BENCH_USER;
  const channels = ((await json(`${base}/ari/channels`, user)) ?? []) as Array<{ id: string; name: string }>;
  let wanted = channels.flatMap((channel) => {
    if (options.ids && !options.ids.has(channel.id)) return [];
    const prefix = Object.keys(prefixes).find((candidate) => channel.name.startsWith(candidate));
    return prefix ? [{ id: channel.id, leg: prefixes[prefix] }] : [];
  });
  const limit = options.limit;
  if (limit !== undefined && wanted.length > limit) {
    const step = wanted.length / limit;
    wanted = Array.from({ length: limit }, (_, i) => wanted[Math.floor(i * step)]!);
  }
  const out = new Map<string, { leg: string; counts: LegCounts }>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < wanted.length) {
      const { id, leg } = wanted[next++];
      const stats = (await json(`${base}/ari/channels/${encodeURIComponent(id)}/rtp_statistics`, user).catch(() => undefined)) as { rxcount?: number; txcount?: number; rxploss?: number } | undefined;
      if (stats) out.set(id, { leg, counts: { received: stats.rxcount ?? 0, sent: stats.txcount ?? 0, lost: stats.rxploss ?? 0 } });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return out;
}

/** Each leg's figures over the window between two snapshots (channels in both only). */
export function legFigures(before: LegSnapshot, after: LegSnapshot): Record<string, LegFigures> {
  const sums = new Map<string, { legs: number; received: number; sent: number; lost: number }>();
  for (const [id, { leg, counts }] of after) {
    const start = before.get(id);
    if (!start) continue;
    const sum = sums.get(leg) ?? { legs: 0, received: 0, sent: 0, lost: 0 };
    sum.legs += 1;
    sum.received += counts.received - start.counts.received;
    sum.sent += counts.sent - start.counts.sent;
    sum.lost += Math.max(0, counts.lost - start.counts.lost);
    sums.set(leg, sum);
  }
  const out: Record<string, LegFigures> = {};
  for (const [leg, sum] of sums) {
    const expected = sum.received + sum.lost;
    out[leg] = { legs: sum.legs, received: sum.received, sent: sum.sent, lostPercent: expected > 0 ? (sum.lost / expected) * 100 : 0 };
  }
  return out;
}
