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
//   20 ms frame per media clock tick, whatever duration the packets carry. The queue holds at
//   most a second (the oldest audio goes first); a queue that never drains below three frames
//   for five seconds (a sender whose clock runs fast) loses a frame so latency does not creep up.
// - direction `in` only receives (nothing is sent), `out` only sends (received audio is counted
//   in the statistics but not delivered), `both` does both.
// - Statistics follow RFC 3550: loss from the extended sequence numbers (A.3), interarrival jitter
//   (A.8, reported in seconds as Asterisk does). No RTCP is sent or read, so the figures the far
//   end would report (txploss, txjitter, rtt) stay 0.
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Applications } from '../core/applications.ts';
import { CAUSE } from '../core/channels/causes.ts';
import type { Channel } from '../core/channels/channel.ts';
import type { Channels } from '../core/channels/channels.ts';
import { applyVariables, splitAppArgs, type VariableAssignment } from '../core/channels/originate.ts';
import type { ChannelDriver } from '../core/channels/technology.ts';
import { InvalidError } from '../core/errors.ts';
import type { MediaEngine } from '../core/media-engine.ts';
import type { Stasis } from '../core/stasis.ts';
import { getCodec, type Codec } from '../media/codecs.ts';
import { samplesPerFrame, type Frame, type SampleRate } from '../media/frame.ts';
import { createResampler, type Resampler } from '../media/resample.ts';

export type ExternalMediaFormat = 'ulaw' | 'alaw' | 'slin' | 'slin16';
export type ExternalMediaDirection = 'both' | 'in' | 'out';

export const EXTERNAL_MEDIA_FORMATS: readonly ExternalMediaFormat[] = ['ulaw', 'alaw', 'slin', 'slin16'];

/** RTP payload types: the static ones of RFC 3551 for G.711, dynamic ones for linear audio. */
export const RTP_PAYLOAD_TYPES: Readonly<Record<ExternalMediaFormat, number>> = { ulaw: 0, alaw: 8, slin16: 118, slin: 119 };

export function isExternalMediaFormat(name: string): name is ExternalMediaFormat {
  return (EXTERNAL_MEDIA_FORMATS as readonly string[]).includes(name);
}

export const RTP_HEADER_BYTES = 12;
const RTP_VERSION = 2;
/** The most audio waiting to be delivered. */
const MAX_QUEUED_FRAMES = 50;
/** A queue that stays at least this deep for DRIFT_WINDOW_TICKS loses one frame. */
const DRIFT_MIN_FRAMES = 3;
const DRIFT_WINDOW_TICKS = 250;
/** RFC 3550 A.1: sequence jumps and misorder tolerated before a source is considered restarted. */
const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;
const SEQ_MOD = 0x10000;

/** `host:port` or `[v6]:port`, port 1–65535; undefined when malformed. */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]\s/]+):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  const host = match[1];
  if (text.startsWith('[') && net.isIPv6(host) === false) return undefined;
  return { host, port };
}

export interface ExternalMediaRequest {
  readonly app: string;
  readonly appArgs?: string;
  /** `host:port` of the media server. */
  readonly externalHost: string;
  readonly format: ExternalMediaFormat;
  readonly direction: ExternalMediaDirection;
  readonly channelId?: string;
  readonly variables?: readonly VariableAssignment[];
}

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

