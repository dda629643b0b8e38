// Coders that belong to one stream. G.711 and linear audio code each sample on its own (the
// stateless functions of codecs.ts serve every stream at once), but G.722's ADPCM predictors and
// Opus's encoder and decoder carry state from frame to frame: each direction of each stream needs
// its own, created here by codec name. Every coder reads and writes parts of the caller's buffers
// (offsets, no views of its own), so coding a frame allocates nothing here; the Opus library
// hands back a fresh packet or PCM array per call, which is its own.
import { codecInfo, type CodecInfo } from './codecs.ts';
import { samplesPerFrame, type SampleRate } from './frame.ts';
import { G722Decoder, G722Encoder } from './g722.ts';
import { alawDecodeFrom, alawEncodeAt, ulawDecodeFrom, ulawEncodeAt } from './g711.ts';
import { OpusStreamDecoder, OpusStreamEncoder, type OpusSendSettings } from './opus.ts';

/** One stream's encoder: linear audio at `rate` in, the codec's payload out. */
export interface FrameEncoder {
  readonly rate: SampleRate;
  /** Encodes the first `count` samples of `src` (one 20 ms frame) into `dst` from `offset`; returns bytes written. */
  encode(src: Int16Array, count: number, dst: Uint8Array, offset: number): number;
  /** Forgets the state (a new stream or a codec change). */
  reset(): void;
  /** Frees what the coder holds outside the JavaScript heap, now (the stream is done with it); it codes nothing after. */
  release?(): void;
}

/** One stream's decoder: payloads in, linear audio at `rate` out. */
export interface FrameDecoder {
  readonly rate: SampleRate;
  /** The most samples `length` payload bytes can decode to (size of the buffer decode() needs). */
  maxSamples(length: number): number;
  /** Decodes `src[start, end)` into `dst`; returns samples written (0: nothing usable). */
  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number;
  /**
   * Packet loss concealment: fills `dst` with `count` samples standing in for lost audio and
   * returns how many it wrote; 0 when the codec has nothing better than the caller's own
   * (the jitter buffer's faded repeat).
   */
  conceal(dst: Int16Array, count: number): number;
  reset(): void;
  /** As FrameEncoder.release. */
  release?(): void;
}

/** An encoder and a decoder for one stream of one codec. */
export interface StreamCoder {
  readonly info: CodecInfo;
  /** The rate of the linear audio both sides work at. */
  readonly rate: SampleRate;
  readonly encoder: FrameEncoder;
  readonly decoder: FrameDecoder;
}

export interface CoderOptions {
  /** Opus: what the far end asked of what we send. */
  readonly opus?: OpusSendSettings;
}

/**
 * The rate Opus audio is coded and decoded at on our side: 48 kHz, as Asterisk's codec_opus, so a
 * bridge with an Opus member mixes at 48 kHz (the highest member rate) and full-band audio from a
 * browser reaches another wideband member untouched.
 */
export const OPUS_LINEAR_RATE: SampleRate = 48000;

type SampleKind = 'ulaw' | 'alaw' | 'slin';

/** Per-sample codecs (G.711, 16-bit linear little-endian as files keep it): no state, so both sides are one object. */
class SampleCoder implements FrameEncoder, FrameDecoder {
  readonly #bytes: 1 | 2;

  constructor(
    readonly rate: SampleRate,
    private readonly kind: SampleKind,
  ) {
    this.#bytes = kind === 'slin' ? 2 : 1;
  }

