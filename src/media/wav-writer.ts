// Streaming WAV writer for recordings. Samples are collected in memory and
// written with positioned synchronous writes; every flush first writes the
// samples and only then patches the RIFF and data sizes, so at any moment
// the header describes data that is really on disk. A crash therefore loses
// at most the samples gathered since the last flush, and a stop, hangup or
// SIGTERM handler can finalize without awaiting anything.
import { fstatSync, ftruncateSync, readSync, writeSync } from 'node:fs';
import { BufferedAudioFile } from './buffered-file.ts';
import { openPrepared } from './open-for-writing.ts';
import {
  CANONICAL_HEADER_BYTES,
  RIFF_SIZE_OFFSET,
  WAVE_FORMAT_PCM,
  WavFormatError,
  buildPcm16MonoHeader,
  maxDataBytesFor,
  parseWavLayout,
  type ByteSource,
} from './wav.ts';

export interface WavWriterOptions {
  readonly rate: number;
  /** Continue an existing file of the same format instead of replacing it. */
  readonly append?: boolean;
  /** Create the file; EEXIST when the name is taken (see openForWriting). */
  readonly exclusive?: boolean;
  /** With `exclusive`: continue a copy of this file (see openForWriting). */
  readonly copyFrom?: string;
  /** Audio kept in memory between automatic flushes; default 1000 ms. */
  readonly flushIntervalMs?: number;
}

const DEFAULT_FLUSH_INTERVAL_MS = 1000;
const BYTES_PER_SAMPLE = 2;

interface ExistingData {
  readonly dataOffset: number;
  readonly dataBytes: number;
}

function fileByteSource(fd: number): ByteSource {
  return (offset, length) => {
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, offset);
    return buffer.subarray(0, read);
  };
}

// Locates the data to continue after, and drops any chunk that follows the
// data (e.g. a trailing LIST) because new samples must extend the data chunk.
function prepareForAppend(fd: number, rate: number): ExistingData | undefined {
  const fileLength = fstatSync(fd).size;
  if (fileLength === 0) return undefined;
  const layout = parseWavLayout(fileByteSource(fd), fileLength);
  const { format } = layout;
  if (format.formatTag !== WAVE_FORMAT_PCM || format.bitsPerSample !== 16 || format.channels !== 1) {
    throw new WavFormatError('can only append to 16-bit mono PCM WAV');
  }
  if (format.sampleRate !== rate) {
    throw new WavFormatError(`cannot append ${rate} Hz audio to a ${format.sampleRate} Hz file`);
  }
  // When the data chunk is last, bytes past its declared size were written by
  // a writer that died before patching the header: they are good samples.
  let dataBytes = layout.dataIsLast ? fileLength - layout.dataOffset : layout.dataBytes;
  dataBytes -= dataBytes % BYTES_PER_SAMPLE;
  const dataEnd = layout.dataOffset + dataBytes;
  if (dataEnd !== fileLength) ftruncateSync(fd, dataEnd);
  return { dataOffset: layout.dataOffset, dataBytes };
}

export class WavWriter {
  readonly path: string;
  readonly rate: number;
  private readonly file: BufferedAudioFile;
  private readonly dataOffset: number;
  private readonly maxDataBytes: number;
  /** Samples as little-endian bytes on their way to the file (grown, never shrunk: none per frame). */
  private scratch: Buffer = Buffer.alloc(0);
  private readonly sizeField = Buffer.alloc(4);

  private constructor(path: string, rate: number, fd: number, existing: ExistingData, flushIntervalMs: number) {
    this.path = path;
    this.rate = rate;
    this.dataOffset = existing.dataOffset;
    this.maxDataBytes = maxDataBytesFor(existing.dataOffset);
    const pendingSamples = Math.max(1, Math.ceil((rate * flushIntervalMs) / 1000));
    this.file = new BufferedAudioFile(fd, existing.dataOffset, existing.dataBytes, pendingSamples * BYTES_PER_SAMPLE, () => this.patchSizes());
  }

  static open(path: string, options: WavWriterOptions): WavWriter {
    const { rate } = options;
    if (!Number.isInteger(rate) || rate <= 0) throw new RangeError(`invalid sample rate ${rate}`);
    const append = options.append === true || options.copyFrom !== undefined;
    return openPrepared(path, options, (fd) => {
      const existing = append ? prepareForAppend(fd, rate) : undefined;
      const writer = new WavWriter(
        path,
        rate,
        fd,
        existing ?? { dataOffset: CANONICAL_HEADER_BYTES, dataBytes: 0 },
        options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS,
      );
      if (existing === undefined) writeSync(fd, buildPcm16MonoHeader(rate, 0), 0, CANONICAL_HEADER_BYTES, 0);
      else writer.patchSizes();
      return writer;
    });
  }

  get closed(): boolean {
    return this.file.closed;
  }

  /** Samples in the file, including ones not flushed yet. */
  get samplesWritten(): number {
    return this.file.totalBytes / BYTES_PER_SAMPLE;
  }

  get durationMs(): number {
    return (this.samplesWritten * 1000) / this.rate;
  }

  /**
   * Queues samples, flushing when the interval's worth is gathered. Returns
   * false, writing nothing, once closed or when the 4 GiB RIFF limit is hit.
   */
  write(samples: Int16Array): boolean {
    if (this.closed) return false;
    const byteCount = samples.length * BYTES_PER_SAMPLE;
    if (this.file.totalBytes + byteCount > this.maxDataBytes) return false;
    if (this.scratch.length < byteCount) this.scratch = Buffer.alloc(byteCount);
    const scratch = this.scratch;
    for (let index = 0, byte = 0; index < samples.length; index++, byte += 2) {
      const sample = samples[index];
      scratch[byte] = sample & 0xff;
      scratch[byte + 1] = (sample >> 8) & 0xff;
    }
    this.file.append(scratch, byteCount);
    return true;
  }

  /** Writes queued samples, then makes the header describe them. */
  flush(): void {
    this.file.flush();
  }

  /** Flushes and closes; safe to call more than once. */
  finalize(): void {
    this.file.close();
  }

  private patchSizes(): void {
    this.writeSizeField(RIFF_SIZE_OFFSET, this.dataOffset - 8 + this.file.flushedBytes);
    this.writeSizeField(this.dataOffset - 4, this.file.flushedBytes);
  }

  private writeSizeField(position: number, value: number): void {
    this.sizeField.writeUInt32LE(value, 0);
    writeSync(this.file.fd, this.sizeField, 0, 4, position);
  }
}