export interface ExternalMediaOptions {
  readonly channels: Channels;
  readonly stasis: Stasis;
  readonly applications: Applications;
  readonly media: MediaEngine;
  /** The address the ARI interface listens on (`http.bind`); the RTP socket binds on its class. */
  readonly httpBind: string;
  readonly log?: { warn(details: Record<string, unknown>, message: string): void; debug(details: Record<string, unknown>, message: string): void };
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

// ---- addresses -----------------------------------------------------------------------------------

const isLoopbackAddress = (address: string): boolean =>
  address === '::1' || address.startsWith('127.') || address.toLowerCase().startsWith('::ffff:127.');

async function resolveRemote(host: string): Promise<{ address: string; family: 4 | 6 }> {
  const literal = net.isIP(host);
  if (literal) return { address: host, family: literal as 4 | 6 };
  try {
    const found = await lookup(host);
    return { address: found.address, family: found.family === 6 ? 6 : 4 };
  } catch {
    throw new InvalidError(`external_host: cannot resolve ${host}`);
  }
}

/** Where the socket binds: the class of http.bind (loopback, wildcard or that address) in the remote's family. */
async function bindAddressFor(httpBind: string, family: 4 | 6): Promise<string> {
  const bind = httpBind.trim();
  if (bind === '' || bind === 'localhost' || isLoopbackAddress(bind)) return family === 4 ? '127.0.0.1' : '::1';
  if (bind === '0.0.0.0' || bind === '::') return family === 4 ? '0.0.0.0' : '::';
  let address = bind;
  if (!net.isIP(bind)) {
    try {
      address = (await lookup(bind, { family })).address;
    } catch {
      throw new InvalidError(`external_host: no IPv${family} address to send from (http.bind is ${httpBind})`);
    }
  }
  if (net.isIP(address) !== family) throw new InvalidError(`external_host: an IPv${family} host cannot be reached from ${httpBind} (http.bind)`);
  return address;
}

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
  private readonly outSamples: Int16Array;
  private resampler: Resampler | undefined;
  txPackets = 0;
  txOctets = 0;

  // receiving
  private readonly receiver: ReceiverStats;
  private readonly queue: Int16Array;
  private queueRead = 0;
  private queueLength = 0;
  private scratch = new Int16Array(0);
  private readonly inFrame: Frame;
  private minDepthFrames = Number.POSITIVE_INFINITY;
  private ticksInWindow = 0;

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
    this.outSamples = new Int16Array(this.frameSamples);
    this.receiver = new ReceiverStats(this.coder.rate);
    this.queue = new Int16Array(this.frameSamples * MAX_QUEUED_FRAMES);
    this.inFrame = { rate: this.coder.rate, samples: new Int16Array(this.frameSamples) };
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
    if (this.scratch.length < count) this.scratch = new Int16Array(count);
    this.coder.decode(payload.subarray(0, count * this.coder.bytesPerSample), this.scratch);
    const capacity = this.queue.length;
    // Only the newest `capacity` samples can be kept; older queued audio makes room.
    const keep = Math.min(count, capacity);
    const source = this.scratch.subarray(count - keep, count);
    const overflow = this.queueLength + keep - capacity;
    if (overflow > 0) this.discard(overflow);
    let write = (this.queueRead + this.queueLength) % capacity;
    const first = Math.min(keep, capacity - write);
    this.queue.set(source.subarray(0, first), write);
    if (first < keep) this.queue.set(source.subarray(first), 0);
    write = (write + keep) % capacity;
    this.queueLength += keep;
  }

  private discard(samples: number): void {
    const dropped = Math.min(samples, this.queueLength);
    this.queueRead = (this.queueRead + dropped) % this.queue.length;
    this.queueLength -= dropped;
  }

  private readonly tick = (): void => {
    if (this.closed || this.channel.hangingUp) return;
    const size = this.frameSamples;
    if (this.queueLength >= size) {
      const capacity = this.queue.length;
      const first = Math.min(size, capacity - this.queueRead);
      const dst = this.inFrame.samples;
      dst.set(this.queue.subarray(this.queueRead, this.queueRead + first), 0);
      if (first < size) dst.set(this.queue.subarray(0, size - first), first);
      this.queueRead = (this.queueRead + size) % capacity;
      this.queueLength -= size;
      this.channel.deliver(this.inFrame);
    }
    // Drift: a queue that never ran low during the window holds latency nobody needs.
    const depth = Math.floor(this.queueLength / size);
    if (depth < this.minDepthFrames) this.minDepthFrames = depth;
    if (++this.ticksInWindow >= DRIFT_WINDOW_TICKS) {
      if (this.minDepthFrames >= DRIFT_MIN_FRAMES) this.discard(size);
      this.ticksInWindow = 0;
      this.minDepthFrames = Number.POSITIVE_INFINITY;
    }
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
    if (frame.rate === this.coder.rate && frame.samples.length === this.frameSamples) {
      this.send(frame.samples);
      return;
    }
    if (frame.rate !== this.coder.rate) {
      if (!this.resampler || this.resampler.fromRate !== frame.rate) this.resampler = createResampler(frame.rate, this.coder.rate);
      const written = this.resampler.process(frame.samples, this.outSamples);
      this.send(written === this.outSamples.length ? this.outSamples : this.outSamples.subarray(0, written));
      return;
    }
    this.send(frame.samples);
  }
}

