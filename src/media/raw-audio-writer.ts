// Headerless recordings (.ulaw, .alaw, .sln, .sln16): the file is nothing
// but encoded samples, so a crash can only lose the unflushed tail and
// appending is just writing at the end.
import { fstatSync, ftruncateSync } from 'node:fs';
import { BufferedAudioFile } from './buffered-file.ts';
import type { Codec } from './codecs.ts';
import { openPrepared } from './open-for-writing.ts';

export interface RawAudioWriterOptions {
  readonly codec: Codec;
  readonly append?: boolean;
  /** Create the file; EEXIST when the name is taken (see openForWriting). */
  readonly exclusive?: boolean;
  /** With `exclusive`: continue a copy of this file (see openForWriting). */
  readonly copyFrom?: string;
  /** Audio kept in memory between automatic flushes; default 1000 ms. */
  readonly flushIntervalMs?: number;
}

const DEFAULT_FLUSH_INTERVAL_MS = 1000;

export class RawAudioWriter {
  readonly path: string;
  readonly codec: Codec;
  private readonly file: BufferedAudioFile;
  // Encoding goes through a scratch buffer so that the file's pending bytes
  // can be filled at any offset without creating a view per frame.
  private scratch: Buffer = Buffer.alloc(0);

  private constructor(path: string, codec: Codec, fd: number, existingBytes: number, flushIntervalMs: number) {
    this.path = path;
    this.codec = codec;
    const pendingSamples = Math.max(1, Math.ceil((codec.rate * flushIntervalMs) / 1000));
    this.file = new BufferedAudioFile(fd, 0, existingBytes, pendingSamples * codec.bytesPerSample);
  }

  static open(path: string, options: RawAudioWriterOptions): RawAudioWriter {
    const { codec } = options;
    const append = options.append === true || options.copyFrom !== undefined;
    return openPrepared(path, options, (fd) => {
      let existingBytes = 0;
      if (append) {
        const size = fstatSync(fd).size;
        // A torn final sample (odd byte of slin) would shift every later one.
        existingBytes = size - (size % codec.bytesPerSample);
        if (existingBytes !== size) ftruncateSync(fd, existingBytes);
      }
      return new RawAudioWriter(path, codec, fd, existingBytes, options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS);
    });
  }

  get rate(): number {
    return this.codec.rate;
  }

  get closed(): boolean {
    return this.file.closed;
  }

  get samplesWritten(): number {
    return this.file.totalBytes / this.codec.bytesPerSample;
  }

  get durationMs(): number {
    return (this.samplesWritten * 1000) / this.codec.rate;
  }

  /** Queues samples, flushing when the interval's worth is gathered; false once closed. */
  write(samples: Int16Array): boolean {
    if (this.closed) return false;
    const byteCount = samples.length * this.codec.bytesPerSample;
    if (this.scratch.length < byteCount) this.scratch = Buffer.alloc(byteCount);
    this.codec.encode(samples, this.scratch);
    this.file.append(this.scratch, byteCount);
    return true;
  }

  flush(): void {
    this.file.flush();
  }

  finalize(): void {
    this.file.close();
  }
}
