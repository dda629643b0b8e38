// External media over RTP (ARI `externalMedia` with encapsulation rtp, transport udp, connection
// type client): a `UnicastRTP/<host:port>-<n>` channel whose far end is a media server reached
// over a real UDP socket. What the channel is given to play (channel.write) leaves as RTP packets
// to the external host; RTP packets from that host become the channel's audio (channel.deliver).
//
// - The socket is bound at an ephemeral port on an address of the class of `http.bind` (loopback
//   by default, the wildcard when the interface listens everywhere, else that very address) and
//   connected to the external host, so the kernel drops datagrams from anyone else; the code
//   checks the sender too. The local address and port are the channel variables
//   UNICASTRTP_LOCAL_ADDRESS / UNICASTRTP_LOCAL_PORT (Asterisk's names) and local_address /
//   local_port, all reported in `channelvars`.
// - Sending: one packet per frame written (20 ms), encoded in the format (slin and slin16 are
//   big-endian, as RTP L16), resampled when the frame's rate is not the format's. Payload types:
//   ulaw 0, alaw 8, slin16 118, slin 119 (the last two dynamic). The timestamp advances by the
//   samples of each packet and, after media-clock ticks without a frame, by the gap too; the
//   marker bit is set on the first packet and on the first after a gap.
// - Receiving: packets of the format's payload type are decoded into a queue and delivered one
//   20 ms frame per media clock tick, whatever duration the packets carry (the shared receive
//   queue of external-media-common.ts: at most a second, with drift control).
// - direction `in` only receives (nothing is sent), `out` only sends (received audio is counted
//   in the statistics but not delivered), `both` does both.
// - Statistics follow RFC 3550: loss from the extended sequence numbers (A.3), interarrival jitter
//   (A.8, reported in seconds as Asterisk does). No RTCP is sent or read, so the figures the far
//   end would report (txploss, txjitter, rtt) stay 0.
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { Channel } from '../core/channels/channel.ts';
import type { ChannelDriver } from '../core/channels/technology.ts';
import { InvalidError } from '../core/errors.ts';
import type { MediaEngine } from '../core/media-engine.ts';
import { getCodec, type Codec } from '../media/codecs.ts';
import { samplesPerFrame, type Frame, type SampleRate } from '../media/frame.ts';
import {
  enterApplication,
  isExternalMediaFormat,
  OutgoingRate,
  parseHostPort,
  ReceiveQueue,
  resolveTarget,
  SessionTable,
  type ExternalMediaDirection,
  type ExternalMediaFormat,
  type ExternalMediaOptions,
  type ExternalMediaRequest,
} from './external-media-common.ts';

/** RTP payload types: the static ones of RFC 3551 for G.711, dynamic ones for linear audio. */
export const RTP_PAYLOAD_TYPES: Readonly<Record<ExternalMediaFormat, number>> = { ulaw: 0, alaw: 8, slin16: 118, slin: 119 };

export const RTP_HEADER_BYTES = 12;
const RTP_VERSION = 2;
/** RFC 3550 A.1: sequence jumps and misorder tolerated before a source is considered restarted. */
const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;
const SEQ_MOD = 0x10000;

export interface RtpStatistics {
  txcount: number;
  rxcount: number;
  txoctetcount: number;
  rxoctetcount: number;
  txploss: number;
  rxploss: number;
  local_ssrc: number;
  remote_ssrc: number;
  txjitter: number;
  rxjitter: number;
  local_maxjitter: number;
  local_minjitter: number;
  local_normdevjitter: number;
  local_stdevjitter: number;
  remote_maxjitter: number;
  remote_minjitter: number;
  remote_normdevjitter: number;
  remote_stdevjitter: number;
  local_maxrxploss: number;
  local_minrxploss: number;
  local_normdevrxploss: number;
  local_stdevrxploss: number;
  remote_maxrxploss: number;
  remote_minrxploss: number;
  remote_normdevrxploss: number;
  remote_stdevrxploss: number;
  rtt: number;
  maxrtt: number;
  minrtt: number;
  normdevrtt: number;
  stdevrtt: number;
  channel_uniqueid: string;
}

