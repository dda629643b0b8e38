// External media over AudioSocket (ARI `externalMedia` with encapsulation audiosocket, transport
// tcp, connection type client): an `AudioSocket/<host:port>-<uuid>` channel whose far end is an
// AudioSocket server reached over a real TCP connection.
//
// The protocol: every message is a 1-byte kind, a 2-byte big-endian payload length, then the
// payload. Kinds: 0x00 hangup (no payload), 0x01 UUID (16 bytes), 0x03 DTMF (one ASCII digit),
// 0x10 audio (signed linear 16-bit little-endian, 8 kHz, mono), 0x12 / 0x13 / 0x16 the same at
// 16 / 24 / 48 kHz, 0xff error (an error code).
//
// - The connection comes from an address of the class of `http.bind` (loopback by default, so
//   only loopback hosts can be reached; any address when the interface listens everywhere) and
//   must be established within two seconds, or the request fails (400). Its local address and
//   port are the channel variables local_address / local_port, reported in `channelvars`.
// - The first message is the UUID (the request's `data`, which must be a UUID).
// - The wire's rate follows `format` as in Asterisk 22: slin16, slin24 and slin48 carry 16, 24 and
//   48 kHz audio in messages of kind 0x12, 0x13 and 0x16; any other format (slin, ulaw, alaw)
//   carries 8 kHz linear audio in 0x10 messages. The channel's native rate is the wire's.
// - Sending: one audio message per frame written (20 ms: 320 bytes at 8 kHz), resampled to the
//   wire's rate when the frame is at another; DTMF sent on the channel goes out as 0x03. When the
//   far end does not read, audio beyond about a second waiting in the socket is dropped rather
//   than buffered without end.
// - Receiving: audio of the session's kind goes into the receive queue (src/media/rtp/receive-queue.ts), delivered one 20 ms frame per media
//   clock tick whatever the size of the messages; 0x03 is a DTMF digit received on the channel.
//   0x01 and unknown kinds (audio at another rate among them) are ignored; 0xff is logged.
// - A 0x00 message, the far end closing the connection, or a connection error hangs the channel
//   up (cause 16, normal clearing). The channel hanging up otherwise sends 0x00 and closes the
//   connection (the far end's close is awaited for a moment; then the socket is destroyed).
// - direction `in` sends no audio, `out` delivers none of the audio received (DTMF both ways).
import net from 'node:net';
import type { Logger } from 'pino';
import { CAUSE } from '../../core/channels/causes.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { ExternalMediaRequest, TechnologyContext } from '../../core/channels/technology.ts';
import { InvalidError } from '../../core/errors.ts';
import { samplesPerFrame, type SampleRate } from '../../media/frame.ts';
import { isWildcardAddress, type ExternalTarget } from './address.ts';
import { MediaSession, type SessionOptions } from './external-session.ts';
import { ExternalMediaTechnology } from './technology.ts';

/** Message kinds of the AudioSocket protocol. */
export const AUDIOSOCKET_KIND = {
  hangup: 0x00,
  uuid: 0x01,
  dtmf: 0x03,
  audio: 0x10,
  audioSlin16: 0x12,
  audioSlin24: 0x13,
  audioSlin48: 0x16,
  error: 0xff,
} as const;

/** The wire of a `format`: its message kind, rate and Asterisk format name (8 kHz 0x10 for any other format). */
function wireOf(format: string): { readonly kind: number; readonly rate: SampleRate; readonly format: string } {
  switch (format) {
    case 'slin16':
      return { kind: AUDIOSOCKET_KIND.audioSlin16, rate: 16000, format };
    case 'slin24':
      return { kind: AUDIOSOCKET_KIND.audioSlin24, rate: 24000, format };
    case 'slin48':
      return { kind: AUDIOSOCKET_KIND.audioSlin48, rate: 48000, format };
    default:
      return { kind: AUDIOSOCKET_KIND.audio, rate: 8000, format: 'slin' };
  }
}

