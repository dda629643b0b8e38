// One WebSocket channel's far end: the media WebSocket (accepted on /media/<id> or opened to a
// websocket_clients server), the audio crossing it in the channel's format, and the control
// protocol, as chan_websocket does it.
//
// - Towards the application: each frame the core writes becomes one BINARY message of raw
//   payload (160 bytes of µ-law per 20 ms, ...); DTMF sent on the channel becomes DTMF_END.
//   Nothing is sent for direction `out`; audio is dropped while more than MAX_UNSENT_FRAMES wait
//   unsent in the socket (an application that does not read).
// - From the application: BINARY messages go through the media queue (media-queue.ts) and are
//   played out one frame per media clock tick, however fast they come; TEXT frames are commands.
// - Bounds on what the application sends: messages of at most MAX_MESSAGE_BYTES (larger close the
//   connection with 1009), MAX_MESSAGES_PER_SECOND (more are dropped), the queue's limits, and
//   MAX_UNSENT_BYTES of replies it leaves unread (then the connection is closed, 1008).
import type { Logger } from 'pino';
import type WebSocket from 'ws';
import { CAUSE } from '../../core/channels/causes.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelDriver } from '../../core/channels/technology.ts';
import type { MediaEngine } from '../../core/media-engine.ts';
import { connectWebSocketClient, onClientMessage, type WebSocketClientConfig } from '../../util/websocket-clients/index.ts';
import type { Codec } from '../../media/codecs.ts';
import type { Frame } from '../../media/frame.ts';
import { OutgoingRate } from '../../media/rtp/outgoing-rate.ts';
import { jsonEvent, MAX_COMMAND_BYTES, parseCommand, type CommandName } from './control.ts';
import type { ControlFormat, MediaDirection, WebSocketDialString } from './dial-string.ts';
import { MediaQueue, XOFF_LEVEL, XON_LEVEL, QUEUE_LENGTH_MAX } from './media-queue.ts';

/** Largest message from the application: a frame of 65535 bytes with a masked 16-bit length header. */
export const MAX_MESSAGE_BYTES = 65527;
/** Messages (media and commands) per second the application may send; more are dropped. */
export const MAX_MESSAGES_PER_SECOND = 1000;
/** Audio frames that may wait unsent in the socket before more are dropped. */
const MAX_UNSENT_FRAMES = 50;
/** Bytes (events included) an application may leave unread before it is disconnected. */
const MAX_UNSENT_BYTES = 1024 * 1024;
/** After sending our close, how long the application has to answer before the socket is destroyed. */
const CLOSE_LINGER_MS = 2000;
/** Ring of outgoing audio buffers: more than can wait unsent, so a buffer is free when reused. */
const SEND_RING_SIZE = MAX_UNSENT_FRAMES + 14;
const PTIME_MS = 20;
const BINARY = { binary: true } as const;
const TAIL_IDLE_TICKS = 2;

/** WebSocket close codes, which are also the channel's tech_cause. */
export const CLOSE = { normal: 1000, goingAway: 1001, unsupported: 1003, policy: 1008, tooBig: 1009 } as const;

export interface SessionSetup {
  readonly channel: Channel;
  readonly dial: WebSocketDialString;
  readonly codec: Codec;
  /** MEDIA_WEBSOCKET_CONNECTION_ID: the secret id (INCOMING) or the client's name. */
  readonly connectionId: string;
  readonly controlFormat: ControlFormat;
  readonly media: MediaEngine;
  readonly log: Logger;
  /** Client mode: the server to connect to. */
  readonly client?: WebSocketClientConfig;
  /** INCOMING: how long after the call starts the application has to connect. */
  readonly connectTimeoutMs: number;
  /** Called once when the session ends (the technology forgets it). */
  readonly onClose: (session: WebSocketSession) => void;
}

