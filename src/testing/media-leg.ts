// The caller's ears and mouth: a media WebSocket to a `WebSocket` channel (chan_websocket, server
// mode) in the caller's bridge. Every 20 ms frame the caller hears arrives as a binary message of
// 8 kHz linear audio; what it says is sent as such messages and played out by Patchbay at 20 ms a
// frame, the end of it signalled by a mark.
import WebSocket from 'ws';
import type { HeardAudio } from './heard-audio.ts';
import { SAMPLES_PER_FRAME } from './audio-match.ts';

const FRAME_BYTES = SAMPLES_PER_FRAME * 2;
/** Frames per message sent (1 s): well under the 65527-byte message bound. */
const FRAMES_PER_MESSAGE = 50;
/** Frames kept queued on the server ahead of playout: under its 900-frame XOFF level. */
const FRAMES_AHEAD = 400;
/**
 * A media WebSocket is a new connection for each call, and a busy Node.js server takes in one new
 * connection per turn of its event loop: 50 callers starting together at load 15 saw the last
 * wait over 5 s. The server gives an INCOMING channel 30 s (chan_websocket.connect_timeout_seconds).
 */
const CONNECT_TIMEOUT_MS = 20_000;

export class MediaLeg {
  private marks = 0;
  private readonly waitingMarks = new Map<string, () => void>();
  private closed = false;
  private readonly closeWaiters: (() => void)[] = [];

  private constructor(
    private readonly socket: WebSocket,
    private readonly heard: HeardAudio,
  ) {
    socket.on('message', (data, isBinary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        // A frame is 320 bytes; anything else from a confused server is cut to whole samples and bounded.
        if (bytes.length <= 8 * FRAME_BYTES) this.heard.push(bytes);
        return;
      }
      const text = bytes.toString('utf8', 0, Math.min(bytes.length, 512));
      const mark = /^MEDIA_MARK_PROCESSED (?:correlation_id:)?(\S+)/.exec(text);
      if (mark) {
        this.waitingMarks.get(mark[1]!)?.();
        this.waitingMarks.delete(mark[1]!);
      }
    });
    socket.on('close', () => {
      this.closed = true;
      for (const waiter of this.waitingMarks.values()) waiter();
      this.waitingMarks.clear();
      for (const waiter of this.closeWaiters.splice(0)) waiter();
    });
    socket.on('error', () => undefined);
  }

  /** Connects `socket` (made by AriLink.openMedia) and resolves once it is open. */
  static async open(socket: WebSocket, heard: HeardAudio): Promise<MediaLeg> {
    const leg = new MediaLeg(socket, heard);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the media WebSocket did not open within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
      socket.once('open', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('unexpected-response', (_request, response) => {
        clearTimeout(timer);
        reject(new Error(`the media WebSocket was refused: HTTP ${response.statusCode}`));
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    return leg;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /**
   * Says `samples` (8 kHz) into the call and resolves when Patchbay has played the last of them
   * (the end of the caller's utterance, from which turn latency is counted).
   */
  async say(samples: Int16Array, signal?: AbortSignal): Promise<void> {
    const frames = Math.ceil(samples.length / SAMPLES_PER_FRAME);
    const bytes = Buffer.alloc(frames * FRAME_BYTES);
    for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
    const started = Date.now();
    for (let frame = 0; frame < frames; frame += FRAMES_PER_MESSAGE) {
      // Keep at most FRAMES_AHEAD queued: the server drops messages beyond 1000 frames.
      const due = started + Math.max(0, frame - FRAMES_AHEAD) * 20;
      if (due > Date.now()) await sleep(due - Date.now(), signal);
      if (this.closed) throw new Error('the call ended while the caller was speaking');
      await this.send(bytes.subarray(frame * FRAME_BYTES, Math.min(frames, frame + FRAMES_PER_MESSAGE) * FRAME_BYTES));
    }
    const id = `m${++this.marks}`;
    const played = new Promise<void>((resolve) => this.waitingMarks.set(id, resolve));
    await this.send(`MARK_MEDIA ${id}`);
    await played;
    if (this.closed) throw new Error('the call ended while the caller was speaking');
  }

  /** Resolves when the socket has closed (the channel hung up). */
  whenClosed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  close(): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close();
  }

  private send(data: Buffer | string): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(data, (error) => (error ? reject(error) : resolve())));
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
