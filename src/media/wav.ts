// RIFF/WAVE layout shared by the streaming writer and the reader: the
// canonical 44-byte PCM header we write, and a chunk walker for files written
// by anyone (which may carry LIST, fact, cue… chunks before or after data).

export const WAVE_FORMAT_PCM = 0x0001;
export const WAVE_FORMAT_IEEE_FLOAT = 0x0003;
export const WAVE_FORMAT_ALAW = 0x0006;
export const WAVE_FORMAT_MULAW = 0x0007;
export const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

export const CANONICAL_HEADER_BYTES = 44;
export const RIFF_SIZE_OFFSET = 4;
/** Bytes of the RIFF chunk that precede the first sub-chunk ("WAVE"). */
const RIFF_PREAMBLE_BYTES = 12;
const CHUNK_HEADER_BYTES = 8;
const FMT_PCM_BODY_BYTES = 16;

/** Largest even data size whose RIFF size field still fits in 32 bits. */
export function maxDataBytesFor(dataOffset: number): number {
  const limit = 0xffffffff - (dataOffset - CHUNK_HEADER_BYTES);
  return limit - (limit & 1);
}

export class WavFormatError extends Error {
  override readonly name = 'WavFormatError';
}

/** Canonical header for 16-bit mono PCM carrying `dataBytes` of samples. */
export function buildPcm16MonoHeader(rate: number, dataBytes: number): Buffer {
  const header = Buffer.alloc(CANONICAL_HEADER_BYTES);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(CANONICAL_HEADER_BYTES - CHUNK_HEADER_BYTES + dataBytes, RIFF_SIZE_OFFSET);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(FMT_PCM_BODY_BYTES, 16);
  header.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  header.writeUInt16LE(1, 22); // channels
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

export interface WavFormat {
  /** The effective tag: for WAVE_FORMAT_EXTENSIBLE, the sub-format's tag. */
  readonly formatTag: number;
  readonly channels: number;
  readonly sampleRate: number;
  readonly byteRate: number;
  readonly blockAlign: number;
  readonly bitsPerSample: number;
}

export interface WavLayout {
  readonly format: WavFormat;
  /** File offset of the first sample byte. */
  readonly dataOffset: number;
  /** Data bytes usable: the declared size, clipped to what the file holds. */
  readonly dataBytes: number;
  /** No chunk follows the data; any bytes after it are unpatched samples. */
  readonly dataIsLast: boolean;
}

/** Reads `length` bytes at `offset`; may return fewer at end of file. */
export type ByteSource = (offset: number, length: number) => Uint8Array;

function chunkId(bytes: Uint8Array): string {
  return String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]);
}

function readUint16(bytes: Uint8Array, offset: number): number {
  return bytes[offset] | (bytes[offset + 1] << 8);
}

function readUint32(bytes: Uint8Array, offset: number): number {
  return (bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16)) + bytes[offset + 3] * 0x1000000;
}

function parseFormatBody(body: Uint8Array): WavFormat {
  if (body.length < FMT_PCM_BODY_BYTES) throw new WavFormatError('fmt chunk too short');
  let formatTag = readUint16(body, 0);
  if (formatTag === WAVE_FORMAT_EXTENSIBLE) {
    // cbSize(2) validBits(2) channelMask(4), then the sub-format GUID whose
    // first two bytes are the real format tag.
    if (body.length < 26) throw new WavFormatError('extensible fmt chunk too short');
    formatTag = readUint16(body, 24);
  }
  return {
    formatTag,
    channels: readUint16(body, 2),
    sampleRate: readUint32(body, 4),
    byteRate: readUint32(body, 8),
    blockAlign: readUint16(body, 12),
    bitsPerSample: readUint16(body, 14),
  };
}

function isPrintableAscii(byte: number): boolean {
  return byte >= 0x20 && byte <= 0x7e;
}

// Bytes after the declared data are either another chunk or samples a
// writer appended before it died without patching the size; a chunk has a
// printable four-character id and fits in the file.
function startsPlausibleChunk(read: ByteSource, offset: number, fileLength: number): boolean {
  if (offset + CHUNK_HEADER_BYTES > fileLength) return false;
  const header = read(offset, CHUNK_HEADER_BYTES);
  if (header.length < CHUNK_HEADER_BYTES) return false;
  for (let i = 0; i < 4; i++) if (!isPrintableAscii(header[i])) return false;
  return offset + CHUNK_HEADER_BYTES + readUint32(header, 4) <= fileLength;
}

/** Walks the chunks of a RIFF/WAVE file of `fileLength` bytes. */
export function parseWavLayout(read: ByteSource, fileLength: number): WavLayout {
  const preamble = read(0, RIFF_PREAMBLE_BYTES);
  if (preamble.length < RIFF_PREAMBLE_BYTES || chunkId(preamble) !== 'RIFF' || chunkId(preamble.subarray(8)) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file');
  }
  let format: WavFormat | undefined;
  let dataOffset = -1;
  let dataBytes = 0;
  let dataIsLast = false;
  let offset = RIFF_PREAMBLE_BYTES;
  while (offset + CHUNK_HEADER_BYTES <= fileLength) {
    const header = read(offset, CHUNK_HEADER_BYTES);
    if (header.length < CHUNK_HEADER_BYTES) break;
    const id = chunkId(header);
    const size = readUint32(header, 4);
    const bodyOffset = offset + CHUNK_HEADER_BYTES;
    if (id === 'fmt ' && format === undefined) {
      format = parseFormatBody(read(bodyOffset, Math.min(size, 64)));
    } else if (id === 'data' && dataOffset < 0) {
      dataOffset = bodyOffset;
      // Streaming writers elsewhere leave 0xFFFFFFFF or a stale size; trust
      // the file length when the declared size overshoots it.
      dataBytes = Math.min(size, fileLength - bodyOffset);
      dataIsLast = !startsPlausibleChunk(read, bodyOffset + size + (size & 1), fileLength);
      if (dataIsLast) break;
    }
    // Chunks are padded to an even length.
    offset = bodyOffset + size + (size & 1);
  }
  if (format === undefined) throw new WavFormatError('no fmt chunk');
  if (dataOffset < 0) throw new WavFormatError('no data chunk');
  return { format, dataOffset, dataBytes, dataIsLast };
}

export function byteSourceOf(bytes: Uint8Array): ByteSource {
  return (offset, length) => bytes.subarray(offset, offset + length);
}
