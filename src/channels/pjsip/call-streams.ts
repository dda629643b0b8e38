// The RTP streams of SIP calls: a socket pair from sip's RTP port range per call, wired to the
// core's media clock and the settings (strict RTP, RTCP interval, jitter buffer; the endpoint's
// rtp_symmetric), with the totals GET /metrics reads and the strict-RTP warnings bounded over all
// calls.
import type dgram from 'node:dgram';
import { RtpPortRange } from '../../media/rtp/port-range.ts';
import { RtpStream, RtpStreamTotals } from '../../media/rtp/stream.ts';
import type { SipCall } from './call.ts';
import type { PjsipRuntime } from './runtime.ts';
import { LogThrottle } from '../../util/log-throttle.ts';
import { generateDtlsIdentity, readDtlsIdentity, type DtlsIdentity } from '../../media/webrtc/dtls-identity.ts';
import { SecureMediaSocket } from '../../media/webrtc/secure-media-socket.ts';
import type { MediaSocket } from '../../media/rtp/media-socket.ts';

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
  /** The generated DTLS certificate (dtls_auto_generate_cert), made once at the first call that needs it. */
  #generated: Promise<DtlsIdentity> | undefined;
  /** dtls_cert_file certificates, read once per file pair. */
  readonly #fromFiles = new Map<string, DtlsIdentity>();
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
    const socket = call.options.mediaEncryption === 'dtls' ? await this.#secure(call, sockets.rtp) : sockets.rtp;
    const stream: RtpStream = new RtpStream(socket, clock, {
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
   * The socket of a DTLS-SRTP call (webrtc=yes): ICE-lite checks, the handshake and SRTP beneath
   * the stream. A failure to secure the media ends the call (cause 58, as bearer capability not available).
   */
  async #secure(call: SipCall, raw: dgram.Socket): Promise<MediaSocket> {
    const options = call.options;
    let identity: DtlsIdentity;
    try {
      identity = await this.#identity(options.dtlsCertFile, options.dtlsPrivateKey);
    } catch (error) {
      raw.close();
      throw error;
    }
    return new SecureMediaSocket(raw, identity, {
      verifyFingerprint: options.dtlsVerify !== 'no',
      onFailure: (reason) => {
        this.#runtime.log?.warn({ channel: call.channel?.name, reason }, 'WebRTC media could not be secured; hanging up');
        if (call.channel && !call.channel.hangingUp) call.channel.hangup(58);
      },
    });
  }

  #identity(certFile: string | undefined, givenKeyFile: string | undefined): Promise<DtlsIdentity> {
    if (certFile !== undefined) {
      // As Asterisk: without dtls_private_key the key is read from the certificate's file.
      const keyFile = givenKeyFile ?? certFile;
      const key = `${certFile}\n${keyFile}`;
      let identity = this.#fromFiles.get(key);
      if (!identity) {
        identity = readDtlsIdentity(certFile, keyFile);
        this.#fromFiles.set(key, identity);
      }
      return Promise.resolve(identity);
    }
    this.#generated ??= generateDtlsIdentity();
    return this.#generated;
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