// ---- payload coding ------------------------------------------------------------------------------

function encodeS16be(src: Int16Array, dst: Uint8Array): number {
  for (let i = 0, byte = 0; i < src.length; i++, byte += 2) {
    const sample = src[i];
    dst[byte] = (sample >> 8) & 0xff;
    dst[byte + 1] = sample & 0xff;
  }
  return src.length * 2;
}

function decodeS16be(src: Uint8Array, dst: Int16Array): number {
  const count = src.length >> 1;
  for (let i = 0, byte = 0; i < count; i++, byte += 2) dst[i] = ((src[byte] << 24) | (src[byte + 1] << 16)) >> 16;
  return count;
}

interface PayloadCoder {
  readonly rate: SampleRate;
  readonly bytesPerSample: 1 | 2;
  encode(src: Int16Array, dst: Uint8Array): number;
  decode(src: Uint8Array, dst: Int16Array): number;
}

function payloadCoder(format: ExternalMediaFormat): PayloadCoder {
  const codec = getCodec(format) as Codec;
  if (codec.bytesPerSample === 1) return codec;
  return { rate: codec.rate, bytesPerSample: 2, encode: encodeS16be, decode: decodeS16be };
}

// ---- the socket --------------------------------------------------------------------------------

/** Binds an ephemeral port and connects it to the remote; `opening` holds the socket meanwhile. */
function openSocket(bindAddress: string, family: 4 | 6, remote: { address: string; port: number }, opening: Set<dgram.Socket>): Promise<dgram.Socket> {
  const socket = dgram.createSocket({ type: family === 4 ? 'udp4' : 'udp6' });
  opening.add(socket);
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void => {
      opening.delete(socket);
      socket.removeAllListeners();
      try {
        socket.close();
      } catch {
        // Already closed.
      }
      reject(error);
    };
    const closedMeanwhile = (): void => fail(new InvalidError('The server is shutting down'));
    socket.once('error', fail);
    socket.once('close', closedMeanwhile);
    socket.bind(0, bindAddress, () => {
      socket.connect(remote.port, remote.address, (error?: Error) => {
        if (error) return fail(new InvalidError(`external_host: cannot send to ${remote.address}:${remote.port} (${(error as NodeJS.ErrnoException).code ?? error.message})`));
        opening.delete(socket);
        socket.off('error', fail);
        socket.off('close', closedMeanwhile);
        resolve(socket);
      });
    });
  });
}

// ---- statistics ----------------------------------------------------------------------------------

/** Running min/max/mean/standard deviation (Welford). */
class Spread {
  count = 0;
  min = 0;
  max = 0;
  mean = 0;
  private m2 = 0;

  add(value: number): void {
    this.count += 1;
    if (this.count === 1 || value < this.min) this.min = value;
    if (this.count === 1 || value > this.max) this.max = value;
    const delta = value - this.mean;
    this.mean += delta / this.count;
    this.m2 += delta * (value - this.mean);
  }

  get stdev(): number {
    return this.count > 1 ? Math.sqrt(this.m2 / (this.count - 1)) : 0;
  }
}

/** RFC 3550 A.1/A.3/A.8 receiver state for one source. */
class ReceiverStats {
  ssrc = 0;
  packets = 0;
  octets = 0;
  private started = false;
  private baseSeq = 0;
  private maxSeq = 0;
  private cycles = 0;
  private badSeq = SEQ_MOD + 1;
  /** Packets counted since the source (re)started. */
  private received = 0;
  private haveTransit = false;
  private lastArrival = 0;
  private lastTimestamp = 0;
  /** RFC 3550 jitter, in timestamp units. */
  private jitter = 0;
  readonly jitterSpread = new Spread();

  constructor(private readonly rate: number) {}

