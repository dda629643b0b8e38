// Starting a playback on a channel or a bridge for a Stasis application. The playback engine
// plays what it is given; the language a request leaves out is the target's (a channel's own
// language, the server's for a bridge), which the caller would otherwise look up elsewhere.
import type { Bridge } from '../core/bridges/bridge.ts';
import type { Channel } from '../core/channels/channel.ts';
import type { Playback } from '../core/playback/playback.ts';
import type { Playbacks } from '../core/playback/playbacks.ts';

/** The core subsystems playing needs. */
export interface PlayServices {
  readonly playbacks: Playbacks;
  readonly config: { readonly language: string };
}

/** A play request as ARI words it: media URIs, and optional language, offset, skip and id. */
export interface PlayOptions {
  readonly media: readonly string[];
  readonly lang?: string;
  readonly offsetms?: number;
  readonly skipms?: number;
  readonly playbackId?: string;
}

/** Plays to a channel (after its earlier playbacks), in the channel's language unless one is named. */
export function playOnChannel(services: PlayServices, channel: Channel, options: PlayOptions): Playback {
  return services.playbacks.playOnChannel(channel, {
    media: options.media,
    language: options.lang || channel.language,
    offsetMs: options.offsetms,
    skipMs: options.skipms,
    playbackId: options.playbackId,
  });
}

/** Plays to everyone in a bridge (after its earlier playbacks), in the server's language unless one is named. */
export function playOnBridge(services: PlayServices, bridge: Bridge, options: PlayOptions): Playback {
  return services.playbacks.playOnBridge(bridge, {
    media: options.media,
    language: options.lang || services.config.language,
    offsetMs: options.offsetms,
    skipMs: options.skipms,
    playbackId: options.playbackId,
  });
}
