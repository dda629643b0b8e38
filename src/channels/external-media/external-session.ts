// The skeleton every external media session shares, whatever carries the audio (RTP over UDP,
// AudioSocket over TCP): the channel's driver, the receive queue delivering one 20 ms frame per
// media clock tick, the rate conversion of frames on their way out, the direction, and closing
// with the channel however it goes. A transport fills in opening, sending and closing.
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelDriver } from '../../core/channels/technology.ts';
import type { MediaEngine } from '../../core/media-engine.ts';
import type { Frame, SampleRate } from '../../media/frame.ts';
import { OutgoingRate } from '../../media/rtp/outgoing-rate.ts';
import { ReceiveQueue } from '../../media/rtp/receive-queue.ts';
import type { Logger } from 'pino';

export type ExternalMediaDirection = 'both' | 'in' | 'out';

export interface SessionOptions {
  readonly channel: Channel;
  readonly media: MediaEngine;
  /** The rate of the audio on the wire. */
  readonly rate: SampleRate;
  readonly direction: ExternalMediaDirection;
  readonly log: Logger;
  /** Called once when the session closes (the technology forgets it). */
  readonly onClose: (session: MediaSession) => void;
}

export abstract class MediaSession implements ChannelDriver {
  readonly channel: Channel;
  protected readonly media: MediaEngine;
  protected readonly log: Logger;
  /** `in` sends nothing; `out` delivers nothing received. */
  protected readonly sendEnabled: boolean;
  protected readonly receiveEnabled: boolean;
  protected readonly queue: ReceiveQueue;
  readonly #outgoing: OutgoingRate;
  readonly #onClose: (session: MediaSession) => void;
  #closed = false;

  constructor(options: SessionOptions) {
    this.channel = options.channel;
    this.media = options.media;
    this.log = options.log;
    this.sendEnabled = options.direction !== 'in';
    this.receiveEnabled = options.direction !== 'out';
    this.queue = new ReceiveQueue(options.rate);
    this.#outgoing = new OutgoingRate(options.rate);
    this.#onClose = options.onClose;
  }

  /** Starts carrying media, once the channel exists. */
  start(): void {
    this.open();
    this.media.onTick(this.#tick);
    // However the channel goes (even without asking its driver), the transport goes with it.
    this.channel.once('hangup', () => this.close());
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.media.offTick(this.#tick);
    this.closeTransport();
    this.#onClose(this);
  }

  /** Listens on the transport (and sends what opens the session). */
  protected abstract open(): void;
  /** Releases the transport. */
  protected abstract closeTransport(): void;
  /** Sends one frame's samples at the wire's rate (a buffer valid only during the call). */
  protected abstract send(samples: Int16Array): void;
  /** False when the transport cannot take audio now (it is dropped before any work is done). */
  protected canSend(): boolean {
    return true;
  }

  /** Queues decoded audio from the far end (dropped for direction `out`). */
  protected enqueue(samples: Int16Array): void {
    if (this.receiveEnabled) this.queue.push(samples);
  }

  readonly #tick = (): void => {
    if (this.#closed || this.channel.hangingUp) return;
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

  sendDigit(_digit: string, _durationMs: number): void {}

  writeFrame(frame: Frame): void {
    if (this.#closed || !this.sendEnabled || !this.canSend()) return;
    this.send(this.#outgoing.samples(frame));
  }
}

/** The live sessions of one technology, by channel. */
export class SessionTable<S extends MediaSession> {
  readonly #byChannel = new Map<string, S>();

  get size(): number {
    return this.#byChannel.size;
  }

  get(channel: Channel): S | undefined {
    const session = this.#byChannel.get(channel.id);
    return session?.channel === channel ? session : undefined;
  }

  add(session: S): void {
    this.#byChannel.set(session.channel.id, session);
  }

  forget(session: MediaSession): void {
    if (this.#byChannel.get(session.channel.id) === session) this.#byChannel.delete(session.channel.id);
  }

  closeAll(): void {
    for (const session of [...this.#byChannel.values()]) session.close();
  }
}