  /** Accounts for one packet from the source. */
  update(ssrc: number, seq: number, timestamp: number, payloadBytes: number, arrivalMs: number): void {
    this.packets += 1;
    this.octets += payloadBytes;
    if (!this.started || ssrc !== this.ssrc) {
      this.restart(ssrc, seq);
    } else {
      const delta = (seq - this.maxSeq + SEQ_MOD) % SEQ_MOD;
      if (delta < MAX_DROPOUT) {
        if (seq < this.maxSeq) this.cycles += SEQ_MOD;
        this.maxSeq = seq;
      } else if (delta <= SEQ_MOD - MAX_MISORDER) {
        // A very large jump: accept it only when the next packet follows it (the sender restarted).
        if (seq === this.badSeq) this.restart(ssrc, seq);
        else this.badSeq = (seq + 1) % SEQ_MOD;
      }
      // Otherwise a duplicate or misordered packet: counted, no change to the sequence state.
    }
    this.received += 1;
    const arrival = (arrivalMs * this.rate) / 1000;
    if (this.haveTransit) {
      // D(i-1,i) = (R_i - R_{i-1}) - (S_i - S_{i-1}); the timestamp difference as a signed 32-bit value.
      const d = arrival - this.lastArrival - ((timestamp - this.lastTimestamp) | 0);
      this.jitter += (Math.abs(d) - this.jitter) / 16;
      this.jitterSpread.add(this.jitter / this.rate);
    }
    this.haveTransit = true;
    this.lastArrival = arrival;
    this.lastTimestamp = timestamp;
  }

  private restart(ssrc: number, seq: number): void {
    this.started = true;
    this.ssrc = ssrc;
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.cycles = 0;
    this.badSeq = SEQ_MOD + 1;
    this.received = 0;
    this.haveTransit = false;
    this.jitter = 0;
  }

  get lost(): number {
    if (!this.started) return 0;
    const expected = this.cycles + this.maxSeq - this.baseSeq + 1;
    return Math.max(0, expected - this.received);
  }

  /** Interarrival jitter in seconds. */
  get jitterSeconds(): number {
    return this.jitter / this.rate;
  }
}

// ---- the session: one channel's socket, coding and statistics ------------------------------------

/** The far end of a UnicastRTP channel: its socket and what crosses it. */
export class RtpSession implements ChannelDriver {
  channel!: Channel;
  readonly localAddress: string;
  readonly localPort: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly payloadType: number;
  readonly localSsrc = randomInt(0, 0x1_0000_0000);
  private readonly coder: PayloadCoder;
  private readonly frameSamples: number;
  private readonly sendEnabled: boolean;
  private readonly receiveEnabled: boolean;
  private closed = false;

  // sending
  private sequence = randomInt(0, SEQ_MOD);
  private timestamp = randomInt(0, 0x1_0000_0000);
  private lastSendTick: number | undefined;
  private readonly outgoing: OutgoingRate;
  txPackets = 0;
  txOctets = 0;

  // receiving
  private readonly receiver: ReceiverStats;
  private readonly queue: ReceiveQueue;

  constructor(
    private readonly socket: dgram.Socket,
    private readonly media: MediaEngine,
    format: ExternalMediaFormat,
    direction: ExternalMediaDirection,
    private readonly onClose: (session: RtpSession) => void,
    private readonly log?: ExternalMediaOptions['log'],
  ) {
    const local = socket.address();
    const remote = socket.remoteAddress();
    this.localAddress = local.address;
    this.localPort = local.port;
    this.remoteAddress = remote.address;
    this.remotePort = remote.port;
    this.payloadType = RTP_PAYLOAD_TYPES[format];
    this.coder = payloadCoder(format);
    this.frameSamples = samplesPerFrame(this.coder.rate);
    this.sendEnabled = direction !== 'in';
    this.receiveEnabled = direction !== 'out';
    this.outgoing = new OutgoingRate(this.coder.rate);
    this.receiver = new ReceiverStats(this.coder.rate);
    this.queue = new ReceiveQueue(this.coder.rate);
  }

  attach(channel: Channel): void {
    this.channel = channel;
    this.socket.on('message', this.onMessage);
    // An unreachable peer (ICMP port unreachable) surfaces as errors on a connected socket: not fatal.
    this.socket.on('error', this.onError);
    this.media.onTick(this.tick);
    // However the channel goes (even without asking its driver), the socket goes with it.
    channel.once('hangup', () => this.close());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.media.offTick(this.tick);
    this.socket.off('message', this.onMessage);
    try {
      this.socket.close();
    } catch {
      // Already closed.
    }
    this.onClose(this);
  }

