// One entry point for recordings and sound files whatever their format, so
// the recording and playback code never branches on containers itself.
import { readFileSync } from 'node:fs';
import { fileFormatForPath, type FileFormat } from './codecs.ts';
import { RawAudioWriter } from './raw-audio-writer.ts';
import { decodeWav } from './wav-reader.ts';
import { WavWriter } from './wav-writer.ts';

export interface AudioFileWriter {
  readonly path: string;
  readonly rate: number;
  readonly closed: boolean;
  readonly samplesWritten: number;
  readonly durationMs: number;
  write(samples: Int16Array): boolean;
  flush(): void;
  finalize(): void;
}

export interface AudioFileWriterOptions {
  readonly append?: boolean;
  /** Create the file; EEXIST when the name is taken (see openForWriting). */
  readonly exclusive?: boolean;
  /** With `exclusive`: continue a copy of this file (see openForWriting). */
  readonly copyFrom?: string;
  readonly flushIntervalMs?: number;
}

/** Samples written are expected at `format.codec.rate`. */
export function openAudioFileWriter(path: string, format: FileFormat, options: AudioFileWriterOptions = {}): AudioFileWriter {
  if (format.container === 'wav') return WavWriter.open(path, { rate: format.codec.rate, ...options });
  return RawAudioWriter.open(path, { codec: format.codec, ...options });
}

export interface DecodedAudio {
  readonly samples: Int16Array;
  readonly rate: number;
}

export function decodeAudio(bytes: Uint8Array, format: FileFormat): DecodedAudio {
  if (format.container === 'wav') {
    const { samples, rate } = decodeWav(bytes);
    return { samples, rate };
  }
  const { codec } = format;
  const samples = new Int16Array(Math.floor(bytes.length / codec.bytesPerSample));
  codec.decode(bytes.subarray(0, samples.length * codec.bytesPerSample), samples);
  return { samples, rate: codec.rate };
}

/** Reads a file in the format its extension names; undefined for unknown extensions. */
export function readAudioFile(path: string, format: FileFormat | undefined = fileFormatForPath(path)): DecodedAudio | undefined {
  if (format === undefined) return undefined;
  return decodeAudio(readFileSync(path), format);
}
