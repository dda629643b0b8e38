// Prometheus metrics (GET /metrics). Gauges are read from the core's tables when scraped
// (collect callbacks), so nothing is maintained per event; only counters and histograms are
// updated as things happen (HTTP requests, media-clock ticks, events sent and dropped).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SipStats } from '../channels/pjsip/stats.ts';
import type { WorkerLoad } from '../media/workers/pool.ts';
import type { Core } from '../control/core.ts';
import { RequestHistogram } from './request-histogram.ts';

/** What the event WebSocket reports: clients connected, events sent and events dropped so far. */
export interface EventStats {
  readonly clients: number;
  readonly eventsSent: number;
  readonly eventsDropped: number;
}

export interface MetricsOptions {
  readonly core: Core;
  readonly events: () => EventStats;
  /** SIP figures (the PJSIP technology's), when SIP runs. */
  readonly sip?: () => SipStats;
  /** Whether SIP listens (false: its defaulted port could not be opened; /health says degraded). */
  readonly sipListening?: () => boolean;
  /** Cluster figures when the server is a cluster member (undefined otherwise: no cluster series). */
  readonly cluster?: () => { members: number; natsConnected: boolean; load?: readonly ClusterMemberLoad[] } | undefined;
}

/** One live cluster member's load as its last heartbeat gave it (this member: now). */
export interface ClusterMemberLoad {
  readonly node: string;
  readonly channels: number;
  readonly bridges: number;
  readonly draining: boolean;
}

export class Metrics {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  readonly #httpRequests: RequestHistogram;
  readonly #tickLateness: Histogram;
  readonly #sipRoundTrip: Histogram | undefined;
  /** Drops the SIP figures read for the last scrape, so the next one reads them afresh. */
  #forgetScrape: () => void = () => {};

