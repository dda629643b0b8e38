// RTP payloads of the codecs this engine codes, as the codec table describes them: G.711 one byte
// per sample, L16 two bytes in network order, and the frame codecs (G.722, Opus) through a coder
// of this stream's own (stream-coder.ts), since they carry state from packet to packet. Reads
// from and writes into parts of the caller's buffers (offsets, no views), so coding a packet
// allocates nothing here.
import { codecInfo, getCodec, type CodecInfo } from '../codecs.ts';
import { alawDecodeFrom, alawEncodeAt, ulawDecodeFrom, ulawEncodeAt } from '../g711.ts';
import type { SampleRate } from '../frame.ts';
import { createResampler, type Resampler } from '../resample.ts';
import { createCoder, type CoderOptions, type StreamCoder } from '../stream-coder.ts';

type Kind = 'ulaw' | 'alaw' | 'l16be' | 'l16le' | 'frame';

export class RtpPayloadCoder {
  readonly codec: CodecInfo;
  readonly payloadType: number;
  /** The rate of the linear audio this coder takes and gives (G.722: 16000 for its 8000 clock). */
  readonly rate: SampleRate;
  /** 0 for frame codecs. */
  readonly bytesPerSample: 0 | 1 | 2;
  readonly #kind: Kind;
  /** The stream's own coder, for frame codecs. */
  readonly #frame: StreamCoder | undefined;
  /** Receive side: the last RTP timestamp seen, its image in samples (see sampleTimestamp) and the clock units not yet a whole sample. */
  #lastTimestamp: number | undefined;
  #sampleTimestamp = 0;
  #remainder = 0;
  /** Receive side: a payload of another rate than the receive path's is resampled (see toRate). */
  #resampler: Resampler | undefined;
  #converted = new Int16Array(0);

  /** `payloadType` defaults to the table's (an SDP may negotiate another); `options` shape frame codecs (Opus's fmtp). */
  constructor(codecName: string, payloadType?: number, options?: CoderOptions) {
    const sampleCodec = getCodec(codecName);
    const info = sampleCodec ?? codecInfo(codecName);
    const frame = sampleCodec ? undefined : createCoder(codecName, options);
    if (!info || (!sampleCodec && !frame)) throw new RangeError(`no RTP payload coder for ${codecName}`);
    this.codec = info;
    this.payloadType = payloadType ?? info.payloadType;
    this.#frame = frame;
    this.rate = sampleCodec?.rate ?? frame!.rate;
    this.bytesPerSample = sampleCodec?.bytesPerSample ?? 0;
    this.#kind = frame ? 'frame' : info.name === 'ulaw' ? 'ulaw' : info.name === 'alaw' ? 'alaw' : info.byteOrder === 'big' ? 'l16be' : 'l16le';
  }

  /** Payload bytes for `samples` samples (sample codecs; frame codecs vary and say 0). */
  bytesFor(samples: number): number {
    return samples * this.bytesPerSample;
  }

  /**
   * The RTP timestamp of a received packet in samples at `rate` (the receive path's), for the
   * jitter buffer, which places audio by sample. When the clock is that rate already it is the
   * timestamp itself; otherwise (G.722's 8000 clock for 16 kHz audio, Opus's 48000) each step from
   * the last timestamp is scaled and added, so the 32-bit wrap stays seamless and every number
   * stays small whatever a far end sends (a step is at most ±2^31 clock units).
   */
  sampleTimestamp(timestamp: number, rate: SampleRate): number {
    const clock = this.codec.clockRate;
    if (clock === rate) return timestamp;
    const last = this.#lastTimestamp;
    this.#lastTimestamp = timestamp;
    if (last === undefined) {
      this.#sampleTimestamp = Math.floor((timestamp * rate) / clock) >>> 0;
      this.#remainder = 0;
      return this.#sampleTimestamp;
    }
    const units = ((timestamp - last) | 0) * rate + this.#remainder;
    const samples = Math.floor(units / clock);
    this.#remainder = units - samples * clock;
    this.#sampleTimestamp = (this.#sampleTimestamp + samples) >>> 0;
    return this.#sampleTimestamp;
  }

  /** Samples written by the last toRate(). */
  convertedCount = 0;

