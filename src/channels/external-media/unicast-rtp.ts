// External media over RTP (ARI `externalMedia` with encapsulation rtp, transport udp, connection
// type client): a `UnicastRTP/<host:port>-<n>` channel whose far end is a media server reached
// over a real UDP socket. What the channel is given to play (channel.write) leaves as RTP packets
// to the external host; RTP packets from that host become the channel's audio (channel.deliver).
//
// - The socket is bound at an ephemeral port on an address of the class of `http.bind` and
//   connected to the external host, so the kernel drops datagrams from anyone else; the code
//   checks the sender too. The local address and port are the channel variables
//   UNICASTRTP_LOCAL_ADDRESS / UNICASTRTP_LOCAL_PORT (Asterisk's names) and local_address /
//   local_port, all reported in `channelvars`.
// - Sending: one packet per frame written (20 ms), coded as the codec table says (slin and slin16
//   big-endian, as RTP L16; payload types ulaw 0, alaw 8, slin16 118, slin 119), resampled when
//   the frame's rate is not the format's. Timestamps follow the media clock (src/media/rtp/sender.ts).
// - Receiving: packets of the format's payload type are decoded into the receive queue and
//   delivered one 20 ms frame per media clock tick, whatever duration the packets carry.
// - direction `in` only receives (nothing is sent), `out` only sends (received audio is counted
//   in the statistics but not delivered), `both` does both.
// - Statistics follow RFC 3550 (src/media/rtp/receiver-stats.ts). No RTCP is sent or read, so the
//   figures the far end would report (txploss, txjitter, rtt) stay 0.
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { Channel } from '../../core/channels/channel.ts';
import type { ExternalMediaRequest, TechnologyContext } from '../../core/channels/technology.ts';
import { InvalidError } from '../../core/errors.ts';
import { PlainReceivePath, receiveRtpAudio } from '../../media/rtp/audio-receive.ts';
import { parseRtpPacket, RtpHeader } from '../../media/rtp/packet.ts';
import { RtpPayloadCoder } from '../../media/rtp/payload.ts';
import { closeQuietly } from '../../media/rtp/port-range.ts';
import { RtpReceiverStats } from '../../media/rtp/receiver-stats.ts';
import { RtpSender } from '../../media/rtp/sender.ts';
import { rtpStatistics, type RtpStatistics } from '../../media/rtp/statistics.ts';
import type { ExternalTarget } from './address.ts';
import { MediaSession, type SessionOptions } from './external-session.ts';
import { ExternalMediaTechnology } from './technology.ts';

/** Binds an ephemeral port and connects it to the remote; `opening` holds the socket meanwhile. */
function openSocket(target: ExternalTarget, opening: Set<dgram.Socket>): Promise<dgram.Socket> {
  const socket = dgram.createSocket({ type: target.family === 4 ? 'udp4' : 'udp6' });
  opening.add(socket);
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void => {
      opening.delete(socket);
      socket.removeAllListeners();
      closeQuietly(socket);
      reject(error);
    };
    const closedMeanwhile = (): void => fail(new InvalidError('The server is shutting down'));
    socket.once('error', fail);
    socket.once('close', closedMeanwhile);
    socket.bind(0, target.bindAddress, () => {
      socket.connect(target.port, target.address, (error?: Error) => {
        if (error) return fail(new InvalidError(`external_host: cannot send to ${target.address}:${target.port} (${(error as NodeJS.ErrnoException).code ?? error.message})`));
        opening.delete(socket);
        socket.off('error', fail);
        socket.off('close', closedMeanwhile);
        resolve(socket);
      });
    });
  });
}

/** The far end of a UnicastRTP channel: its socket and what crosses it. */
export class RtpSession extends MediaSession {
  readonly localAddress: string;
  readonly localPort: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly #socket: dgram.Socket;
  readonly #coder: RtpPayloadCoder;
  readonly #sender: RtpSender;
  readonly #receiver: RtpReceiverStats;
  readonly #header = new RtpHeader();
  /** The session's receive queue, as the shared RTP decoding fills it. */
  readonly #receivePath: PlainReceivePath;

