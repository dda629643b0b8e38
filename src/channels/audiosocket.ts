// External media over AudioSocket (ARI `externalMedia` with encapsulation audiosocket, transport
// tcp, connection type client): an `AudioSocket/<host:port>/<uuid>` channel whose far end is an
// AudioSocket server reached over a real TCP connection.
//
// The protocol: every message is a 1-byte kind, a 2-byte big-endian payload length, then the
// payload. Kinds: 0x00 hangup (no payload), 0x01 UUID (16 bytes), 0x03 DTMF (one ASCII digit),
// 0x10 audio (signed linear 16-bit little-endian, 8 kHz, mono), 0xff error (an error code).
//
// - The connection comes from an address of the class of `http.bind` (loopback by default, so
//   only loopback hosts can be reached; any address when the interface listens everywhere) and
//   must be established within two seconds, or the request fails (400). Its local address and
//   port are the channel variables local_address / local_port, reported in `channelvars`.
// - The first message is the UUID (the request's `data`, which must be a UUID).
// - Sending: one 0x10 message per frame written (20 ms: 320 bytes), resampled to 8 kHz when the
//   frame is at another rate; DTMF sent on the channel goes out as 0x03. The wire always carries
//   8 kHz linear audio, whatever `format` the request named. When the far end does not read, audio
//   beyond about a second waiting in the socket is dropped rather than buffered without end.
// - Receiving: 0x10 audio goes into the shared receive queue, delivered one 20 ms frame per media
//   clock tick whatever the size of the messages; 0x03 is a DTMF digit received on the channel.
//   0x01 and unknown kinds are ignored; 0xff is logged.
// - A 0x00 message, the far end closing the connection, or a connection error hangs the channel
//   up (cause 16, normal clearing). The channel hanging up otherwise sends 0x00 and closes the
//   connection (the far end's close is awaited for a moment; then the socket is destroyed).
// - direction `in` sends no audio, `out` delivers none of the audio received (DTMF both ways).
import net from 'node:net';
import { CAUSE } from '../core/channels/causes.ts';
import type { Channel } from '../core/channels/channel.ts';
import type { ChannelDriver } from '../core/channels/technology.ts';
import { InvalidError } from '../core/errors.ts';
import type { MediaEngine } from '../core/media-engine.ts';
import type { Frame } from '../media/frame.ts';
import {
  enterApplication,
  isExternalMediaFormat,
  isWildcardAddress,
  OutgoingRate,
  parseHostPort,
  ReceiveQueue,
  resolveTarget,
  SessionTable,
  type ExternalMediaDirection,
  type ExternalMediaLog,
  type ExternalMediaOptions,
  type ExternalMediaRequest,
  type ExternalTarget,
} from './external-media-common.ts';

/** Message kinds of the AudioSocket protocol. */
export const AUDIOSOCKET_KIND = {
  hangup: 0x00,
  uuid: 0x01,
  dtmf: 0x03,
  audio: 0x10,
  error: 0xff,
} as const;

export const AUDIOSOCKET_HEADER_BYTES = 3;
/** The rate of 0x10 audio. */
const AUDIO_RATE = 8000;
const CONNECT_TIMEOUT_MS = 2000;
/** After sending 0x00 and our FIN, how long the far end has to close before the socket is destroyed. */
const CLOSE_LINGER_MS = 2000;
/** Audio waiting in the socket beyond this (about a second of 0x10 messages) is dropped. */
const MAX_UNSENT_BYTES = 50 * (AUDIOSOCKET_HEADER_BYTES + 320);
/** AudioSocket DTMF carries no duration; digits received count as this long (ARI's default). */
const DTMF_DURATION_MS = 100;
const DTMF_DIGIT = /^[0-9A-D*#]$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AudioSocketRequest extends ExternalMediaRequest {
  /** The UUID sent as the first message; it also names the channel. */
  readonly data: string;
}