  /**
   * Brings `count` decoded samples to `rate` with this coder's own resampler (its history is this
   * payload type's); returns a buffer reused on the next call, convertedCount samples long.
   */
  toRate(samples: Int16Array, count: number, rate: SampleRate): Int16Array {
    if (!this.#resampler || this.#resampler.toRate !== rate) this.#resampler = createResampler(this.rate, rate);
    const needed = this.#resampler.outputLength(count);
    if (this.#converted.length < needed) this.#converted = new Int16Array(needed);
    this.convertedCount = this.#resampler.process(count === samples.length ? samples : samples.subarray(0, count), this.#converted);
    return this.#converted;
  }

  /** Encodes every sample of `src` into `dst` from `offset`; returns bytes written. */
  encode(src: Int16Array, dst: Uint8Array, offset: number): number {
    const count = src.length;
    switch (this.#kind) {
      case 'frame':
        return this.#frame!.encoder.encode(src, count, dst, offset);
      case 'ulaw':
        return ulawEncodeAt(src, count, dst, offset);
      case 'alaw':
        return alawEncodeAt(src, count, dst, offset);
      case 'l16be':
        for (let i = 0, byte = offset; i < count; i++, byte += 2) {
          const sample = src[i];
          dst[byte] = (sample >> 8) & 0xff;
          dst[byte + 1] = sample & 0xff;
        }
        return count * 2;
      case 'l16le':
        for (let i = 0, byte = offset; i < count; i++, byte += 2) {
          const sample = src[i];
          dst[byte] = sample & 0xff;
          dst[byte + 1] = (sample >> 8) & 0xff;
        }
        return count * 2;
    }
  }

  /** Samples in `src[start, end)` (whole samples only); for frame codecs, the most it can decode to. */
  samplesIn(start: number, end: number): number {
    if (this.#frame) return this.#frame.decoder.maxSamples(end - start);
    return Math.floor((end - start) / this.bytesPerSample);
  }

  /** Frees the frame codec's state now (the stream is done with this coder); it codes nothing after. */
  release(): void {
    this.#frame?.encoder.release?.();
    this.#frame?.decoder.release?.();
  }

  /** Decodes the whole samples of `src[start, end)` into `dst` (which must hold them); returns samples written. */
  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number {
    const count = this.samplesIn(start, end);
    switch (this.#kind) {
      case 'frame':
        return this.#frame!.decoder.decode(src, start, end, dst);
      case 'ulaw':
        return ulawDecodeFrom(src, start, count, dst);
      case 'alaw':
        return alawDecodeFrom(src, start, count, dst);
      case 'l16be':
        for (let i = 0, byte = start; i < count; i++, byte += 2) dst[i] = ((src[byte] << 24) | (src[byte + 1] << 16)) >> 16;
        return count;
      case 'l16le':
        for (let i = 0, byte = start; i < count; i++, byte += 2) dst[i] = ((src[byte + 1] << 24) | (src[byte] << 16)) >> 16;
        return count;
    }
  }
}

/**
 * The decoders of an RTP stream by payload type: the codec we send (its payload type) and every other
 * codec the far end may send. A codec the media engine cannot code, or a payload type out of the
 * RTP range, is left out (its packets are dropped as before).
 */
export function codersByPayloadType(
  sending: RtpPayloadCoder | undefined,
  codecs: ReadonlyArray<{ readonly codec: string; readonly payloadType: number }> | undefined,
  options?: CoderOptions,
): Array<RtpPayloadCoder | undefined> {
  const coders: Array<RtpPayloadCoder | undefined> = [];
  if (sending) coders[sending.payloadType] = sending;
  for (const { codec, payloadType } of codecs ?? []) {
    if (!Number.isInteger(payloadType) || payloadType < 0 || payloadType > 127 || coders[payloadType]) continue;
    try {
      coders[payloadType] = new RtpPayloadCoder(codec, payloadType, options);
    } catch {
      // not a codec of the engine: nothing to decode it with
    }
  }
  return coders;
}

/** Releases every coder of `before` (and `also`) that `after` no longer holds: a stream's configure replaced them. */
export function releaseReplacedCoders(before: ReadonlyArray<RtpPayloadCoder | undefined>, also: RtpPayloadCoder | undefined, after: ReadonlyArray<RtpPayloadCoder | undefined>): void {
  const kept = new Set(after);
  const released = new Set<RtpPayloadCoder>();
  for (const coder of [...before, also]) {
    if (!coder || kept.has(coder) || released.has(coder)) continue;
    released.add(coder);
    coder.release();
  }
}