  constructor(options: SessionOptions & { readonly socket: dgram.Socket; readonly coder: RtpPayloadCoder }) {
    super(options);
    const { socket, coder } = options;
    this.#socket = socket;
    this.#coder = coder;
    const local = socket.address();
    const remote = socket.remoteAddress();
    this.localAddress = local.address;
    this.localPort = local.port;
    this.remoteAddress = remote.address;
    this.remotePort = remote.port;
    this.#sender = new RtpSender(coder);
    this.#receiver = new RtpReceiverStats(coder.codec.clockRate);
    this.#receivePath = new PlainReceivePath(this.queue);
  }

  get payloadType(): number {
    return this.#coder.payloadType;
  }

  get localSsrc(): number {
    return this.#sender.ssrc;
  }

  protected open(): void {
    this.#socket.on('message', this.#onMessage);
    // An unreachable peer (ICMP port unreachable) surfaces as errors on a connected socket: not fatal.
    this.#socket.on('error', this.#onError);
  }

  protected closeTransport(): void {
    this.#socket.off('message', this.#onMessage);
    closeQuietly(this.#socket);
  }

  statistics(): RtpStatistics {
    return rtpStatistics(this.#sender, this.#receiver);
  }

  nativeFormat(): string {
    return this.#coder.codec.name;
  }

  rtpStatistics(): RtpStatistics | undefined {
    return this.isClosed ? undefined : this.statistics();
  }

  readonly #onError = (error: Error): void => {
    this.log.debug({ err: error, channel: this.channel.name }, 'external media socket error');
  };

  protected send(samples: Int16Array): void {
    const length = this.#sender.audio(samples, this.media.clock.ticks);
    this.#socket.send(this.#sender.packet, 0, length, this.#onSent);
  }

  readonly #onSent = (error: Error | null): void => {
    if (error) this.#onError(error);
  };

  readonly #onMessage = (message: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.isClosed || rinfo.port !== this.remotePort || rinfo.address !== this.remoteAddress) return;
    const header = this.#header;
    if (!parseRtpPacket(message, message.length, header)) return;
    const now = performance.now();
    this.#receiver.count(header, now);
    if (header.payloadType !== this.#coder.payloadType || !this.receiveEnabled) return;
    receiveRtpAudio(this.#coder, message, header, this.#receivePath, now);
  };
}

/** Makes UnicastRTP channels (`chan_rtp.so`) and keeps their sessions. */
export class UnicastRtpTechnology extends ExternalMediaTechnology<dgram.Socket, RtpSession> {
  constructor() {
    super({
      name: 'UnicastRTP',
      description: 'Unicast RTP Media Channel Driver',
      module: { name: 'chan_rtp.so', description: 'RTP Media Channel' },
      encapsulation: 'rtp',
      transport: 'udp',
      reaching: 'RTP is sent',
    });
  }

  protected openTransport(target: ExternalTarget): Promise<dgram.Socket> {
    return openSocket(target, this.opening);
  }

  protected disposeTransport(socket: dgram.Socket): void {
    closeQuietly(socket);
  }

  protected channelName(request: ExternalMediaRequest, context: TechnologyContext): string {
    // Asterisk's chan_rtp prints the address of the RTP instance (`%p`, `0x…`): unique among the
    // live channels and meaningless beyond; this prints the technology's own count in that form.
    return `UnicastRTP/${request.externalHost}-0x${context.channels.newNameSuffix('UnicastRTP')}`;
  }

  protected createSession(channel: Channel, socket: dgram.Socket, request: ExternalMediaRequest, context: TechnologyContext, onClose: (session: MediaSession) => void): RtpSession {
    const coder = new RtpPayloadCoder(request.format);
    return new RtpSession({ channel, media: context.media, rate: coder.rate, direction: request.direction, log: context.log, onClose, socket, coder });
  }

  protected variables(session: RtpSession): Record<string, string> {
    const address = session.localAddress;
    const port = String(session.localPort);
    return { UNICASTRTP_LOCAL_ADDRESS: address, UNICASTRTP_LOCAL_PORT: port, local_address: address, local_port: port };
  }
}
