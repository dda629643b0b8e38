// What a Stasis application can have a channel hear besides playbacks: music on hold and digital
// silence. Both are channel generators, so the operation is the meeting of two core subsystems
// (the music-on-hold classes, or a silence source, and the channel's generator stack); ARI asks
// for it by name here instead of wiring the two itself, as Asterisk's stasis_app_control does.
import type { AudioGenerator, ChannelGenerators } from '../core/channel-generators.ts';
import type { Channel } from '../core/channels/channel.ts';
import type { MusicOnHold } from '../core/moh.ts';

/** The core subsystems channel media needs. */
export interface ChannelMediaServices {
  readonly moh: MusicOnHold;
  readonly generators: ChannelGenerators;
}

/** Digital silence for as long as it is installed. */
const silenceGenerator = (): AudioGenerator => ({
  fill(dst) {
    dst.fill(0);
    return true;
  },
});

/** Plays a music-on-hold class (the default one when none is named) to the channel. */
export function startMusicOnHold(services: ChannelMediaServices, channel: Channel, mohClass?: string): void {
  services.moh.startOnChannel(services.generators, channel, mohClass);
}

/** Stops the channel's music on hold; nothing happens when none plays. */
export function stopMusicOnHold(services: ChannelMediaServices, channel: Channel): void {
  services.moh.stopOnChannel(services.generators, channel);
}

/** Plays silence to the channel; a channel already hearing silence keeps its generator. */
export function startSilence(services: Pick<ChannelMediaServices, 'generators'>, channel: Channel): void {
  if (!services.generators.get(channel, 'silence')) services.generators.set(channel, 'silence', silenceGenerator());
}

/** Stops the channel's silence; nothing happens when none plays. */
export function stopSilence(services: Pick<ChannelMediaServices, 'generators'>, channel: Channel): void {
  services.generators.set(channel, 'silence', undefined);
}
