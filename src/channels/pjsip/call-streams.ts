// The RTP streams of SIP calls: a socket pair from sip's RTP port range per call, wired to the
// core's media clock and the settings (strict RTP, RTCP interval, jitter buffer; the endpoint's
// rtp_symmetric), with the totals GET /metrics reads and the strict-RTP warnings bounded over all
// calls. With media workers (media.workers > 0) a plain-RTP call's stream runs in one of them
// (src/media/workers/), Opus calls too (media.worker_opus, opus-placement.ts), SDES-SRTP calls
// (their keys cross to the worker, worker-srtp.ts) and WebRTC calls (ICE-lite and SRTP there, the
// DTLS handshake here: remote-secure-media.ts); a server on a hand-driven clock keeps them all on
// this thread. A call whose worker dies is hung up (cause 38,
// network out of order).
import type dgram from 'node:dgram';
import { RtpPortRange } from '../../media/rtp/port-range.ts';
import { RtpStream, RtpStreamTotals, type StreamClock } from '../../media/rtp/stream.ts';
import type { SipCall } from './call.ts';
import type { PjsipRuntime } from './runtime.ts';
import { LogThrottle } from '../../util/log-throttle.ts';
import { generateDtlsIdentity, readDtlsIdentity, type DtlsIdentity } from '../../media/webrtc/dtls-identity.ts';
import { SecureMediaSocket, type SecureMediaOptions } from '../../media/webrtc/secure-media-socket.ts';
import { RemoteSecureMedia } from '../../media/workers/remote-secure-media.ts';
import type { MediaSocket } from '../../media/rtp/media-socket.ts';
import type { CallRtpStream } from '../../media/rtp/call-stream.ts';
import { MediaWorkerPool, type WorkerLoad } from '../../media/workers/pool.ts';
import type { WorkerStreamOptions } from '../../media/workers/protocol.ts';
import { mayAgreeOnOpus } from './opus-placement.ts';
import { OPUS_LINEAR_RATE } from '../../media/stream-coder.ts';
import type { SampleRate } from '../../media/frame.ts';
import type { SdpCodec } from '../../sip/sdp/offer-answer.ts';

/** Strict-RTP stranger warnings: at most this many lines per window; the rest are counted into the next line. */
const STRANGER_WARNINGS_PER_WINDOW = 10;
const STRANGER_WARNING_WINDOW_MS = 60_000;

/** Cause 38 (network out of order): a call whose media worker died. */
const WORKER_LOST_CAUSE = 38;

export class CallStreams {
  readonly #totals = new RtpStreamTotals();
  /** The media workers, while the technology runs with some. */
  #pool: MediaWorkerPool | undefined;
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

  /** What every call's media dropped and concealed since start (GET /metrics); the workers' streams' counts brought in first. */
  get totals(): RtpStreamTotals {
    this.#pool?.syncTotals();
    return this.#totals;
  }

  /** The media workers, while the technology runs with some. */
  get pool(): MediaWorkerPool | undefined {
    return this.#pool;
  }

  /** Each media worker's load (GET /metrics); none without workers. */
  workerLoads(): WorkerLoad[] {
    return this.#pool?.loads() ?? [];
  }

