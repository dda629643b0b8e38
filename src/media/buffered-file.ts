// The write side every recording format shares: encoded bytes gathered in memory and written at
// the end of the file's audio with positioned synchronous writes, so that a stop, hangup or
// SIGTERM handler can flush and close without awaiting anything, and a crash loses at most what
// was gathered since the last flush. The pending buffer is allocated once: nothing per frame.
import { closeSync, writeSync } from 'node:fs';

export class BufferedAudioFile {
  #fd: number;
  readonly #pending: Buffer;
  #pendingBytes = 0;
  #flushedBytes: number;

  /**
   * @param fd the open file (closed by close())
   * @param dataOffset where the audio starts in the file (after any header)
   * @param existingBytes audio bytes already there (appending)
   * @param capacityBytes bytes gathered before they are written
   * @param afterFlush called after every write of gathered bytes (a header describing them is patched)
   */
  constructor(
    fd: number,
    private readonly dataOffset: number,
    existingBytes: number,
    capacityBytes: number,
    private readonly afterFlush: () => void = () => {},
  ) {
    this.#fd = fd;
    this.#flushedBytes = existingBytes;
    this.#pending = Buffer.alloc(Math.max(1, capacityBytes));
  }

  /** The file descriptor; -1 once closed. */
  get fd(): number {
    return this.#fd;
  }

  get closed(): boolean {
    return this.#fd < 0;
  }

  /** Audio bytes on disk. */
  get flushedBytes(): number {
    return this.#flushedBytes;
  }

  /** Audio bytes in the file, including those not written yet. */
  get totalBytes(): number {
    return this.#flushedBytes + this.#pendingBytes;
  }

  /** Gathers `count` bytes of `source`, writing (and flushing) whenever the buffer fills. */
  append(source: Buffer, count: number): void {
    let copied = 0;
    while (copied < count) {
      const chunk = Math.min(count - copied, this.#pending.length - this.#pendingBytes);
      source.copy(this.#pending, this.#pendingBytes, copied, copied + chunk);
      this.#pendingBytes += chunk;
      copied += chunk;
      if (this.#pendingBytes === this.#pending.length) this.flush();
    }
  }

  /** Writes the gathered bytes, then lets the format describe them. */
  flush(): void {
    if (this.closed) return;
    let done = 0;
    while (done < this.#pendingBytes) {
      done += writeSync(this.#fd, this.#pending, done, this.#pendingBytes - done, this.dataOffset + this.#flushedBytes + done);
    }
    this.#flushedBytes += this.#pendingBytes;
    this.#pendingBytes = 0;
    this.afterFlush();
  }

  /** Flushes and closes; safe to call more than once. */
  close(): void {
    if (this.closed) return;
    try {
      this.flush();
    } finally {
      // Closed even when the last write failed (a full disk): the descriptor must not leak.
      const fd = this.#fd;
      this.#fd = -1;
      closeSync(fd);
    }
  }
}