// ---- the technology ------------------------------------------------------------------------------

/** Makes UnicastRTP channels and keeps their sessions. */
export class ExternalMediaTechnology {
  readonly name = 'UnicastRTP';
  readonly description = 'Unicast RTP Media Channel Driver';
  private readonly sessions = new Map<string, RtpSession>();
  /** Sockets being set up, closed by closeAll() too. */
  private readonly opening = new Set<dgram.Socket>();
  private shutDown = false;

  constructor(private readonly options: ExternalMediaOptions) {}

  /** Sessions with an open socket. */
  get size(): number {
    return this.sessions.size;
  }

  session(channel: Channel): RtpSession | undefined {
    const session = this.sessions.get(channel.id);
    return session?.channel === channel ? session : undefined;
  }

  /**
   * Opens the socket, creates the channel (Up), sets the local address variables and the request's
   * variables, and puts it into the application (StasisStart). InvalidError for a bad host or
   * format, ConflictError for a channel id in use. When the application is not active the channel
   * is hung up at once, as a channel originated into an inactive application is.
   */
  async create(request: ExternalMediaRequest): Promise<Channel> {
    const { channels, stasis, applications, media, log } = this.options;
    if (this.shutDown) throw new InvalidError('The server is shutting down');
    const target = parseHostPort(request.externalHost);
    if (!target) throw new InvalidError('external_host must be <host>:<port>');
    if (!isExternalMediaFormat(request.format)) throw new InvalidError(`Unsupported format: ${String(request.format)}`);
    channels.checkId(request.channelId);

    const remote = await resolveRemote(target.host);
    const bindAddress = await bindAddressFor(this.options.httpBind, remote.family);
    if (isLoopbackAddress(bindAddress) && !isLoopbackAddress(remote.address)) {
      throw new InvalidError(`external_host ${request.externalHost} cannot be reached: RTP is sent from the loopback address, as the interface listens on ${this.options.httpBind} (http.bind)`);
    }
    const socket = await openSocket(bindAddress, remote.family, { address: remote.address, port: target.port }, this.opening);
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
    this.sessions.set(channel.id, session);

    // The application sees the set-up of its channel (as for originate and create).
    applications.subscribeInternal(request.app, 'channel', channel.id);
    const address = session.localAddress;
    const port = String(session.localPort);
    channel.setVariable('UNICASTRTP_LOCAL_ADDRESS', address, true);
    channel.setVariable('UNICASTRTP_LOCAL_PORT', port, true);
    channel.setVariable('local_address', address, true);
    channel.setVariable('local_port', port, true);
    applyVariables(channel, request.variables ?? []);
    channel.setDialplan({ ...channel.location, appName: 'Stasis', appData: request.appArgs ? `${request.app},${request.appArgs}` : request.app });
    if (!stasis.enter(channel, request.app, splitAppArgs(request.appArgs))) {
      log?.warn({ channel: channel.name, app: request.app }, 'Stasis application is not registered; hanging the external media channel up');
      channel.hangup(CAUSE.normal);
    }
    return channel;
  }

  /** Server shutdown: every socket closes (channels hanging up have closed theirs already). */
  closeAll(): void {
    this.shutDown = true;
    for (const session of [...this.sessions.values()]) session.close();
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
    if (this.sessions.get(session.channel?.id) === session) this.sessions.delete(session.channel.id);
  }
}
