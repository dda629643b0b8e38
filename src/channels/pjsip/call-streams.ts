// The RTP streams of SIP calls: a socket pair from sip's RTP port range per call, wired to the
// core's media clock and the settings (strict RTP, RTCP interval, jitter buffer; the endpoint's
// rtp_symmetric), with the totals GET /metrics reads and the strict-RTP warnings bounded over all
// calls.
import { RtpPortRange } from '../../media/rtp/port-range.ts';
import { RtpStream, RtpStreamTotals } from '../../media/rtp/stream.ts';
import type { SipCall } from './call.ts';
import type { PjsipRuntime } from './runtime.ts';
import { LogThrottle } from '../../util/log-throttle.ts';

/** Strict-RTP stranger warnings: at most this many lines per window; the rest are counted into the next line. */
const STRANGER_WARNINGS_PER_WINDOW = 10;
const STRANGER_WARNING_WINDOW_MS = 60_000;

export class CallStreams {
  /** What every call's media dropped and concealed since start (GET /metrics). */
  readonly totals = new RtpStreamTotals();
  readonly #runtime: PjsipRuntime;
  /** A call's media ended with a round-trip time measured by RTCP, in seconds. */
  readonly #onRoundTrip: (seconds: number) => void;
  #ports = new RtpPortRange(10000, 20000);
  #host = '127.0.0.1';
  #strangerWindowStart = 0;
  #strangerWarnings = 0;
  #strangerWarningsSuppressed = 0;
  /** Paused streams are logged once per interval over all calls: a flood of reflecting INVITEs must not flood the log. */
  readonly #unansweredLog = new LogThrottle(10_000);

  constructor(runtime: PjsipRuntime, onRoundTrip: (seconds: number) => void) {
    this.#runtime = runtime;
    this.#onRoundTrip = onRoundTrip;
  }

  /** Where streams bind, at start: the local address and sip's RTP port range. */
  configure(host: string, ports: RtpPortRange): void {
    this.#host = host;
    this.#ports = ports;
  }

  async open(call: SipCall): Promise<RtpStream> {
    const context = this.#runtime.context!;
    const sockets = await this.#ports.bindPair(this.#host);
    const media = context.media;
    const clock = { get ticks() { return media.clock.ticks; }, onTick: (listener: () => void) => media.onTick(listener), offTick: (listener: () => void) => media.offTick(listener) };
    const sip = context.config.sip;
    const stream: RtpStream = new RtpStream(sockets.rtp, clock, {
      onFrame: (frame) => call.deliver(frame),
      onDigit: (digit, ms) => call.digit(digit, ms),
      onStranger: (address, port) => this.#warnStranger(call, address, port),
      onUnanswered: (address, port) =>
        this.#unansweredLog.run((suppressed) =>
          this.#runtime.log?.warn(
            { channel: call.channel?.name, media: `${address}:${port}`, ...(suppressed > 0 ? { suppressed } : {}) },
            'RTP sending paused: nothing came back from a media address that is not the caller\'s signalling address',
          ),
        ),
      onClosed: () => {
        if (stream.rtcp.rttSpread.count > 0) this.#onRoundTrip(stream.rtcp.rtt);
      },
    }, {
      totals: this.totals,
      rtcpSocket: sockets.rtcp,
      rtcpIntervalMs: sip.rtcpIntervalMs,
      strictRtp: sip.strictRtp,
      probation: sip.rtpProbation,
      symmetric: call.options.rtpSymmetric === true,
      ...(sip.jitterbuffer ? { jitterBuffer: { minDelayMs: sip.jitterbufferMinDelayMs, maxDelayMs: sip.jitterbufferMaxDelayMs } } : {}),
    });
    return stream;
  }

  /**
   * One warning line per call the first time strict RTP drops a stranger's packet after the far
   * end's source was learned; at most STRANGER_WARNINGS_PER_WINDOW lines a minute over all calls
   * (a scan of the RTP port range must not flood the log), the lines left out counted in the next.
   */
  #warnStranger(call: SipCall, address: string, port: number): void {
    const now = Date.now();
    if (now - this.#strangerWindowStart >= STRANGER_WARNING_WINDOW_MS) {
      this.#strangerWindowStart = now;
      this.#strangerWarnings = 0;
    }
    if (this.#strangerWarnings >= STRANGER_WARNINGS_PER_WINDOW) {
      this.#strangerWarningsSuppressed += 1;
      return;
    }
    this.#strangerWarnings += 1;
    const suppressed = this.#strangerWarningsSuppressed;
    this.#strangerWarningsSuppressed = 0;
    const channel = call.channel?.name;
    this.#runtime.log?.warn(
      { channel, stranger: `${address.includes(':') ? `[${address}]` : address}:${port}`, ...(suppressed > 0 ? { suppressed } : {}) },
      `strict RTP: dropping RTP from ${address}:${port} on ${channel ?? 'a SIP call'} (not the call's far end)`,
    );
  }
}
