// Formats by the names Asterisk gives them. Each codec converts between its
// wire/file bytes and 16-bit linear samples at its own rate, writing into
// buffers owned by the caller so the media loop never allocates.
import { alawDecode, alawEncode, ulawDecode, ulawEncode } from './g711.ts';
import { samplesPerFrame, type SampleRate } from './frame.ts';

export type CodecName = 'ulaw' | 'alaw' | 'slin' | 'slin16';

export interface Codec {
  readonly name: CodecName;
  readonly rate: SampleRate;
  readonly bytesPerSample: 1 | 2;
  /** Bytes in one 20 ms frame. */
  readonly bytesPerFrame: number;
  /** Decodes every whole sample in `src` into `dst`; returns samples written. */
  decode(src: Uint8Array, dst: Int16Array): number;
  /** Encodes every sample of `src` into `dst`; returns bytes written. */
  encode(src: Int16Array, dst: Uint8Array): number;
}

/** Signed 16-bit little-endian, as Asterisk stores slin on the usual hosts. */
export function decodeS16le(src: Uint8Array, dst: Int16Array): number {
  const count = src.length >> 1;
  if (dst.length < count) throw new RangeError(`output buffer holds ${dst.length}, needs ${count}`);
  for (let i = 0, byte = 0; i < count; i++, byte += 2) {
    dst[i] = ((src[byte] | (src[byte + 1] << 8)) << 16) >> 16;
  }
  return count;
}

export function encodeS16le(src: Int16Array, dst: Uint8Array): number {
  const count = src.length;
  if (dst.length < count * 2) {
    throw new RangeError(`output buffer holds ${dst.length}, needs ${count * 2}`);
  }
  for (let i = 0, byte = 0; i < count; i++, byte += 2) {
    const sample = src[i];
    dst[byte] = sample & 0xff;
    dst[byte + 1] = (sample >> 8) & 0xff;
  }
  return count * 2;
}

function defineCodec(
  name: CodecName,
  rate: SampleRate,
  bytesPerSample: 1 | 2,
  decode: Codec['decode'],
  encode: Codec['encode'],
): Codec {
  return Object.freeze({
    name,
    rate,
    bytesPerSample,
    bytesPerFrame: samplesPerFrame(rate) * bytesPerSample,
    decode,
    encode,
  });
}

const codecsByName: ReadonlyMap<string, Codec> = new Map<string, Codec>([
  ['ulaw', defineCodec('ulaw', 8000, 1, ulawDecode, ulawEncode)],
  ['alaw', defineCodec('alaw', 8000, 1, alawDecode, alawEncode)],
  ['slin', defineCodec('slin', 8000, 2, decodeS16le, encodeS16le)],
  ['slin16', defineCodec('slin16', 16000, 2, decodeS16le, encodeS16le)],
]);

export const CODEC_NAMES: readonly CodecName[] = ['ulaw', 'alaw', 'slin', 'slin16'];

/** Undefined for a name this engine cannot handle; the HTTP layer answers 422. */
export function getCodec(name: string): Codec | undefined {
  return codecsByName.get(name);
}

/** How a recording or sound file stores its audio. */
export interface FileFormat {
  /** The name accepted in ARI's `format` parameter. */
  readonly name: string;
  /** File name extension, without the dot. */
  readonly extension: string;
  readonly container: 'wav' | 'raw';
  /** The sample encoding inside the container. */
  readonly codec: Codec;
}

function defineFileFormat(name: string, container: FileFormat['container'], codecName: CodecName): FileFormat {
  const codec = codecsByName.get(codecName);
  if (codec === undefined) throw new Error(`no codec ${codecName}`);
  return Object.freeze({ name, extension: name, container, codec });
}

const primaryFileFormats: readonly FileFormat[] = [
  defineFileFormat('wav', 'wav', 'slin'),
  defineFileFormat('wav16', 'wav', 'slin16'),
  defineFileFormat('ulaw', 'raw', 'ulaw'),
  defineFileFormat('alaw', 'raw', 'alaw'),
  defineFileFormat('sln', 'raw', 'slin'),
  defineFileFormat('sln16', 'raw', 'slin16'),
];

// Asterisk's format modules also answer to these extensions; accepting them
// lets clients that learnt them from Asterisk keep working.
const extensionAliases: ReadonlyMap<string, string> = new Map([
  ['ul', 'ulaw'],
  ['pcm', 'ulaw'],
  ['mu', 'ulaw'],
  ['ulw', 'ulaw'],
  ['al', 'alaw'],
  ['alw', 'alaw'],
  ['raw', 'sln'],
  ['slin', 'sln'],
  ['slin16', 'sln16'],
]);

const fileFormatsByName: ReadonlyMap<string, FileFormat> = new Map(
  primaryFileFormats.map((format) => [format.name, format]),
);

export const FILE_FORMAT_NAMES: readonly string[] = primaryFileFormats.map((format) => format.name);

/** Looks a format up by ARI name or file extension (with or without the dot). */
export function getFileFormat(nameOrExtension: string): FileFormat | undefined {
  const bare = nameOrExtension.startsWith('.') ? nameOrExtension.slice(1) : nameOrExtension;
  const key = bare.toLowerCase();
  return fileFormatsByName.get(extensionAliases.get(key) ?? key);
}

/** The format a file name implies through its extension. */
export function fileFormatForPath(path: string): FileFormat | undefined {
  const dot = path.lastIndexOf('.');
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  if (dot <= slash + 1) return undefined;
  return getFileFormat(path.slice(dot + 1));
}