export const AUDIOSOCKET_HEADER_BYTES = 3;
const CONNECT_TIMEOUT_MS = 2000;
/** After sending 0x00 and our FIN, how long the far end has to close before the socket is destroyed. */
const CLOSE_LINGER_MS = 2000;
/** Audio waiting in the socket beyond this (about a second of 0x10 messages) is dropped. */
const MAX_UNSENT_BYTES = 50 * (AUDIOSOCKET_HEADER_BYTES + 320);
/** The same for a wideband wire: a second of its messages. */
const unsentBytesFor = (frameSamples: number): number => 50 * (AUDIOSOCKET_HEADER_BYTES + frameSamples * 2);
/** AudioSocket DTMF carries no duration; digits received count as this long (ARI's default). */
const DTMF_DURATION_MS = 100;
const DTMF_DIGIT = /^[0-9A-D*#]$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
function connect(target: ExternalTarget, opening: Set<net.Socket>, log: Logger): Promise<net.Socket> {
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
      log.debug({ err: error, host: `${target.address}:${target.port}` }, 'AudioSocket connection failed');
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

/**
 * Audio messages the socket may hold before a buffer is reused: more than can wait unsent
 * plus one being written (the same count at every rate).
 */
const AUDIO_RING_SIZE = Math.ceil(MAX_UNSENT_BYTES / (AUDIOSOCKET_HEADER_BYTES + 320)) + 8;

// ---- the session: one channel's connection -------------------------------------------------------

/** The far end of an AudioSocket channel: its connection and what crosses it. */
export class AudioSocketSession extends MediaSession {
  readonly localAddress: string;
  readonly localPort: number;
  readonly #socket: net.Socket;
  readonly #uuid: Buffer;
  readonly #reader = new MessageReader();
  readonly #ring: Buffer[];
  #slot = 0;
  /** The wire's audio message kind, samples per 20 ms message, and the most bytes left unsent. */
  readonly #audioKind: number;
  readonly #frameSamples: number;
  readonly #maxUnsentBytes: number;
  readonly #format: string;
  /** The far end hung up or the connection went: nothing more is sent. */
  #farEndGone = false;
  /** Audio messages dropped because the far end did not read them. */
  droppedMessages = 0;

  constructor(options: SessionOptions & { readonly socket: net.Socket; readonly uuid: Buffer; readonly audioKind: number; readonly format: string }) {
    super(options);
    this.#audioKind = options.audioKind;
    this.#format = options.format;
    this.#frameSamples = samplesPerFrame(options.rate);
    this.#maxUnsentBytes = unsentBytesFor(this.#frameSamples);
    const frameSamples = this.#frameSamples;
    this.#socket = options.socket;
    this.#uuid = options.uuid;
    this.localAddress = options.socket.localAddress ?? '';
    this.localPort = options.socket.localPort ?? 0;
    this.#ring = Array.from({ length: AUDIO_RING_SIZE }, () => {
      const message = Buffer.alloc(AUDIOSOCKET_HEADER_BYTES + frameSamples * 2);
      message[0] = options.audioKind;
      message.writeUInt16BE(frameSamples * 2, 1);
      return message;
    });
  }

  /** Signed linear at the wire's rate (`slin`, `slin16`, ...). */
  nativeFormat(): string {
    return this.#format;
  }

  /** Sends the UUID (the first message) and starts reading. */
  protected open(): void {
    const socket = this.#socket;
    socket.setNoDelay(true);
    socket.write(audioSocketMessage(AUDIOSOCKET_KIND.uuid, this.#uuid));
    socket.on('data', this.#onData);
    // Errors (a reset connection, writes after the far end went) are followed by 'close'.
    socket.on('error', this.#onError);
    socket.on('end', this.#onFarEndGone);
    socket.on('close', this.#onFarEndGone);
  }

  /** Sends 0x00 (unless the far end is gone) and closes the connection. */
  protected closeTransport(): void {
    const socket = this.#socket;
    socket.off('data', this.#onData);
    socket.off('end', this.#onFarEndGone);
    socket.off('close', this.#onFarEndGone);
    if (this.#farEndGone || socket.destroyed || !socket.writable) {
      socket.destroy();
    } else {
      socket.end(HANGUP_MESSAGE);
      // Whatever still arrives is read and dropped until the far end closes its side too.
      socket.resume();
      const linger = setTimeout(() => socket.destroy(), CLOSE_LINGER_MS);
      linger.unref();
      socket.once('close', () => clearTimeout(linger));
    }
  }

  readonly #onError = (error: Error): void => {
    this.log.debug({ err: error, channel: this.channel.name }, 'AudioSocket connection error');
  };

  /** 0x00 received, or the connection ended: the channel hangs up (its far end is gone). */
  readonly #onFarEndGone = (): void => {
    if (this.isClosed) return;
    this.#farEndGone = true;
    if (this.channel.hangingUp) this.close();
    else this.channel.hangup(CAUSE.normal, { fromFarEnd: true });
  };

  // ---- from the far end --------------------------------------------------------------------------

  readonly #onData = (chunk: Buffer): void => {
    if (!this.isClosed) this.#reader.push(chunk, this.#onMessage);
  };

  /** Handles one message; false once the session has closed (the rest is not read). */
  readonly #onMessage = (kind: number, payload: Buffer): boolean => {
    if (kind === this.#audioKind) {
      if (this.receiveEnabled) this.#enqueue(payload);
      return !this.isClosed;
    }
    switch (kind) {
      case AUDIOSOCKET_KIND.dtmf: {
        const digit = payload.length > 0 ? String.fromCharCode(payload[0]).toUpperCase() : '';
        if (DTMF_DIGIT.test(digit)) this.channel.receiveDigit(digit, DTMF_DURATION_MS);
        else this.log.debug({ channel: this.channel.name, payload: payload.toString('hex') }, 'AudioSocket DTMF message without a digit ignored');
        break;
      }
      case AUDIOSOCKET_KIND.hangup:
        this.#onFarEndGone();
        break;
      case AUDIOSOCKET_KIND.error:
        this.log.warn({ channel: this.channel.name, code: payload.length > 0 ? payload[0] : undefined }, 'AudioSocket error message received');
        break;
      default:
        // 0x01 (a UUID from the far end) and kinds this side does not know.
        break;
    }
    return !this.isClosed;
  };

  #enqueue(payload: Buffer): void {
    const count = payload.length >> 1;
    if (count === 0) return;
    const samples = this.queue.scratch(count);
    for (let i = 0, byte = 0; i < count; i++, byte += 2) samples[i] = ((payload[byte + 1] << 24) | (payload[byte] << 16)) >> 16;
    this.queue.pushFrom(samples, count);
  }

  // ---- towards the far end -----------------------------------------------------------------------

  override sendDigit(digit: string): void {
    if (this.isClosed) return;
    const normalised = digit.toUpperCase();
    if (!DTMF_DIGIT.test(normalised)) return;
    this.#socket.write(audioSocketMessage(AUDIOSOCKET_KIND.dtmf, Buffer.from(normalised, 'latin1')));
  }

  protected override canSend(): boolean {
    if (this.#socket.writableLength <= this.#maxUnsentBytes) return true;
    this.droppedMessages += 1;
    return false;
  }

  protected send(samples: Int16Array): void {
    let message: Buffer;
    if (samples.length === this.#frameSamples) {
      message = this.#ring[this.#slot];
      this.#slot = (this.#slot + 1) % AUDIO_RING_SIZE;
    } else {
      message = Buffer.allocUnsafe(AUDIOSOCKET_HEADER_BYTES + samples.length * 2);
      message[0] = this.#audioKind;
      message.writeUInt16BE(samples.length * 2, 1);
    }
    for (let i = 0, byte = AUDIOSOCKET_HEADER_BYTES; i < samples.length; i++, byte += 2) {
      const sample = samples[i];
      message[byte] = sample & 0xff;
      message[byte + 1] = (sample >> 8) & 0xff;
    }
    this.#socket.write(message);
  }
}

// ---- the technology ------------------------------------------------------------------------------

/** Makes AudioSocket channels (`chan_audiosocket.so`) and keeps their sessions. */
export class AudioSocketTechnology extends ExternalMediaTechnology<net.Socket, AudioSocketSession> {
  constructor() {
    super({
      name: 'AudioSocket',
      description: 'AudioSocket Channel Driver',
      module: { name: 'chan_audiosocket.so', description: 'AudioSocket Channel' },
      encapsulation: 'audiosocket',
      transport: 'tcp',
      reaching: 'AudioSocket connects',
    });
  }

  protected override checkRequest(request: ExternalMediaRequest): void {
    if (!uuidBytes(request.data ?? '')) throw new InvalidError('data must be a UUID for encapsulation audiosocket');
  }

  protected openTransport(target: ExternalTarget, context: TechnologyContext): Promise<net.Socket> {
    return connect(target, this.opening, context.log);
  }

  protected disposeTransport(socket: net.Socket): void {
    socket.destroy();
  }

  protected channelName(request: ExternalMediaRequest): string {
    // chan_audiosocket names it `AudioSocket/<destination>-<uuid>` from its dial string `<destination>/<uuid>`.
    return `AudioSocket/${request.externalHost}-${request.data ?? ''}`;
  }

  protected createSession(channel: Channel, socket: net.Socket, request: ExternalMediaRequest, context: TechnologyContext, onClose: (session: MediaSession) => void): AudioSocketSession {
    const uuid = uuidBytes(request.data ?? '')!;
    const wire = wireOf(request.format);
    return new AudioSocketSession({ channel, media: context.media, rate: wire.rate, audioKind: wire.kind, format: wire.format, direction: request.direction, log: context.log, onClose, socket, uuid });
  }

  protected variables(session: AudioSocketSession): Record<string, string> {
    return { local_address: session.localAddress, local_port: String(session.localPort) };
  }
}
