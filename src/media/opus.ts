// Opus (RFC 6716) for one stream through @evan/opus, libopus behind N-API (a prebuilt binary inside
// the npm package, WebAssembly where none fits): chosen by bench/codecs.ts over opusscript
// (WebAssembly only, 1.8x the CPU) and @discordjs/opus (1.3x, and a binary per Node ABI fetched at
// install time, which a machine without access to its host cannot do).
// RTP says what RFC 7587 says: a 48 kHz clock whatever the audio's rate, `opus/48000/2` in the
// rtpmap even for mono. We always send mono; a stereo packet from the far end is mixed down by
// the decoder. The peer's fmtp (useinbandfec, usedtx, cbr, maxplaybackrate, maxaveragebitrate)
// shapes the encoder, as it does Asterisk's codec_opus.
// A media worker runs the package's WebAssembly build (src/media/workers/pool.ts says why), whose
// coders live in a heap that grows and never shrinks: release() frees a stream's coders when the
// stream ends rather than when the garbage collector gets to them (the native build frees on its own).
// The package is loaded at the first Opus coder, not with this module: loading it compiles and
// instantiates its WebAssembly in a worker (≈ 5 MiB resident and 16 MiB of reserved memory each) or
// maps the native addon on the main thread (≈ 1.5 MiB), which a server whose calls never agree on
// Opus need not hold (docs/performance.md, "The idle server's memory (stop 36)").
import type { Decoder, Encoder } from '@evan/opus';
import type { SampleRate } from './frame.ts';
import { loadOnFirstUse } from '../util/load-on-first-use.ts';

/** What the far end's fmtp asks of what we send (RFC 7587 §6.1); absent values keep libopus's defaults. */
export interface OpusSendSettings {
  /** maxaveragebitrate, bits per second (6000..510000). */
  readonly maxAverageBitrate?: number;
  /** maxplaybackrate: the highest audio rate the far end renders, which bounds the coded bandwidth. */
  readonly maxPlaybackRate?: number;
  /** useinbandfec=1: the far end decodes in-band FEC, so it is worth sending. */
  readonly inbandFec?: boolean;
  /** usedtx=1: the far end takes discontinuous transmission. */
  readonly dtx?: boolean;
  /** cbr=1: the far end wants a constant bit rate. */
  readonly cbr?: boolean;
}

type OpusPackage = typeof import('@evan/opus');
/**
 * @evan/opus, loaded on first use, synchronously (the package is CommonJS; its ES entry only
 * re-exports it), so a stream's coders are still made where the stream is: the first Opus stream
 * of a thread pays the load once (a few milliseconds of CPU).
 */
const opusPackage = loadOnFirstUse<OpusPackage>('@evan/opus', import.meta.url);
const opus = (): OpusPackage => opusPackage.get();

/** Whether this thread has loaded libopus yet (tests check that an idle server has not). */
export function opusLoaded(): boolean {
  return opusPackage.loaded();
}

/**
 * Frees a coder's libopus state now where the build can (the WebAssembly build's drop(); the native
 * build has none and frees when collected).
 */
function freeNow(coder: Encoder | Decoder): void {
  const drop: unknown = Reflect.get(coder, 'drop');
  if (typeof drop === 'function') drop.call(coder);
}

/** Longest Opus packet: 120 ms (RFC 6716 §3.2.1). */
const MAX_PACKET_MS = 120;
/** Loss the encoder plans its in-band FEC for, in percent, when the far end asked for FEC. */
const FEC_EXPECTED_LOSS_PERCENT = 10;

type Bandwidth = 'narrowband' | 'mediumband' | 'wideband' | 'superwideband' | 'fullband';

function bandwidthFor(maxPlaybackRate: number): Bandwidth {
  if (maxPlaybackRate <= 8000) return 'narrowband';
  if (maxPlaybackRate <= 12000) return 'mediumband';
  if (maxPlaybackRate <= 16000) return 'wideband';
  if (maxPlaybackRate <= 24000) return 'superwideband';
  return 'fullband';
}

/**
 * The Opus encoder of one stream: one 20 ms frame of linear audio at `rate` in, one packet out.
 * libopus's encoder is made at the first frame: a stream decodes every payload type the far end may
 * send but encodes only one, and an encoder is the larger half.
 */
export class OpusStreamEncoder {
  #encoder: Encoder | undefined;
  /** Released: its state freed, nothing is coded any more. */
  #released = false;
  #settings: OpusSendSettings;
  /** One 20 ms frame at `rate`: libopus takes only whole frames, so a short one is padded here. */
  readonly #frame: Int16Array;