  maxSamples(length: number): number {
    return Math.floor(length / this.#bytes);
  }

  encode(src: Int16Array, count: number, dst: Uint8Array, offset: number): number {
    switch (this.kind) {
      case 'ulaw':
        return ulawEncodeAt(src, count, dst, offset);
      case 'alaw':
        return alawEncodeAt(src, count, dst, offset);
      case 'slin':
        for (let i = 0, byte = offset; i < count; i++, byte += 2) {
          dst[byte] = src[i] & 0xff;
          dst[byte + 1] = (src[i] >> 8) & 0xff;
        }
        return count * 2;
    }
  }

  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number {
    const count = Math.min(this.maxSamples(end - start), dst.length);
    switch (this.kind) {
      case 'ulaw':
        return ulawDecodeFrom(src, start, count, dst);
      case 'alaw':
        return alawDecodeFrom(src, start, count, dst);
      case 'slin':
        for (let i = 0, byte = start; i < count; i++, byte += 2) dst[i] = ((src[byte + 1] << 24) | (src[byte] << 16)) >> 16;
        return count;
    }
  }

  conceal(): number {
    return 0;
  }

  reset(): void {
    // nothing kept between frames
  }
}

class G722StreamEncoder implements FrameEncoder {
  readonly rate = 16000;
  readonly #encoder = new G722Encoder();

  encode(src: Int16Array, count: number, dst: Uint8Array, offset: number): number {
    return this.#encoder.encode(src, count, dst, offset);
  }

  reset(): void {
    this.#encoder.reset();
  }
}

class G722StreamDecoder implements FrameDecoder {
  readonly rate = 16000;
  readonly #decoder = new G722Decoder();

  maxSamples(length: number): number {
    return length * 2;
  }

  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number {
    const bytes = Math.min(end - start, dst.length >> 1);
    return this.#decoder.decode(src, start, start + bytes, dst);
  }

  conceal(): number {
    return 0;
  }

  reset(): void {
    this.#decoder.reset();
  }
}

class OpusFrameDecoder implements FrameDecoder {
  readonly #decoder: OpusStreamDecoder;

  constructor(readonly rate: SampleRate) {
    this.#decoder = new OpusStreamDecoder(rate);
  }

  maxSamples(): number {
    return this.#decoder.maxSamples;
  }

  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number {
    return this.#decoder.decode(src, start, end, dst);
  }

  conceal(): number {
    return 0;
  }

  reset(): void {
    this.#decoder.reset();
  }

  release(): void {
    this.#decoder.release();
  }
}

/** The codecs createCoder() makes, by Asterisk's names. */
export const STREAM_CODEC_NAMES = ['ulaw', 'alaw', 'slin', 'slin16', 'g722', 'opus'] as const;
export type StreamCodecName = (typeof STREAM_CODEC_NAMES)[number];

export function isStreamCodecName(name: string): name is StreamCodecName {
  return (STREAM_CODEC_NAMES as readonly string[]).includes(name);
}

/** A fresh encoder/decoder pair for one stream of `name`; undefined for a codec this engine cannot code. */
export function createCoder(name: string, options: CoderOptions = {}): StreamCoder | undefined {
  const info = codecInfo(name);
  if (!info || !isStreamCodecName(name)) return undefined;
  switch (name) {
    case 'ulaw':
    case 'alaw': {
      const coder = new SampleCoder(8000, name);
      return { info, rate: 8000, encoder: coder, decoder: coder };
    }
    case 'slin':
    case 'slin16': {
      const rate = name === 'slin' ? 8000 : 16000;
      const coder = new SampleCoder(rate, 'slin');
      return { info, rate, encoder: coder, decoder: coder };
    }
    case 'g722':
      return { info, rate: 16000, encoder: new G722StreamEncoder(), decoder: new G722StreamDecoder() };
    case 'opus':
      return {
        info,
        rate: OPUS_LINEAR_RATE,
        encoder: new OpusStreamEncoder(OPUS_LINEAR_RATE, options.opus),
        decoder: new OpusFrameDecoder(OPUS_LINEAR_RATE),
      };
  }
}

/** Payload bytes of one 20 ms frame of `coder`, at most (a buffer this large always holds a packet's payload). */
export function maxFrameBytes(coder: StreamCoder): number {
  switch (coder.info.sampleBytes) {
    case 1:
    case 2:
      return samplesPerFrame(coder.rate) * coder.info.sampleBytes;
    default:
      // G.722: one byte per two samples; Opus: RFC 6716 caps a 20 ms frame at 1275 bytes.
      return coder.info.name === 'g722' ? samplesPerFrame(coder.rate) / 2 : 1275;
  }
}
