// RTP payloads of the codecs this engine codes, as the codec table describes them: G.711 one byte
// per sample, L16 two bytes in network order. Reads from and writes into parts of the caller's
// buffers (offsets, no views), so coding a packet allocates nothing.
import { getCodec, type Codec } from '../codecs.ts';
import { alawToLinear, linearToAlaw, linearToUlaw, ulawToLinear } from '../g711.ts';
import type { SampleRate } from '../frame.ts';

type Kind = 'ulaw' | 'alaw' | 'l16be' | 'l16le';

export class RtpPayloadCoder {
  readonly codec: Codec;
  readonly payloadType: number;
  readonly rate: SampleRate;
  readonly bytesPerSample: 1 | 2;
  readonly #kind: Kind;

  /** `payloadType` defaults to the table's (an SDP may negotiate another). */
  constructor(codecName: string, payloadType?: number) {
    const codec = getCodec(codecName);
    if (!codec) throw new RangeError(`no RTP payload coder for ${codecName}`);
    this.codec = codec;
    this.payloadType = payloadType ?? codec.payloadType;
    this.rate = codec.rate;
    this.bytesPerSample = codec.bytesPerSample;
    this.#kind = codec.name === 'ulaw' ? 'ulaw' : codec.name === 'alaw' ? 'alaw' : codec.byteOrder === 'big' ? 'l16be' : 'l16le';
  }

  /** Payload bytes for `samples` samples. */
  bytesFor(samples: number): number {
    return samples * this.bytesPerSample;
  }

  /** Encodes every sample of `src` into `dst` from `offset`; returns bytes written. */
  encode(src: Int16Array, dst: Uint8Array, offset: number): number {
    const count = src.length;
    switch (this.#kind) {
      case 'ulaw':
        for (let i = 0; i < count; i++) dst[offset + i] = linearToUlaw(src[i]);
        return count;
      case 'alaw':
        for (let i = 0; i < count; i++) dst[offset + i] = linearToAlaw(src[i]);
        return count;
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

  /** Samples in `src[start, end)` (whole samples only). */
  samplesIn(start: number, end: number): number {
    return Math.floor((end - start) / this.bytesPerSample);
  }

  /** Decodes the whole samples of `src[start, end)` into `dst` (which must hold them); returns samples written. */
  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number {
    const count = this.samplesIn(start, end);
    switch (this.#kind) {
      case 'ulaw':
        for (let i = 0; i < count; i++) dst[i] = ulawToLinear(src[start + i]);
        return count;
      case 'alaw':
        for (let i = 0; i < count; i++) dst[i] = alawToLinear(src[start + i]);
        return count;
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
export function codersByPayloadType(sending: RtpPayloadCoder | undefined, codecs: ReadonlyArray<{ readonly codec: string; readonly payloadType: number }> | undefined): Array<RtpPayloadCoder | undefined> {
  const coders: Array<RtpPayloadCoder | undefined> = [];
  if (sending) coders[sending.payloadType] = sending;
  for (const { codec, payloadType } of codecs ?? []) {
    if (!Number.isInteger(payloadType) || payloadType < 0 || payloadType > 127 || coders[payloadType]) continue;
    try {
      coders[payloadType] = new RtpPayloadCoder(codec, payloadType);
    } catch {
      // not a codec of the engine: nothing to decode it with
    }
  }
  return coders;
}
