// Channel media that is neither playback nor recording: music on hold, silence and snoop. MOH and
// silence are channel generators (they replace what the channel hears from its bridge while they
// play); snoop creates a channel that spies on and/or whispers to the target. The checks follow
// Asterisk's res/ari/resource_channels.c: 404 no channel, 409 not in Stasis, 412 bad state.
import { findChannel, findControllable } from '../../control/channel-control.ts';
import { startMusicOnHold, startSilence, stopMusicOnHold, stopSilence } from '../../control/channel-media.ts';
import type { Core } from '../../control/core.ts';
import { createSnoop, type SnoopDirection } from '../../control/snoop.ts';
import { AriError, defineHandlers } from '../handler.ts';
import type { Model } from '../../spec/index.ts';

interface SnoopParams {
  readonly channelId: string;
  readonly snoopId?: string;
  readonly spy: SnoopDirection;
  readonly whisper: SnoopDirection;
  readonly app: string;
  readonly appArgs?: string;
}

function snoop(core: Core, params: SnoopParams): Model<'Channel'> {
  // Asterisk checks the directions and the application before looking the channel up.
  if (params.spy === 'none' && params.whisper === 'none') throw new AriError(400, 'Direction must be specified for at least spy or whisper');
  if (!params.app) throw new AriError(400, 'Application name is required');
  const target = findChannel(core.channels, params.channelId);
  const channel = createSnoop(
    { channels: core.channels, stasis: core.stasis, media: core.media, log: core.log },
    target,
    { spy: params.spy, whisper: params.whisper, app: params.app, appArgs: params.appArgs, snoopId: params.snoopId },
  );
  return channel.snapshot();
}

export const channelMediaHandlers = defineHandlers('channels', {
  startMoh: ({ channelId, mohClass }, { core }) => {
    startMusicOnHold(core, findControllable(core, channelId), mohClass);
  },

  stopMoh: ({ channelId }, { core }) => {
    stopMusicOnHold(core, findControllable(core, channelId));
  },

  startSilence: ({ channelId }, { core }) => {
    startSilence(core, findControllable(core, channelId));
  },

  stopSilence: ({ channelId }, { core }) => {
    stopSilence(core, findControllable(core, channelId));
  },

  snoopChannel: (params, { core }) => snoop(core, params),

  snoopChannelWithId: (params, { core }) => snoop(core, params),
});