export class WebSocketSession implements ChannelDriver {
  readonly channel: Channel;
  readonly connectionId: string;
  readonly codec: Codec;
  readonly passthrough: boolean;
  readonly optimalFrameSize: number;
  readonly #setup: SessionSetup;
  readonly #log: Logger;
  readonly #format: ControlFormat;
  readonly #queue: MediaQueue;
  readonly #frame: Frame;
  readonly #outgoing: OutgoingRate;
  readonly #sendRing: Buffer[];
  #sendSlot = 0;
  #ws: WebSocket | undefined;
  /** The application connected once: the id is spent. */
  #used = false;
  #called = false;
  #closed = false;
  #readError = false;
  #direction: MediaDirection;
  #ticking = false;
  #paused = false;
  #buffering = false;
  #xoffSent = false;
  #reportDrained = false;
  /** Ticks a partial frame kept while buffering has waited with nothing else queued. */
  #tailIdleTicks = 0;
  #connectTimer: NodeJS.Timeout | undefined;
  #connecting: AbortController | undefined;
  #windowStart = 0;
  #windowMessages = 0;
  /** Messages dropped: over the rate, or arriving at a full queue. */
  droppedMessages = 0;
  /** Audio frames not sent because the application did not read. */
  droppedFrames = 0;

  constructor(setup: SessionSetup) {
    this.#setup = setup;
    this.channel = setup.channel;
    this.connectionId = setup.connectionId;
    this.codec = setup.codec;
    this.passthrough = setup.dial.passthrough;
    this.optimalFrameSize = this.passthrough ? 0 : setup.codec.bytesPerFrame;
    this.#log = setup.log;
    this.#format = setup.controlFormat;
    this.#direction = setup.dial.direction;
    const silence = setup.codec.name === 'ulaw' ? 0xff : setup.codec.name === 'alaw' ? 0xd5 : 0;
    this.#queue = new MediaQueue(setup.codec.bytesPerFrame, silence, MAX_MESSAGE_BYTES);
    this.#frame = { rate: setup.codec.rate, samples: new Int16Array(setup.codec.bytesPerFrame / setup.codec.bytesPerSample) };
    this.#outgoing = new OutgoingRate(setup.codec.rate);
    this.#sendRing = Array.from({ length: SEND_RING_SIZE }, () => Buffer.alloc(setup.codec.bytesPerFrame));
  }

  get incoming(): boolean {
    return this.#setup.dial.incoming;
  }

  /** The application has connected (or is connecting) with this id: it cannot be used again. */
  get used(): boolean {
    return this.#used;
  }

  get connected(): boolean {
    return this.#ws !== undefined && !this.#closed;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get direction(): MediaDirection {
    return this.#direction;
  }

  get queueLength(): number {
    return this.#queue.length;
  }

