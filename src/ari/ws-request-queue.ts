// The REST requests of one inbound event WebSocket, answered one at a time in arrival order, as
// Asterisk's session thread answers them (it reads the next frame only once a request is done).
// Node reads frames as fast as they come, so a client flooding requests would otherwise start them
// all at once: past PAUSE_AT waiting requests the socket stops being read (TCP pushes back on the
// client, as Asterisk's does), and requests already read beyond REFUSE_AT get 503 at once.
import type { WebSocket } from 'ws';

/** Waiting requests at which the socket stops being read until they are done. */
export const PAUSE_AT = 256;
/** Waiting requests beyond which one read anyway (frames already received when reading stopped) is refused. */
export const REFUSE_AT = 1024;

export class WebSocketRequestQueue {
  #chain: Promise<void> = Promise.resolve();
  #waiting = 0;

  constructor(
    private readonly socket: Pick<WebSocket, 'pause' | 'resume' | 'isPaused'>,
    /** Answers one request (its RESTResponse goes back on the socket); a rejection is `failed`'s. */
    private readonly answer: (text: string) => Promise<void>,
    private readonly failed: (err: unknown) => void,
    /** Answers a request refused for the flood (503). */
    private readonly refuse: () => void,
  ) {}

  /** Requests read and not yet answered. */
  get waiting(): number {
    return this.#waiting;
  }

  push(text: string): void {
    if (this.#waiting >= REFUSE_AT) return this.refuse();
    this.#waiting++;
    if (this.#waiting >= PAUSE_AT && !this.socket.isPaused) this.socket.pause();
    this.#chain = this.#chain
      .then(() => this.answer(text))
      .catch(this.failed)
      .finally(() => {
        this.#waiting--;
        if (this.#waiting < PAUSE_AT / 2 && this.socket.isPaused) this.socket.resume();
      });
  }
}