  constructor(
    readonly rate: SampleRate,
    settings: OpusSendSettings = {},
  ) {
    this.#frame = new Int16Array(rate / 50);
    this.#settings = settings;
  }

  /** Takes the far end's wishes (for the encoder to come, or the one running). */
  configure(settings: OpusSendSettings): void {
    this.#settings = settings;
    if (this.#encoder) applySettings(this.#encoder, settings);
  }

  #encoderNow(): Encoder {
    if (!this.#encoder) {
      this.#encoder = new (opus().Encoder)({ channels: 1, sample_rate: this.rate, application: 'voip' });
      applySettings(this.#encoder, this.#settings);
    }
    return this.#encoder;
  }

  /**
   * Encodes 20 ms from the first `count` samples of `src` into `dst` from `offset`; returns bytes
   * written. Fewer samples (a resampler's first frame) are padded with silence, more are cut: an
   * Opus frame has a fixed length. 0 when libopus refuses (nothing is sent then).
   */
  encode(src: Int16Array, count: number, dst: Uint8Array, offset: number): number {
    const frame = this.#frame;
    let pcm = src;
    if (count !== frame.length || src.length !== frame.length) {
      const kept = Math.min(count, frame.length);
      for (let i = 0; i < kept; i++) frame[i] = src[i];
      frame.fill(0, kept);
      pcm = frame;
    }
    if (this.#released) return 0;
    let packet: Uint8Array;
    try {
      packet = this.#encoderNow().encode(pcm);
    } catch {
      return 0;
    }
    const length = Math.min(packet.length, dst.length - offset);
    dst.set(length === packet.length ? packet : packet.subarray(0, length), offset);
    return length;
  }

  reset(): void {
    this.#encoder?.reset();
  }

  /** Frees the encoder's state (the stream ended, or changed codec); it encodes nothing after. */
  release(): void {
    this.#released = true;
    if (this.#encoder) freeNow(this.#encoder);
    this.#encoder = undefined;
  }
}

/** The far end's wishes on an encoder (FEC only when it asked: we asked too, so both sides want it, Asterisk's rule). */
function applySettings(encoder: Encoder, settings: OpusSendSettings): void {
  const bitrate = settings.maxAverageBitrate;
  encoder.bitrate = bitrate !== undefined && bitrate >= 6000 && bitrate <= 510000 ? bitrate : 'auto';
  encoder.max_bandwidth = bandwidthFor(settings.maxPlaybackRate ?? 48000);
  encoder.inband_fec = settings.inbandFec === true;
  encoder.packet_loss = settings.inbandFec === true ? FEC_EXPECTED_LOSS_PERCENT : 0;
  encoder.dtx = settings.dtx === true;
  encoder.vbr = settings.cbr !== true;
}

/** The Opus decoder of one stream: packets in, linear audio at `rate` out. */
export class OpusStreamDecoder {
  readonly #decoder: Decoder;
  /** Released: its state freed, nothing is decoded any more. */
  #released = false;
  /** The packet, copied out of the datagram (the binding reads a whole view). */
  readonly #packet = new Uint8Array(1500);
  /** Views of #packet by length, made once each: a packet of a length seen before allocates no view. */
  readonly #views: Array<Uint8Array | undefined> = [];
  /** The most samples one packet can decode to. */
  readonly maxSamples: number;

  constructor(readonly rate: SampleRate) {
    this.#decoder = new (opus().Decoder)({ channels: 1, sample_rate: rate });
    this.maxSamples = (rate * MAX_PACKET_MS) / 1000;
  }

  /**
   * Decodes the packet `src[start, end)` into `dst`; returns samples written, 0 for a packet
   * libopus refuses (a hostile or damaged one is dropped like a lost one).
   */
  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number {
    const length = end - start;
    if (length <= 0 || length > this.#packet.length || this.#released) return 0;
    const packet = this.#packet;
    for (let i = 0; i < length; i++) packet[i] = src[start + i];
    let pcm: Uint8Array;
    try {
      pcm = this.#decoder.decode((this.#views[length] ??= packet.subarray(0, length)));
    } catch {
      return 0;
    }
    const samples = Math.min(pcm.length >> 1, dst.length);
    for (let i = 0, byte = 0; i < samples; i++, byte += 2) dst[i] = ((pcm[byte + 1] << 24) | (pcm[byte] << 16)) >> 16;
    return samples;
  }

  reset(): void {
    if (!this.#released) this.#decoder.reset();
  }

  /** Frees the decoder's state (the stream ended, or the codec left the negotiated set); it decodes nothing after. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    freeNow(this.#decoder);
  }
}