/** The 16 bytes of a UUID in its text form, or undefined when `text` is not one. */
export function uuidBytes(text: string): Buffer | undefined {
  if (!UUID_PATTERN.test(text)) return undefined;
  return Buffer.from(text.replaceAll('-', ''), 'hex');
}

/** One AudioSocket message. */
export function audioSocketMessage(kind: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const message = Buffer.allocUnsafe(AUDIOSOCKET_HEADER_BYTES + payload.length);
  message[0] = kind;
  message.writeUInt16BE(payload.length, 1);
  message.set(payload, AUDIOSOCKET_HEADER_BYTES);
  return message;
}

const HANGUP_MESSAGE = audioSocketMessage(AUDIOSOCKET_KIND.hangup);

/** Splits the byte stream into messages, whatever the boundaries of the chunks it arrives in. */
class MessageReader {
  private pending: Buffer | undefined;

  /** Calls `handle` for each whole message until it returns false; keeps the rest for later. */
  push(chunk: Buffer, handle: (kind: number, payload: Buffer) => boolean): void {
    const data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    let offset = 0;
    while (data.length - offset >= AUDIOSOCKET_HEADER_BYTES) {
      const end = offset + AUDIOSOCKET_HEADER_BYTES + data.readUInt16BE(offset + 1);
      if (end > data.length) break;
      const more = handle(data[offset], data.subarray(offset + AUDIOSOCKET_HEADER_BYTES, end));
      offset = end;
      if (!more) {
        this.pending = undefined;
        return;
      }
    }
    this.pending = offset < data.length ? Buffer.from(data.subarray(offset)) : undefined;
  }
}