  constructor(options: MetricsOptions) {
    const { core } = options;
    const registers = [this.registry];
    // prom-client's names already start with process_ or nodejs_: the prefix is only ours.
    collectDefaultMetrics({ register: this.registry, prefix: 'patchbay_' });

    new Gauge({
      name: 'patchbay_channels',
      help: 'Channels by technology and state',
      labelNames: ['technology', 'state'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, number>();
        for (const channel of core.channels.list()) {
          const key = `${channel.technology}\u0000${channel.state}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        for (const [key, count] of counts) {
          const [technology, state] = key.split('\u0000');
          this.set({ technology, state }, count);
        }
      },
    });
    const sized = (name: string, help: string, size: () => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(size());
        },
      });
    };
    sized('patchbay_bridges', 'Bridges', () => core.bridges.size);
    sized('patchbay_playbacks', 'Playbacks queued or playing', () => core.playbacks.size);
    sized('patchbay_recordings', 'Live recordings', () => core.recordings.size);
    new Gauge({
      name: 'patchbay_applications',
      help: 'Stasis applications, by whether a WebSocket holds them',
      labelNames: ['connected'],
      registers,
      collect() {
        let connected = 0;
        let total = 0;
        for (const app of core.applications.list()) {
          total += 1;
          if (app.sink !== undefined) connected += 1;
        }
        this.set({ connected: 'true' }, connected);
        this.set({ connected: 'false' }, total - connected);
      },
    });
    sized('patchbay_websocket_clients', 'Event WebSocket clients connected', () => options.events().clients);
    const monotonic = (name: string, help: string, read: () => number): void => {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    };
    monotonic('patchbay_events_sent_total', 'Events and REST responses sent over event WebSockets', () => options.events().eventsSent);
    monotonic('patchbay_media_clock_skipped_ticks_total', 'Media-clock ticks dropped after a stall longer than the catch-up burst (20 ms of audio lost on every call each)', () => core.media.clock.skippedTicks);
    monotonic('patchbay_events_dropped_total', 'Events not delivered: the WebSocket was closed or its reader too slow', () => options.events().eventsDropped);
    const records = core.records;
    monotonic('patchbay_cdr_records_total', 'Call detail records posted (docs/cdr.md)', () => records.posted);
    monotonic('patchbay_cdr_rows_written_total', 'CDR and CEL rows written to the database', () => records.store.written);
    monotonic('patchbay_cdr_rows_dropped_total', 'CDR and CEL rows and Master.csv lines dropped: the queue was full (the database or disk could not keep up) or a line was too long', () => records.store.dropped + (records.csv?.dropped ?? 0));
    sized('patchbay_cdr_rows_pending', 'CDR and CEL rows waiting for the next write', () => records.store.pending);

    this.#httpRequests = new RequestHistogram(
      'patchbay_http_request_duration_seconds',
      'ARI requests (HTTP and REST over WebSocket) by operation and status',
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    );
    const cluster = options.cluster;
    if (cluster) {
      sized('patchbay_cluster_members', 'Live cluster members, this one included (docs/cluster.md)', () => cluster()?.members ?? 0);
      sized('patchbay_cluster_nats_connected', 'Whether the NATS connection of the cluster is up (0: reconnecting, see /health)', () => (cluster()?.natsConnected ? 1 : 0));
      // Per live member, from its last heartbeat: what placement sees. A member that left has no series.
      const perMember = (name: string, help: string, read: (member: ClusterMemberLoad) => number): void => {
        new Gauge({
          name,
          help,
          labelNames: ['member'],
          registers,
          collect() {
            this.reset();
            for (const member of cluster()?.load ?? []) this.set({ member: member.node }, read(member));
          },
        });
      };
      perMember('patchbay_cluster_member_channels', 'Channels of each live cluster member (its last heartbeat)', (member) => member.channels);
      perMember('patchbay_cluster_member_bridges', 'Bridges of each live cluster member (its last heartbeat)', (member) => member.bridges);
      perMember('patchbay_cluster_member_draining', 'Whether each live cluster member is draining (graceful stop: no new work)', (member) => (member.draining ? 1 : 0));
    }
    const sipListening = options.sipListening;
    if (sipListening) sized('patchbay_sip_listening', 'Whether SIP listens (0: the server runs without SIP, see /health)', () => (sipListening() ? 1 : 0));
    const readSip = options.sip;
    if (readSip) {
      // Every SIP metric reads the same figures: the technology walks its calls once per scrape.
      let snapshot: SipStats | undefined;
      const sip = (): SipStats => (snapshot ??= readSip());
      this.#forgetScrape = () => {
        snapshot = undefined;
      };
      new Gauge({
        name: 'patchbay_sip_transactions',
        help: 'Live SIP transactions by kind',
        labelNames: ['kind'],
        registers,
        collect() {
          const stats = sip();
          this.set({ kind: 'client' }, stats.clientTransactions);
          this.set({ kind: 'server' }, stats.serverTransactions);
        },
      });
      const sipGauge = (name: string, help: string, read: (stats: SipStats) => number): void => {
        new Gauge({
          name,
          help,
          registers,
          collect() {
            this.set(read(sip()));
          },
        });
      };
      sipGauge('patchbay_sip_registrations', 'Registered SIP contacts (bindings), all AORs', (stats) => stats.bindings);
      sipGauge('patchbay_sip_calls', 'Live SIP calls', (stats) => stats.calls);
      sipGauge('patchbay_sip_subscriptions', 'Live SIP subscriptions (SUBSCRIBE: dialog, presence, message-summary)', (stats) => stats.subscriptions);
      sipGauge('patchbay_sip_rtp_lost_packets', 'RTP packets lost on the live SIP calls (receiving side)', (stats) => stats.rtpLost);
      sipGauge('patchbay_sip_rtp_received_packets', 'RTP packets received so far by the live SIP calls (what the lost packets are a share of)', (stats) => stats.rtpReceived);
      sipGauge('patchbay_sip_rtp_sent_packets', 'RTP packets sent so far by the live SIP calls', (stats) => stats.rtpSent);
      sipGauge('patchbay_sip_rtp_jitter_max_seconds', 'Largest interarrival jitter of the live SIP calls', (stats) => stats.rtpJitterMax);
      sipGauge('patchbay_sip_outbound_registrations', 'Outbound registrations configured (type=registration)', (stats) => stats.outboundRegistrations);
      sipGauge('patchbay_sip_outbound_registered', 'Outbound registrations currently accepted by their registrar', (stats) => stats.outboundRegistered);
      sipGauge('patchbay_sip_jitterbuffer_mean_target_delay_seconds', 'Mean jitter-buffer target delay of the live SIP calls', (stats) => stats.jitterBufferTargetDelayMean);
      sipGauge('patchbay_sip_jitterbuffer_max_target_delay_seconds', 'Largest jitter-buffer target delay of the live SIP calls', (stats) => stats.jitterBufferTargetDelayMax);
      monotonic('patchbay_sip_rtp_stranger_packets_total', 'RTP packets dropped by strict RTP: sent by another source than the call\'s far end', () => sip().rtpStrangerPackets);
      monotonic('patchbay_sip_rtcp_stranger_reports_total', 'RTCP packets dropped: sent from elsewhere than the call\'s far end', () => sip().rtcpStrangerReports);
      monotonic('patchbay_sip_srtp_refused_packets_total', 'SRTP and SRTCP packets dropped: failed authentication or replayed', () => sip().srtpRefusedPackets);
      monotonic('patchbay_sip_jitterbuffer_late_packets_total', 'RTP packets the jitter buffers dropped because their audio arrived after it was due', () => sip().jitterBufferLatePackets);
      monotonic('patchbay_sip_jitterbuffer_concealed_frames_total', 'Audio frames the jitter buffers made up for missing or late packets', () => sip().jitterBufferConcealedFrames);
      const workerGauge = (name: string, help: string, read: (load: WorkerLoad) => number): void => {
        new Gauge({
          name,
          help,
          labelNames: ['worker'],
          registers,
          collect() {
            this.reset();
            for (const load of sip().mediaWorkers ?? []) this.set({ worker: String(load.index) }, read(load));
          },
        });
      };
      workerGauge('patchbay_media_worker_streams', 'RTP streams each media worker runs (media.workers)', (load) => load.streams);
      workerGauge('patchbay_media_worker_packets_in_per_second', 'RTP packets each media worker received per second, over its last report', (load) => load.packetsInPerSecond);
      workerGauge('patchbay_media_worker_packets_out_per_second', 'RTP packets each media worker sent per second, over its last report', (load) => load.packetsOutPerSecond);
      workerGauge('patchbay_media_worker_utilization', 'Event-loop utilisation of each media worker over its last second, 0-1', (load) => load.utilization);
      workerGauge('patchbay_media_worker_cpu_cores', 'CPU each media worker\'s thread used over its last second, in cores (-1: not known on this system)', (load) => load.cpu);
      workerGauge('patchbay_media_worker_ring_drops', 'Frames each media worker\'s shared rings dropped because the other side fell behind, since it started', (load) => load.ringDrops);
      workerGauge('patchbay_media_worker_relayed_streams', 'Streams whose received audio each media worker relays to another of its streams (a two-party bridge or Dial() pair), over its last report', (load) => load.relayedStreams ?? 0);
      workerGauge('patchbay_media_worker_mixed_streams', 'Streams of each media worker whose audio a bridge mix in the media workers takes (mixed there or in another worker), over its last report', (load) => load.mixedStreams ?? 0);
      workerGauge('patchbay_media_worker_mixes', 'Bridges each media worker mixes, over its last report', (load) => load.mixes ?? 0);
      workerGauge('patchbay_media_worker_recordings', 'Recordings each media worker writes, over its last report', (load) => load.recordings ?? 0);
      workerGauge('patchbay_media_worker_heap_used_bytes', 'V8 heap each media worker\'s isolate uses, over its last report', (load) => load.heapUsedBytes ?? 0);
      workerGauge('patchbay_media_worker_heap_total_bytes', 'V8 heap each media worker\'s isolate has reserved, over its last report', (load) => load.heapTotalBytes ?? 0);
      workerGauge('patchbay_media_worker_restarts', 'Times each media worker was started again after it died', (load) => load.restarts);
      sipGauge('patchbay_sip_auth_blocked_sources', 'Source addresses refused unchecked right now after too many failed SIP digest guesses', (stats) => stats.authBlockedSources);
      sipGauge('patchbay_sip_auth_blocked_endpoints', 'Endpoints refused unchecked right now (but from addresses they authenticated from) after too many failed guesses', (stats) => stats.authBlockedEndpoints);
      monotonic('patchbay_sip_auth_failures_total', 'SIP digest guesses that failed the password check', () => sip().authFailures);
      monotonic('patchbay_sip_auth_refused_total', 'SIP requests refused by a failed-auth block without a password check', () => sip().authRefused);
      this.#sipRoundTrip = new Histogram({
        name: 'patchbay_sip_rtcp_rtt_seconds',
        help: 'Round-trip time measured by RTCP, the last one of each SIP call, observed when the call\'s media ends',
        buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2],
        registers,
      });
    }
    this.#tickLateness = new Histogram({
      name: 'patchbay_media_clock_lateness_seconds',
      help: 'How late the 20 ms media clock woke up for its due tick',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1],
      registers,
    });
  }

  /** One ARI request answered; `operation` is `resource.nickname`, or `unrouted`. */
  observeRequest(operation: string | undefined, method: string, status: number, seconds: number): void {
    this.#httpRequests.observeRequest(operation ?? 'unrouted', method, status, seconds);
  }

  /** A SIP call's media ended with this last RTCP round-trip time. */
  observeSipRoundTrip(seconds: number): void {
    this.#sipRoundTrip?.observe(seconds);
  }

  observeTickLateness(seconds: number): void {
    this.#tickLateness.observe(seconds);
  }

  /** The exposition text. */
  async render(): Promise<string> {
    this.#forgetScrape();
    try {
      return await this.registry.metrics();
    } finally {
      this.#forgetScrape();
    }
  }
}
