// A channel's native rate: the rate of its audio at its far end, from the format its technology
// speaks (its read/write format in Asterisk's terms): ulaw/alaw 8 kHz, g722/slin16 16 kHz, slin24
// 24 kHz, slin48 48 kHz, opus at the rate its stream coder works at. A technology gives its
// channels a wideband rate simply by naming a wideband format in its driver's nativeFormat(); one
// that names none carries 8 kHz audio. Bridges mix at the highest native rate of their members;
// playback and recording work at it.
import { getCodec } from '../../media/codecs.ts';
import type { SampleRate } from '../../media/frame.ts';
import { OPUS_LINEAR_RATE } from '../../media/stream-coder.ts';
import type { Channel } from './channel.ts';

/**
 * The linear rate of the codecs coded per stream rather than by the codec table's sample coders:
 * their RTP clock is not their audio's rate (G.722 counts 8000 for 16 kHz audio, Opus 48000 for
 * whatever rate libopus is asked to give).
 */
const STREAM_CODEC_RATES: ReadonlyMap<string, SampleRate> = new Map([
  ['g722', 16000],
  ['opus', OPUS_LINEAR_RATE],
]);

/** The rate of a format's linear audio; 8 kHz for narrowband or unknown formats. */
function audioRateOf(format: string): SampleRate {
  return getCodec(format)?.rate ?? STREAM_CODEC_RATES.get(format) ?? 8000;
}

export function nativeRateOf(channel: Channel): SampleRate {
  const format = channel.driver.nativeFormat?.();
  return format === undefined ? 8000 : audioRateOf(format);
}