/** Connects within CONNECT_TIMEOUT_MS; `opening` holds the socket meanwhile. InvalidError otherwise. */
function connect(target: ExternalTarget, opening: Set<net.Socket>, log?: ExternalMediaLog): Promise<net.Socket> {
  const options: net.TcpNetConnectOpts = { host: target.address, port: target.port, family: target.family };
  if (!isWildcardAddress(target.bindAddress)) options.localAddress = target.bindAddress;
  const socket = net.connect(options);
  opening.add(socket);
  return new Promise((resolve, reject) => {
    const settle = (): void => {
      clearTimeout(timer);
      opening.delete(socket);
      socket.off('error', fail);
      socket.off('close', closedMeanwhile);
      socket.off('connect', connected);
    };
    const fail = (error: Error): void => {
      settle();
      // A late error of the destroyed socket must not go unhandled.
      socket.on('error', () => undefined);
      socket.destroy();
      log?.debug({ err: error, host: `${target.address}:${target.port}` }, 'AudioSocket connection failed');
      reject(new InvalidError('Unable to connect to external_host', { cause: error }));
    };
    const closedMeanwhile = (): void => {
      settle();
      reject(new InvalidError('The server is shutting down'));
    };
    const connected = (): void => {
      settle();
      resolve(socket);
    };
    const timer = setTimeout(() => fail(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    socket.once('error', fail);
    socket.once('close', closedMeanwhile);
    socket.once('connect', connected);
  });
}

// ---- the session: one channel's connection -------------------------------------------------------

/** The far end of an AudioSocket channel: its connection and what crosses it. */
export class AudioSocketSession implements ChannelDriver {
  channel!: Channel;
  readonly localAddress: string;
  readonly localPort: number;
  private readonly reader = new MessageReader();
  private readonly queue = new ReceiveQueue(AUDIO_RATE);
  private readonly outgoing = new OutgoingRate(AUDIO_RATE);
  private readonly sendEnabled: boolean;
  private readonly receiveEnabled: boolean;
  private closed = false;
  /** The far end hung up or the connection went: nothing more is sent. */
  private farEndGone = false;
  /** Audio messages dropped because the far end did not read them. */
  droppedMessages = 0;

  constructor(
    private readonly socket: net.Socket,
    private readonly media: MediaEngine,
    direction: ExternalMediaDirection,
    private readonly onClose: (session: AudioSocketSession) => void,
    private readonly log?: ExternalMediaLog,
  ) {
    this.localAddress = socket.localAddress ?? '';
    this.localPort = socket.localPort ?? 0;
    this.sendEnabled = direction !== 'in';
    this.receiveEnabled = direction !== 'out';
  }

  /** Sends the UUID (the first message) and starts carrying media for the channel. */
  attach(channel: Channel, uuid: Buffer): void {
    this.channel = channel;
    this.socket.setNoDelay(true);
    this.socket.write(audioSocketMessage(AUDIOSOCKET_KIND.uuid, uuid));
    this.socket.on('data', this.onData);
    // Errors (a reset connection, writes after the far end went) are followed by 'close'.
    this.socket.on('error', this.onError);
    this.socket.on('end', this.onFarEndGone);
    this.socket.on('close', this.onFarEndGone);
    this.media.onTick(this.tick);
    // However the channel goes (even without asking its driver), the connection goes with it.
    channel.once('hangup', () => this.close());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends 0x00 (unless the far end is gone) and closes the connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.media.offTick(this.tick);
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onFarEndGone);
    socket.off('close', this.onFarEndGone);
    if (this.farEndGone || socket.destroyed || !socket.writable) {
      socket.destroy();
    } else {
      socket.end(HANGUP_MESSAGE);
      // Whatever still arrives is read and dropped until the far end closes its side too.
      socket.resume();
      const linger = setTimeout(() => socket.destroy(), CLOSE_LINGER_MS);
      linger.unref();
      socket.once('close', () => clearTimeout(linger));
    }
    this.onClose(this);
  }

  private readonly onError = (error: Error): void => {
    this.log?.debug({ err: error, channel: this.channel?.name }, 'AudioSocket connection error');
  };

  /** 0x00 received, or the connection ended: the channel hangs up (its far end is gone). */
  private readonly onFarEndGone = (): void => {
    if (this.closed) return;
    this.farEndGone = true;
    if (this.channel.hangingUp) this.close();
    else this.channel.hangup(CAUSE.normal, { fromFarEnd: true });
  };

  // ---- from the far end --------------------------------------------------------------------------

  private readonly onData = (chunk: Buffer): void => {
    if (!this.closed) this.reader.push(chunk, this.onMessage);
  };

  /** Handles one message; false once the session has closed (the rest is not read). */
  private readonly onMessage = (kind: number, payload: Buffer): boolean => {
    switch (kind) {
      case AUDIOSOCKET_KIND.audio:
        if (this.receiveEnabled) this.enqueue(payload);
        break;
      case AUDIOSOCKET_KIND.dtmf: {
        const digit = payload.length > 0 ? String.fromCharCode(payload[0]).toUpperCase() : '';
        if (DTMF_DIGIT.test(digit)) this.channel.receiveDigit(digit, DTMF_DURATION_MS);
        else this.log?.debug({ channel: this.channel.name, payload: payload.toString('hex') }, 'AudioSocket DTMF message without a digit ignored');
        break;
      }
      case AUDIOSOCKET_KIND.hangup:
        this.onFarEndGone();
        break;
      case AUDIOSOCKET_KIND.error:
        this.log?.warn({ channel: this.channel.name, code: payload.length > 0 ? payload[0] : undefined }, 'AudioSocket error message received');
        break;
      default:
        // 0x01 (a UUID from the far end) and kinds this side does not know.
        break;
    }
    return !this.closed;
  };

  private enqueue(payload: Buffer): void {
    const count = payload.length >> 1;
    if (count === 0) return;
    const samples = this.queue.scratch(count);
    for (let i = 0, byte = 0; i < count; i++, byte += 2) samples[i] = ((payload[byte + 1] << 24) | (payload[byte] << 16)) >> 16;
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

  sendDigit(digit: string): void {
    if (this.closed) return;
    const normalised = digit.toUpperCase();
    if (!DTMF_DIGIT.test(normalised)) return;
    this.socket.write(audioSocketMessage(AUDIOSOCKET_KIND.dtmf, Buffer.from(normalised, 'latin1')));
  }

  writeFrame(frame: Frame): void {
    if (this.closed || !this.sendEnabled) return;
    if (this.socket.writableLength > MAX_UNSENT_BYTES) {
      this.droppedMessages += 1;
      return;
    }
    const samples = this.outgoing.samples(frame);
    // A fresh buffer per message: the socket may still hold the previous one while it is sent.
    const message = Buffer.allocUnsafe(AUDIOSOCKET_HEADER_BYTES + samples.length * 2);
    message[0] = AUDIOSOCKET_KIND.audio;
    message.writeUInt16BE(samples.length * 2, 1);
    for (let i = 0, byte = AUDIOSOCKET_HEADER_BYTES; i < samples.length; i++, byte += 2) {
      const sample = samples[i];
      message[byte] = sample & 0xff;
      message[byte + 1] = (sample >> 8) & 0xff;
    }
    this.socket.write(message);
  }
}

// ---- the technology ------------------------------------------------------------------------------

/** Makes AudioSocket channels and keeps their sessions. */
export class AudioSocketTechnology {
  readonly name = 'AudioSocket';
  readonly description = 'AudioSocket Channel Driver';
  private readonly sessions = new SessionTable<AudioSocketSession>();
  /** Connections being set up, destroyed by closeAll() too. */
  private readonly opening = new Set<net.Socket>();
  private shutDown = false;

  constructor(private readonly options: ExternalMediaOptions) {}

  /** Sessions with an open connection. */
  get size(): number {
    return this.sessions.size;
  }

  session(channel: Channel): AudioSocketSession | undefined {
    return this.sessions.get(channel);
  }

  /**
   * Connects to the AudioSocket server, creates the channel (Up), sends the UUID, sets the local
   * address variables and the request's variables, and puts it into the application
   * (StasisStart). InvalidError for a bad host, format or UUID and for a connection that fails;
   * ConflictError for a channel id in use. When the application is not active the channel is hung
   * up at once (0x00 is sent and the connection closed).
   */
  async create(request: AudioSocketRequest): Promise<Channel> {
    const { channels, media, log } = this.options;
    if (this.shutDown) throw new InvalidError('The server is shutting down');
    if (!parseHostPort(request.externalHost)) throw new InvalidError('external_host must be <host>:<port>');
    if (!isExternalMediaFormat(request.format)) throw new InvalidError(`Unsupported format: ${String(request.format)}`);
    const uuid = uuidBytes(request.data);
    if (!uuid) throw new InvalidError('data must be a UUID for encapsulation audiosocket');
    channels.checkId(request.channelId);

    const target = await resolveTarget(request.externalHost, this.options.httpBind, 'AudioSocket connects');
    const socket = await connect(target, this.opening, log);
    if (this.shutDown) {
      socket.destroy();
      throw new InvalidError('The server is shutting down');
    }

    let channel: Channel;
    const session = new AudioSocketSession(socket, media, request.direction, (closed) => this.sessions.forget(closed), log);
    try {
      // The id may have been taken while the connection was being made.
      channel = channels.create({
        id: request.channelId || undefined,
        name: `AudioSocket/${request.externalHost}/${request.data}`,
        technology: this.name,
        direction: 'outbound',
        state: 'Up',
      });
    } catch (error) {
      socket.destroy();
      throw error;
    }
    channel.driver = session;
    session.attach(channel, uuid);
    this.sessions.add(session);

    enterApplication(this.options, channel, request, {
      local_address: session.localAddress,
      local_port: String(session.localPort),
    });
    return channel;
  }

  /** Server shutdown: every connection closes (channels hanging up have closed theirs already). */
  closeAll(): void {
    this.shutDown = true;
    this.sessions.closeAll();
    for (const socket of this.opening) socket.destroy();
    this.opening.clear();
  }
}
