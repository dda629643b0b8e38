// The fmtp parameters of Opus (RFC 7587 §6.1) as the far end sends them, read into what our encoder
// honours, and the fmtp we write ourselves. Hostile input is bounded: at most 32 parameters of
// short names and integer values are read; anything else is ignored, never an error.
import type { OpusSendSettings } from '../../media/opus.ts';

const MAX_PARAMETERS = 32;

/** Our fmtp for Opus, as Asterisk's codec_opus offers it by default: in-band FEC welcome. */
export const OPUS_LOCAL_FMTP = 'useinbandfec=1';

function integer(value: string): number | undefined {
  return /^\d{1,7}$/.test(value) ? Number(value) : undefined;
}

/** What the far end's `a=fmtp` asks of the Opus we send; an absent or unreadable fmtp asks nothing. */
export function readOpusFmtp(config: string | undefined): OpusSendSettings {
  if (config === undefined) return {};
  const settings: { -readonly [K in keyof OpusSendSettings]: OpusSendSettings[K] } = {};
  for (const item of config.split(';').slice(0, MAX_PARAMETERS)) {
    const equals = item.indexOf('=');
    if (equals < 0) continue;
    const name = item.slice(0, equals).trim().toLowerCase();
    const value = integer(item.slice(equals + 1).trim());
    if (value === undefined) continue;
    switch (name) {
      case 'maxaveragebitrate':
        if (value >= 6000 && value <= 510000) settings.maxAverageBitrate = value;
        break;
      case 'maxplaybackrate':
        if (value >= 8000 && value <= 48000) settings.maxPlaybackRate = value;
        break;
      case 'useinbandfec':
        settings.inbandFec = value === 1;
        break;
      case 'usedtx':
        settings.dtx = value === 1;
        break;
      case 'cbr':
        settings.cbr = value === 1;
        break;
      default:
      // stereo, sprop-stereo, sprop-maxcapturerate, ptime, maxptime: we send mono 20 ms frames whatever they say.
    }
  }
  return settings;
}
