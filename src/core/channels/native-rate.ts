// A channel's native rate: the rate of its audio at its far end, from the format its technology
// speaks (its read/write format in Asterisk's terms): ulaw/alaw 8 kHz, g722/slin16 16 kHz, slin24
// 24 kHz, opus/slin48 48 kHz. A technology gives its channels a wideband rate simply by naming a
// wideband format in its driver's nativeFormat(); one that names none carries 8 kHz audio.
// Bridges mix at the highest native rate of their members; playback and recording work at it.
import { audioRateOf } from '../../media/codecs.ts';
import type { SampleRate } from '../../media/frame.ts';
import type { Channel } from './channel.ts';

export function nativeRateOf(channel: Channel): SampleRate {
  const format = channel.driver.nativeFormat?.();
  return format === undefined ? 8000 : audioRateOf(format);
}