  statistics(): RtpStatistics {
    const jitter = this.receiver.jitterSpread;
    return {
      txcount: this.txPackets,
      rxcount: this.receiver.packets,
      txoctetcount: this.txOctets,
      rxoctetcount: this.receiver.octets,
      txploss: 0,
      rxploss: this.receiver.lost,
      local_ssrc: this.localSsrc,
      remote_ssrc: this.receiver.ssrc,
      txjitter: 0,
      rxjitter: this.receiver.jitterSeconds,
      local_maxjitter: jitter.max,
      local_minjitter: jitter.min,
      local_normdevjitter: jitter.mean,
      local_stdevjitter: jitter.stdev,
      remote_maxjitter: 0,
      remote_minjitter: 0,
      remote_normdevjitter: 0,
      remote_stdevjitter: 0,
      local_maxrxploss: 0,
      local_minrxploss: 0,
      local_normdevrxploss: 0,
      local_stdevrxploss: 0,
      remote_maxrxploss: 0,
      remote_minrxploss: 0,
      remote_normdevrxploss: 0,
      remote_stdevrxploss: 0,
      rtt: 0,
      maxrtt: 0,
      minrtt: 0,
      normdevrtt: 0,
      stdevrtt: 0,
      channel_uniqueid: this.channel.id,
    };
  }

  private readonly onError = (error: Error): void => {
    this.log?.debug({ err: error, channel: this.channel?.name }, 'external media socket error');
  };

  // ---- towards the external host ---------------------------------------------------------------

  private nextTimestamp(): { timestamp: number; marker: boolean } {
    const tick = this.media.clock.ticks;
    const last = this.lastSendTick;
    this.lastSendTick = tick;
    if (last === undefined) return { timestamp: this.timestamp, marker: true };
    // Ticks that passed without a frame advance the timestamp as much as the audio they did not carry.
    const gap = tick - last - 1;
    this.timestamp = (this.timestamp + this.frameSamples * (1 + Math.max(0, gap))) >>> 0;
    return { timestamp: this.timestamp, marker: gap > 0 };
  }

  private send(samples: Int16Array): void {
    const payloadBytes = samples.length * this.coder.bytesPerSample;
    // A fresh buffer per packet: the socket may still hold the previous one while it is sent.
    const packet = Buffer.allocUnsafe(RTP_HEADER_BYTES + payloadBytes);
    const { timestamp, marker } = this.nextTimestamp();
    packet[0] = RTP_VERSION << 6;
    packet[1] = (marker ? 0x80 : 0) | this.payloadType;
    packet.writeUInt16BE(this.sequence, 2);
    packet.writeUInt32BE(timestamp, 4);
    packet.writeUInt32BE(this.localSsrc, 8);
    this.coder.encode(samples, packet.subarray(RTP_HEADER_BYTES));
    this.sequence = (this.sequence + 1) % SEQ_MOD;
    this.txPackets += 1;
    this.txOctets += payloadBytes;
    this.socket.send(packet, this.onSent);
  }

  private readonly onSent = (error: Error | null): void => {
    if (error) this.onError(error);
  };

  // ---- from the external host ------------------------------------------------------------------

