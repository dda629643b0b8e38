// The codec table: every media format by the name Asterisk gives it, with what RTP says of it
// (payload type, clock rate, byte order) and, for the formats this engine can code, the coder
// between its wire/file bytes and 16-bit linear samples at its own rate, writing into buffers
// owned by the caller so the media loop never allocates. Requests (`formats`), external media,
// recordings and the RTP library all read this one table.
import { alawDecode, alawEncode, ulawDecode, ulawEncode } from './g711.ts';
import { samplesPerFrame, type SampleRate } from './frame.ts';

/** What the table says of every format, coded here or not. */
export interface CodecInfo {
  readonly name: string;
  /** RTP payload type: the static one of RFC 3551, or the dynamic one Asterisk offers. */
  readonly payloadType: number;
  /** RTP timestamp rate (G.722 counts 8000 for its 16 kHz audio, as RFC 3551 says). */
  readonly clockRate: number;
  /** Bytes per encoded sample: 1 (G.711), 2 (linear), 0 for frame-based codecs. */
  readonly sampleBytes: 0 | 1 | 2;
  /**
   * Byte order of 2-byte samples on the wire in RTP (L16 is in network order, RFC 3551 4.5.11);
   * files keep Asterisk's host order, little-endian. `none` for other sample sizes.
   */
  readonly byteOrder: 'big' | 'none';
}

const CODEC_TABLE = [
  { name: 'ulaw', payloadType: 0, clockRate: 8000, sampleBytes: 1, byteOrder: 'none' },
  { name: 'alaw', payloadType: 8, clockRate: 8000, sampleBytes: 1, byteOrder: 'none' },
  { name: 'slin', payloadType: 119, clockRate: 8000, sampleBytes: 2, byteOrder: 'big' },
  { name: 'slin16', payloadType: 118, clockRate: 16000, sampleBytes: 2, byteOrder: 'big' },
  { name: 'g722', payloadType: 9, clockRate: 8000, sampleBytes: 0, byteOrder: 'none' },
  { name: 'opus', payloadType: 107, clockRate: 48000, sampleBytes: 0, byteOrder: 'none' },
  { name: 'gsm', payloadType: 3, clockRate: 8000, sampleBytes: 0, byteOrder: 'none' },
  { name: 'g729', payloadType: 18, clockRate: 8000, sampleBytes: 0, byteOrder: 'none' },
  { name: 'slin24', payloadType: 123, clockRate: 24000, sampleBytes: 2, byteOrder: 'big' },
  { name: 'slin48', payloadType: 126, clockRate: 48000, sampleBytes: 2, byteOrder: 'big' },
] as const satisfies readonly CodecInfo[];

/** Every format name the server knows (a request's `formats` may name any of them). */
export type KnownCodecName = (typeof CODEC_TABLE)[number]['name'];
/** The formats this engine codes (the ones with samples of 1 or 2 bytes). */
export type CodecName = Extract<(typeof CODEC_TABLE)[number], { sampleBytes: 1 | 2 }>['name'];

export const KNOWN_CODEC_NAMES: readonly KnownCodecName[] = CODEC_TABLE.map((entry) => entry.name);

/** A format this engine codes. */
export interface Codec extends CodecInfo {
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

const CODERS: Readonly<Record<CodecName, { rate: SampleRate; decode: Codec['decode']; encode: Codec['encode'] }>> = {
  ulaw: { rate: 8000, decode: ulawDecode, encode: ulawEncode },
  alaw: { rate: 8000, decode: alawDecode, encode: alawEncode },
  slin: { rate: 8000, decode: decodeS16le, encode: encodeS16le },
  slin16: { rate: 16000, decode: decodeS16le, encode: encodeS16le },
  slin24: { rate: 24000, decode: decodeS16le, encode: encodeS16le },
  slin48: { rate: 48000, decode: decodeS16le, encode: encodeS16le },
};

const infoByName: ReadonlyMap<string, CodecInfo> = new Map(CODEC_TABLE.map((entry) => [entry.name, Object.freeze({ ...entry })]));

const codecsByName: ReadonlyMap<string, Codec> = new Map(
  CODEC_TABLE.flatMap((entry): [string, Codec][] => {
    if (entry.sampleBytes === 0) return [];
    const coder = CODERS[entry.name];
    const codec: Codec = Object.freeze({
      ...entry,
      rate: coder.rate,
      bytesPerSample: entry.sampleBytes,
      bytesPerFrame: samplesPerFrame(coder.rate) * entry.sampleBytes,
      decode: coder.decode,
      encode: coder.encode,
    });
    return [[entry.name, codec]];
  }),
);

/** The formats this engine codes, in table order. */
export const CODEC_NAMES: readonly CodecName[] = [...codecsByName.keys()] as CodecName[];

/** Undefined for a name this engine cannot code; the HTTP layer answers 422. */
export function getCodec(name: string): Codec | undefined {
  return codecsByName.get(name);
}

export function isCodecName(name: string): name is CodecName {
  return codecsByName.has(name);
}

/** What the table says of a format (coded here or not); undefined for an unknown name. */
export function codecInfo(name: string): CodecInfo | undefined {
  return infoByName.get(name);
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
  defineFileFormat('sln24', 'raw', 'slin24'),
  defineFileFormat('sln48', 'raw', 'slin48'),
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
  ['slin24', 'sln24'],
  ['slin48', 'sln48'],
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