  /** Claims the id for an upgrade in progress (single use). False when it was claimed before. */
  claim(): boolean {
    if (this.#used || this.#closed) return false;
    this.#used = true;
    return true;
  }

  /** The application's WebSocket is open: MEDIA_START, then the answer unless `n`. */
  attach(ws: WebSocket): void {
    if (this.#closed) {
      ws.close(CLOSE.normal);
      return;
    }
    this.#used = true;
    this.#ws = ws;
    this.#clearConnectTimer();
    ws.on('error', this.#onError);
    ws.on('close', this.#onClose);
    this.#sendMediaStart();
    this.#updateTicking();
    if (this.#called && this.#setup.dial.autoAnswer) this.#answerFromFarEnd();
    // Last: what a client-mode server sent with its 101 answer is replayed here, after MEDIA_START.
    onClientMessage(ws, this.#onMessage);
  }

  /** Ends the session (the channel is going): the WebSocket closes with the tech cause, else 1000. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clearConnectTimer();
    this.#connecting?.abort();
    this.#stopTicking();
    const ws = this.#ws;
    if (ws) {
      ws.off('message', this.#onMessage);
      ws.off('close', this.#onClose);
      if (ws.readyState === ws.OPEN) {
        ws.close(this.channel.hangupTechCause ?? CLOSE.normal);
        const linger = setTimeout(() => ws.terminate(), CLOSE_LINGER_MS);
        linger.unref();
        ws.once('close', () => clearTimeout(linger));
      } else {
        ws.terminate();
      }
    }
    this.#setup.onClose(this);
  }

  // ---- ChannelDriver -------------------------------------------------------------------------------

  call(): void {
    if (this.#called || this.#closed) return;
    this.#called = true;
    if (this.#setup.client) {
      void this.#connectOut(this.#setup.client);
      return;
    }
    if (this.#ws) {
      if (this.#setup.dial.autoAnswer) this.#answerFromFarEnd();
      return;
    }
    this.#connectTimer = setTimeout(() => {
      this.#connectTimer = undefined;
      if (this.#ws || this.#closed) return;
      this.#log.info({ channel: this.channel.name }, 'no media WebSocket connected in time; hanging up');
      this.channel.hangup(CAUSE.noAnswer);
    }, this.#setup.connectTimeoutMs);
    this.#connectTimer.unref();
  }

  answer(): void {}

  hangup(): void {
    this.close();
  }

  indicate(): void {}

  sendDigit(digit: string): void {
    if (!this.connected) return;
    if (this.#format === 'json') this.#sendText(jsonEvent('DTMF_END', this.channel.id, { digit }));
    else this.#sendText(`DTMF_END digit:${digit} channel_id:${this.channel.id}`);
  }

  nativeFormat(): string {
    return this.codec.name;
  }

  writeFrame(frame: Frame): void {
    const ws = this.#ws;
    if (!ws || this.#closed || this.#direction === 'out' || ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_UNSENT_FRAMES * this.codec.bytesPerFrame) {
      this.droppedFrames += 1;
      return;
    }
    const samples = this.#outgoing.samples(frame);
    const buffer = this.#sendRing[this.#sendSlot];
    this.#sendSlot = (this.#sendSlot + 1) % SEND_RING_SIZE;
    this.codec.encode(samples, buffer);
    ws.send(buffer, BINARY);
  }

  // ---- client mode -----------------------------------------------------------------------------------

  async #connectOut(client: WebSocketClientConfig): Promise<void> {
    const connecting = new AbortController();
    this.#connecting = connecting;
    this.#used = true;
    let ws: WebSocket;
    try {
      ws = await connectWebSocketClient(client, {
        params: this.#setup.dial.uriParams,
        signal: connecting.signal,
        maxPayloadBytes: MAX_MESSAGE_BYTES + 4,
        onPingTimeout: () => this.#log.warn({ channel: this.channel.name, client: client.name }, 'media WebSocket missed its PONGs; hanging up'),
        onAttemptFailed: (attempt, error) => this.#log.debug({ channel: this.channel.name, client: client.name, attempt, err: error }, 'media WebSocket connection attempt failed'),
      });
    } catch (error) {
      if (this.#closed) return;
      this.#log.warn({ channel: this.channel.name, client: client.name, err: error }, 'media WebSocket connection failed');
      this.channel.hangup(CAUSE.noRoute);
      return;
    } finally {
      this.#connecting = undefined;
    }
    if (this.#closed) {
      ws.terminate();
      return;
    }
    this.attach(ws);
  }

  // ---- from the application ----------------------------------------------------------------------

  readonly #onMessage = (data: WebSocket.RawData, isBinary: boolean): void => {
    if (this.#closed) return;
    if (!this.#withinRate()) return;
    // ws hands a message as one Buffer (binaryType nodebuffer).
    const bytes = data as Buffer;
    if (isBinary) this.#onMedia(bytes);
    else this.#onText(bytes);
  };

  #withinRate(): boolean {
    const now = performance.now();
    if (now - this.#windowStart >= 1000) {
      if (this.#windowMessages > MAX_MESSAGES_PER_SECOND) {
        this.#log.warn({ channel: this.channel.name, messages: this.#windowMessages, limit: MAX_MESSAGES_PER_SECOND }, 'media WebSocket messages over the rate limit were dropped');
      }
      this.#windowStart = now;
      this.#windowMessages = 0;
    }
    this.#windowMessages += 1;
    if (this.#windowMessages <= MAX_MESSAGES_PER_SECOND) return true;
    this.droppedMessages += 1;
    return false;
  }

  #onMedia(bytes: Buffer): void {
    if (this.#direction === 'in' || bytes.length === 0) return;
    const queued = this.passthrough ? this.#queue.pushWhole(bytes) : this.#queue.pushMessage(bytes, this.#buffering);
    if (!queued) {
      this.droppedMessages += 1;
      return;
    }
    if (!this.#xoffSent && this.#queue.length >= XOFF_LEVEL) {
      this.#xoffSent = true;
      this.#sendBare('MEDIA_XOFF');
    }
  }

  #onText(bytes: Buffer): void {
    if (bytes.length > MAX_COMMAND_BYTES) {
      this.#log.warn({ channel: this.channel.name, bytes: bytes.length, limit: MAX_COMMAND_BYTES }, 'media WebSocket command too long; ignored');
      return;
    }
    const text = bytes.toString('utf8').trim();
    const parsed = parseCommand(text, this.#format);
    if (parsed.kind === 'unparsable') return this.#sendError('Unable to parse JSON command');
    if (parsed.kind === 'unknown') {
      this.#log.debug({ channel: this.channel.name, command: parsed.name.slice(0, 40) }, 'unknown media WebSocket command ignored');
      return;
    }
    this.#command(parsed.command, parsed.correlationId, parsed.direction, parsed.json);
  }

  #command(command: CommandName, correlationId: string, direction: unknown, json: boolean): void {
    const needsQueue = command !== 'ANSWER' && command !== 'HANGUP' && command !== 'GET_STATUS';
    if (needsQueue && this.passthrough) return this.#sendError(`${command} not supported in passthrough mode`);
    const needsPlayout = needsQueue && command !== 'FLUSH_MEDIA' && command !== 'REPORT_QUEUE_DRAINED' && command !== 'SET_MEDIA_DIRECTION';
    if (needsPlayout && this.#direction === 'in') return this.#sendError(`${command} not supported while media direction is 'in'`);
    switch (command) {
      case 'ANSWER':
        return this.#answerFromFarEnd();
      case 'HANGUP':
        return this.channel.hangup(CAUSE.normal, { fromFarEnd: false, techCause: CLOSE.normal });
      case 'START_MEDIA_BUFFERING':
        this.#buffering = true;
        return;
      case 'STOP_MEDIA_BUFFERING':
        this.#buffering = false;
        this.#queue.flushTail();
        this.#pushMarker('MEDIA_BUFFERING_COMPLETED', correlationId);
        return;
      case 'MARK_MEDIA':
        return this.#pushMarker('MEDIA_MARK_PROCESSED', correlationId);
      case 'FLUSH_MEDIA':
        this.#queue.clear();
        this.#buffering = false;
        return;
      case 'REPORT_QUEUE_DRAINED':
        this.#reportDrained = true;
        return;
      case 'GET_STATUS':
        return this.#sendStatus();
      case 'PAUSE_MEDIA':
        this.#paused = true;
        return;
      case 'CONTINUE_MEDIA':
        this.#paused = false;
        return;
      case 'SET_MEDIA_DIRECTION':
        if (!json) return this.#sendError('SET_MEDIA_DIRECTION only supports JSON format.');
        if (direction !== 'both' && direction !== 'in' && direction !== 'out') return this.#sendError('SET_MEDIA_DIRECTION requires a direction of both, in or out');
        this.#direction = direction;
        this.#updateTicking();
        return;
    }
  }

  #pushMarker(kind: 'MEDIA_MARK_PROCESSED' | 'MEDIA_BUFFERING_COMPLETED', correlationId: string): void {
    if (!this.#queue.pushMarker(kind, correlationId)) this.#sendError(`Too many marks waiting; ${kind === 'MEDIA_MARK_PROCESSED' ? 'MARK_MEDIA' : 'STOP_MEDIA_BUFFERING'} refused`);
  }

  #answerFromFarEnd(): void {
    if (this.channel.hangingUp || this.channel.state === 'Up') return;
    this.channel.remoteIndication('answer');
  }

  readonly #onError = (error: Error): void => {
    // Oversized frames, bad opcodes, bad UTF-8: ws closes the connection after this.
    this.#readError = true;
    this.#log.debug({ channel: this.channel.name, err: error }, 'media WebSocket error');
  };

  readonly #onClose = (code: number): void => {
    if (this.#closed) return;
    // The application closed (16, tech cause 1001) or the connection failed (38, 1001).
    const cause = this.#readError || code === 1006 ? CAUSE.failure : CAUSE.normal;
    if (this.channel.hangingUp) this.close();
    else this.channel.hangup(cause, { techCause: CLOSE.goingAway });
  };

  // ---- the media clock ---------------------------------------------------------------------------

  #updateTicking(): void {
    const wanted = this.connected && this.#direction !== 'in';
    if (wanted && !this.#ticking) {
      this.#ticking = true;
      this.#setup.media.onTick(this.#tick);
    } else if (!wanted) {
      this.#stopTicking();
    }
  }

  #stopTicking(): void {
    if (!this.#ticking) return;
    this.#ticking = false;
    this.#setup.media.offTick(this.#tick);
  }

  readonly #tick = (): void => {
    if (this.#closed || this.#paused) return;
    const queue = this.#queue;
    queue.takeMarkers(this.#reportMarker);
    if (queue.length === 0) {
      if (this.#reportDrained) {
        this.#reportDrained = false;
        this.#sendBare('QUEUE_DRAINED');
      }
      // A partial frame kept while buffering is played (padded) once it has waited alone for
      // TAIL_IDLE_TICKS: the application has stopped sending (Asterisk 23.5 plays it at once,
      // short; padding it at once would put silence between the messages of a steady sender).
      if (queue.tailLength > 0 && ++this.#tailIdleTicks >= TAIL_IDLE_TICKS) {
        queue.flushTail();
        this.#tailIdleTicks = 0;
      }
    } else {
      this.#tailIdleTicks = 0;
    }
    const bytes = queue.shift();
    if (bytes) {
      this.codec.decode(bytes, this.#frame.samples);
      if (!this.channel.hangingUp) this.channel.deliver(this.#frame);
    }
    if (this.#xoffSent && queue.length < XON_LEVEL) {
      this.#xoffSent = false;
      this.#sendBare('MEDIA_XON');
    }
  };

  readonly #reportMarker = (kind: 'MEDIA_MARK_PROCESSED' | 'MEDIA_BUFFERING_COMPLETED', correlationId: string): void => {
    if (this.#format === 'json') this.#sendText(jsonEvent(kind, this.channel.id, { correlation_id: correlationId }));
    else this.#sendText(correlationId ? `${kind} ${correlationId}` : kind);
  };

  // ---- events towards the application ----------------------------------------------------------

  #sendMediaStart(): void {
    const { channel } = this;
    const format = this.codec.name;
    if (this.#format === 'json') {
      const variables: Record<string, string> = {};
      for (const name of channel.variableNames()) Object.defineProperty(variables, name, { value: channel.getVariable(name) ?? '', enumerable: true });
      this.#sendText(
        jsonEvent('MEDIA_START', channel.id, {
          connection_id: this.connectionId,
          channel: channel.name,
          format,
          optimal_frame_size: this.optimalFrameSize,
          ptime: PTIME_MS,
          channel_variables: variables,
        }),
      );
    } else {
      this.#sendText(`MEDIA_START connection_id:${this.connectionId} channel:${channel.name} channel_id:${channel.id} format:${format} optimal_frame_size:${this.optimalFrameSize} ptime:${PTIME_MS}`);
    }
  }

  #sendStatus(): void {
    const fields = {
      queue_length: this.#queue.length,
      xon_level: XON_LEVEL,
      xoff_level: XOFF_LEVEL,
      queue_full: this.#xoffSent || this.#queue.length >= QUEUE_LENGTH_MAX,
      bulk_media: this.#buffering,
      media_paused: this.#paused,
    };
    if (this.#format === 'json') this.#sendText(jsonEvent('STATUS', this.channel.id, fields));
    else this.#sendText(`STATUS channel_id:${this.channel.id} ${Object.entries(fields).map(([key, value]) => `${key}:${String(value)}`).join(' ')}`);
  }

  #sendError(text: string): void {
    if (this.#format === 'json') this.#sendText(jsonEvent('ERROR', this.channel.id, { error_text: text }));
    else this.#sendText(`ERROR channel_id:${this.channel.id} error_text:${text}`);
  }

  /** An event without fields: the bare word, or `{"event", "channel_id"}`. */
  #sendBare(event: string): void {
    this.#sendText(this.#format === 'json' ? jsonEvent(event, this.channel.id) : event);
  }

  #sendText(text: string): void {
    const ws = this.#ws;
    if (!ws || ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_UNSENT_BYTES) {
      this.#log.warn({ channel: this.channel.name }, 'media WebSocket application does not read; disconnecting');
      this.#readError = true;
      ws.close(CLOSE.policy);
      return;
    }
    ws.send(text);
  }

  #clearConnectTimer(): void {
    if (this.#connectTimer) clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
  }
}