  private readonly onMessage = (message: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.closed || rinfo.port !== this.remotePort || rinfo.address !== this.remoteAddress) return;
    if (message.length < RTP_HEADER_BYTES || message[0] >> 6 !== RTP_VERSION) return;
    const csrcCount = message[0] & 0x0f;
    let offset = RTP_HEADER_BYTES + csrcCount * 4;
    if (message[0] & 0x10) {
      // Header extension: 16-bit profile field, 16-bit length in 32-bit words.
      if (message.length < offset + 4) return;
      offset += 4 + message.readUInt16BE(offset + 2) * 4;
    }
    let end = message.length;
    if (message[0] & 0x20) end -= message[message.length - 1];
    if (end < offset) return;
    const payloadType = message[1] & 0x7f;
    const seq = message.readUInt16BE(2);
    const timestamp = message.readUInt32BE(4);
    const ssrc = message.readUInt32BE(8);
    this.receiver.update(ssrc, seq, timestamp, end - offset, performance.now());
    if (payloadType !== this.payloadType || !this.receiveEnabled) return;
    this.enqueue(message.subarray(offset, end));
  };

  private enqueue(payload: Uint8Array): void {
    const count = Math.floor(payload.length / this.coder.bytesPerSample);
    if (count === 0) return;
    const samples = this.queue.scratch(count);
    this.coder.decode(payload.subarray(0, count * this.coder.bytesPerSample), samples);
    this.queue.push(samples.subarray(0, count));
  }

  private readonly tick = (): void => {
    if (this.closed || this.channel.hangingUp) return;
    const frame = this.queue.next();
    if (frame) this.channel.deliver(frame);
  };

  // ---- ChannelDriver -----------------------------------------------------------------------------

  call(): void {}

  answer(): void {}

  hangup(): void {
    this.close();
  }

  indicate(): void {}

  sendDigit(): void {}

  writeFrame(frame: Frame): void {
    if (this.closed || !this.sendEnabled) return;
    this.send(this.outgoing.samples(frame));
  }
}

// ---- the technology ------------------------------------------------------------------------------

/** Makes UnicastRTP channels and keeps their sessions. */
export class ExternalMediaTechnology {
  readonly name = 'UnicastRTP';
  readonly description = 'Unicast RTP Media Channel Driver';
  private readonly sessions = new SessionTable<RtpSession>();
  /** Sockets being set up, closed by closeAll() too. */
  private readonly opening = new Set<dgram.Socket>();
  private shutDown = false;

  constructor(private readonly options: ExternalMediaOptions) {}

  /** Sessions with an open socket. */
  get size(): number {
    return this.sessions.size;
  }

  session(channel: Channel): RtpSession | undefined {
    return this.sessions.get(channel);
  }

  /**
   * Opens the socket, creates the channel (Up), sets the local address variables and the request's
   * variables, and puts it into the application (StasisStart). InvalidError for a bad host or
   * format, ConflictError for a channel id in use. When the application is not active the channel
   * is hung up at once, as a channel originated into an inactive application is.
   */
  async create(request: ExternalMediaRequest): Promise<Channel> {
    const { channels, media, log } = this.options;
    if (this.shutDown) throw new InvalidError('The server is shutting down');
    if (!parseHostPort(request.externalHost)) throw new InvalidError('external_host must be <host>:<port>');
    if (!isExternalMediaFormat(request.format)) throw new InvalidError(`Unsupported format: ${String(request.format)}`);
    channels.checkId(request.channelId);

    const target = await resolveTarget(request.externalHost, this.options.httpBind, 'RTP is sent');
    const socket = await openSocket(target.bindAddress, target.family, target, this.opening);
    if (this.shutDown) {
      socket.close();
      throw new InvalidError('The server is shutting down');
    }

    let channel: Channel;
    const session = new RtpSession(socket, media, request.format, request.direction, (closed) => this.forget(closed), log);
    try {
      // The id may have been taken while the socket was opening.
      channel = channels.create({
        id: request.channelId || undefined,
        name: `UnicastRTP/${request.externalHost}-${channels.newNameSuffix()}`,
        technology: this.name,
        direction: 'outbound',
        state: 'Up',
      });
    } catch (error) {
      socket.close();
      throw error;
    }
    channel.driver = session;
    session.attach(channel);
    this.sessions.add(session);

    const address = session.localAddress;
    const port = String(session.localPort);
    enterApplication(this.options, channel, request, {
      UNICASTRTP_LOCAL_ADDRESS: address,
      UNICASTRTP_LOCAL_PORT: port,
      local_address: address,
      local_port: port,
    });
    return channel;
  }

  /** Server shutdown: every socket closes (channels hanging up have closed theirs already). */
  closeAll(): void {
    this.shutDown = true;
    this.sessions.closeAll();
    for (const socket of this.opening) {
      try {
        socket.close();
      } catch {
        // Already closed.
      }
    }
    this.opening.clear();
  }

  private forget(session: RtpSession): void {
    this.sessions.forget(session);
  }
}
