// What GET /metrics reports of SIP: transactions, bindings, calls, subscriptions, outbound registrations and the
// live calls' media figures, read when scraped.
import type { RtpStreamTotals } from '../../media/rtp/stream.ts';
import type { WorkerLoad } from '../../media/workers/pool.ts';
import type { PjsipRuntime } from './runtime.ts';
import type { SipAuthFailures } from './auth-failures.ts';

export interface SipStats {
  readonly clientTransactions: number;
  readonly serverTransactions: number;
  /** Registered contacts, all AORs together. */
  readonly bindings: number;
  readonly calls: number;
  /** Packets the live calls' far ends sent that never arrived. */
  readonly rtpLost: number;
  /** RTP packets the live calls received and sent so far: what the lost and late counts are a share of. */
  readonly rtpReceived: number;
  readonly rtpSent: number;
  /** The largest interarrival jitter of the live calls, in seconds. */
  readonly rtpJitterMax: number;
  readonly outboundRegistrations: number;
  readonly outboundRegistered: number;
  /** Since start (ended calls and live ones): RTP packets strict RTP dropped from other sources. */
  readonly rtpStrangerPackets: number;
  /** Since start: RTCP packets dropped because they came from elsewhere than the far end. */
  readonly rtcpStrangerReports: number;
  /** Since start: SRTP/SRTCP packets dropped for failing authentication or being replays. */
  readonly srtpRefusedPackets: number;
  /** Since start: packets the jitter buffers dropped as too late, and frames they concealed. */
  readonly jitterBufferLatePackets: number;
  readonly jitterBufferConcealedFrames: number;
  /** The jitter buffers' target delay over the live calls that have one: mean and largest, in seconds. */
  readonly jitterBufferTargetDelayMean: number;
  readonly jitterBufferTargetDelayMax: number;
  readonly authFailures: number;
  readonly authRefused: number;
  readonly authBlockedSources: number;
  readonly authBlockedEndpoints: number;
  /** Live SUBSCRIBE subscriptions (dialog, presence, message-summary). */
  readonly subscriptions: number;
  /** Each media worker's load (media.workers); empty when the calls' media runs on the main thread. */
  readonly mediaWorkers?: readonly WorkerLoad[];
}

/** `totals`: what every call's media dropped and concealed since start. */
export function collectSipStats(runtime: PjsipRuntime, totals: RtpStreamTotals, auth: SipAuthFailures, subscriptions = 0): SipStats {
  const counts = runtime.layer?.counts ?? { clients: 0, servers: 0, pending2xx: 0 };
  let bindings = 0;
  for (const aor of runtime.registrar.aors()) bindings += runtime.registrar.lookup(aor).length;
  let rtpLost = 0;
  let rtpReceived = 0;
  let rtpSent = 0;
  let rtpJitterMax = 0;
  let latePackets = totals.latePackets;
  let concealedFrames = totals.concealedFrames;
  let delaySum = 0;
  let delayMax = 0;
  let buffers = 0;
  for (const call of runtime.calls.values()) {
    const stream = call.stream;
    // A closed stream's counts are in the totals already.
    const jitterBuffer = stream && !stream.closed ? stream.jitterBuffer : undefined;
    if (jitterBuffer) {
      latePackets += jitterBuffer.late;
      concealedFrames += jitterBuffer.concealed;
      const delay = jitterBuffer.targetDelayMs / 1000;
      delaySum += delay;
      delayMax = Math.max(delayMax, delay);
      buffers += 1;
    }
    const statistics = stream?.statistics();
    if (!statistics) continue;
    rtpLost += statistics.rxploss;
    rtpReceived += statistics.rxcount;
    rtpSent += statistics.txcount;
    rtpJitterMax = Math.max(rtpJitterMax, statistics.rxjitter);
  }
  const registrations = runtime.registrations?.list() ?? [];
  return {
    clientTransactions: counts.clients,
    serverTransactions: counts.servers,
    bindings,
    calls: runtime.calls.size,
    rtpLost,
    rtpReceived,
    rtpSent,
    rtpJitterMax,
    outboundRegistrations: registrations.length,
    outboundRegistered: registrations.filter((registration) => registration.status === 'Registered').length,
    rtpStrangerPackets: totals.strangerPackets,
    rtcpStrangerReports: totals.strangerReports,
    srtpRefusedPackets: totals.srtpRefusedPackets,
    jitterBufferLatePackets: latePackets,
    jitterBufferConcealedFrames: concealedFrames,
    jitterBufferTargetDelayMean: buffers > 0 ? delaySum / buffers : 0,
    jitterBufferTargetDelayMax: delayMax,
    authFailures: auth.failures,
    authRefused: auth.refused,
    authBlockedSources: auth.blockedSources,
    authBlockedEndpoints: auth.blockedEndpoints,
    subscriptions,
  };
}