  /**
   * Where streams bind, at start: the local address and sip's RTP port range; and the media
   * workers to start (none: every stream on this thread).
   */
  configure(host: string, ports: RtpPortRange, workers = 0): void {
    this.#host = host;
    this.#ports = ports;
    const media = this.#runtime.context?.media;
    // A hand-driven clock (tests) cannot pace a worker's: streams stay here.
    if (workers > 0 && media && !media.clock.manual && !this.#pool) {
      this.#pool = new MediaWorkerPool({
        size: workers,
        clock: this.#clock(),
        onWorkerExit: (index, reason, lost) =>
          this.#runtime.log?.error({ worker: index, reason, calls: lost }, `media worker ${index} died (${reason}): its ${lost} call(s) hang up with cause ${WORKER_LOST_CAUSE}; the worker restarts`),
      });
    }
  }

  /** Stops the media workers (the technology stops; its calls have been hung up). */
  async stop(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.stop();
  }

  #clock(): StreamClock {
    const media = this.#runtime.context!.media;
    return { get ticks() { return media.clock.ticks; }, get skippedTicks() { return media.clock.skippedTicks; }, get catchingUp() { return media.clock.catchingUp; }, onTick: (listener: () => void) => media.onTick(listener), offTick: (listener: () => void) => media.offTick(listener) };
  }

  /** Where the call's sockets bind: the endpoint's media_address with bind_rtp_to_media_address (res_pjsip_sdp_rtp's create_rtp), else the SIP bind address. */
  #bindHost(call: SipCall): string {
    const { bindRtpToMediaAddress, mediaAddress } = call.options;
    return bindRtpToMediaAddress === true && mediaAddress !== undefined ? mediaAddress : this.#host;
  }

  /** The technology's stream settings (the endpoint's rtp_symmetric). */
  #streamOptions(call: SipCall): WorkerStreamOptions {
    const sip = this.#runtime.context!.config.sip;
    return {
      rtcpIntervalMs: sip.rtcpIntervalMs,
      strictRtp: sip.strictRtp,
      probation: sip.rtpProbation,
      symmetric: call.options.rtpSymmetric === true,
      ...(sip.jitterbuffer ? { jitterBuffer: { minDelayMs: sip.jitterbufferMinDelayMs, maxDelayMs: sip.jitterbufferMaxDelayMs } } : {}),
    };
  }

  async open(call: SipCall): Promise<CallRtpStream> {
    // SDES-SRTP runs in the worker, keyed at each offer/answer; so do WebRTC's ICE-lite and SRTP,
    // its DTLS handshake staying here. A call that may agree on Opus goes to a worker unless
    // media.worker_opus is off: a worker codes Opus with its WebAssembly build (pool.ts says why),
    // about 1.6 times the CPU of the native one here.
    const opusHere = this.#runtime.context?.config.media.workerOpus === false && mayAgreeOnOpus({ codecs: call.codecs, inboundOffer: call.inboundInvite?.body });
    const offloadable = !opusHere;
    const secure = this.#pool && offloadable && call.options.mediaEncryption === 'dtls' ? await this.#remoteSecure(call) : undefined;
    const opening = this.#pool && offloadable ? this.#openInWorker(this.#pool, call, secure) : undefined;
    if (opening) {
      try {
        return await opening;
      } catch (error) {
        this.#runtime.log?.warn({ channel: call.channel?.name, err: error }, 'no media worker could take the call\'s stream; it runs on the main thread');
      }
    }
    secure?.close();
    return this.#openHere(call);
  }

  /** Undefined when no worker is ready (starting, or restarting after a crash). */
  #openInWorker(pool: MediaWorkerPool, call: SipCall, secure: RemoteSecureMedia | undefined): Promise<CallRtpStream> | undefined {
    return pool.open({
      ...(secure ? { secure } : {}),
      host: this.#bindHost(call),
      portStart: this.#ports.start,
      portEnd: this.#ports.end,
      options: this.#streamOptions(call),
      maxReceiveRate: highestAudioRate(call.codecs),
      totals: this.#totals,
      ...(call.nearWorker === undefined ? {} : { nearWorker: call.nearWorker }),
      events: {
        onFrame: (frame) => call.deliver(frame),
        onDigit: (digit, ms) => call.digit(digit, ms),
        onStranger: (address, port) => this.#warnStranger(call, address, port),
        onUnanswered: (address, port) => this.#warnUnanswered(call, address, port),
        onClosed: (rtt) => {
          if (rtt !== undefined) this.#onRoundTrip(rtt);
        },
        onLost: (reason) => {
          this.#runtime.log?.error({ channel: call.channel?.name, reason }, `the call's media was lost (${reason}); hanging up with cause ${WORKER_LOST_CAUSE}`);
          if (call.channel && !call.channel.hangingUp) call.channel.hangup(WORKER_LOST_CAUSE);
        },
      },
    });
  }

  async #openHere(call: SipCall): Promise<RtpStream> {
    const sockets = await this.#ports.bindPair(this.#bindHost(call));
    const clock = this.#clock();
    const socket = call.options.mediaEncryption === 'dtls' ? await this.#secure(call, sockets.rtp) : sockets.rtp;
    const stream: RtpStream = new RtpStream(socket, clock, {
      onFrame: (frame) => call.deliver(frame),
      onDigit: (digit, ms) => call.digit(digit, ms),
      onStranger: (address, port) => this.#warnStranger(call, address, port),
      onUnanswered: (address, port) => this.#warnUnanswered(call, address, port),
      onClosed: () => {
        if (stream.rtcp.rttSpread.count > 0) this.#onRoundTrip(stream.rtcp.rtt);
      },
    }, { ...this.#streamOptions(call), totals: this.#totals, rtcpSocket: sockets.rtcp });
    return stream;
  }

  #warnUnanswered(call: SipCall, address: string, port: number): void {
    this.#unansweredLog.run((suppressed) =>
      this.#runtime.log?.warn(
        { channel: call.channel?.name, media: `${address}:${port}`, ...(suppressed > 0 ? { suppressed } : {}) },
        'RTP sending paused: nothing came back from a media address that is not the caller\'s signalling address',
      ),
    );
  }

  /**
   * The socket of a DTLS-SRTP call (webrtc=yes): ICE-lite checks, the handshake and SRTP beneath
   * the stream. A failure to secure the media ends the call (cause 58, as bearer capability not available).
   */
  async #secure(call: SipCall, raw: dgram.Socket): Promise<MediaSocket> {
    let identity: DtlsIdentity;
    try {
      identity = await this.#identity(call.options.dtlsCertFile, call.options.dtlsPrivateKey);
    } catch (error) {
      raw.close();
      throw error;
    }
    return new SecureMediaSocket(raw, identity, this.#secureOptions(call));
  }

  /** The DTLS side of a WebRTC call whose stream is to run in a media worker (its certificate's problem throws, as #secure's). */
  async #remoteSecure(call: SipCall): Promise<RemoteSecureMedia> {
    const identity = await this.#identity(call.options.dtlsCertFile, call.options.dtlsPrivateKey);
    return new RemoteSecureMedia(identity, this.#secureOptions(call));
  }

  #secureOptions(call: SipCall): SecureMediaOptions {
    return {
      verifyFingerprint: call.options.dtlsVerify !== 'no',
      onFailure: (reason) => {
        this.#runtime.log?.warn({ channel: call.channel?.name, reason }, 'WebRTC media could not be secured; hanging up');
        if (call.channel && !call.channel.hangingUp) call.channel.hangup(58);
      },
    };
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

/** The linear audio rate each SDP codec is received at (stream-coder.ts: G.722 16 kHz, Opus 48 kHz). */
const AUDIO_RATE: Readonly<Record<SdpCodec, SampleRate>> = { ulaw: 8000, alaw: 8000, g722: 16000, opus: OPUS_LINEAR_RATE };

/**
 * The highest rate a call's stream may receive at: only the endpoint's codecs can be agreed, by
 * the first offer or any re-INVITE, so its worker memory's received slots are sized for them (a
 * G.711 call's 160 samples instead of 960: 13 KiB of shared memory a call).
 */
export function highestAudioRate(codecs: readonly SdpCodec[]): SampleRate {
  let rate: SampleRate = 8000;
  for (const codec of codecs) {
    const codecRate = AUDIO_RATE[codec] ?? 48000;
    if (codecRate > rate) rate = codecRate;
  }
  return rate;
}
