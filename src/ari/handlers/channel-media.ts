// Channel media that is neither playback nor recording: music on hold, silence and snoop. MOH and
// silence are channel generators (they replace what the channel hears from its bridge while they
// play); snoop creates a channel that spies on and/or whispers to the target. The checks follow
// Asterisk's res/ari/resource_channels.c: 404 no channel, 409 not in Stasis, 412 bad state.
import type { AudioGenerator } from '../../core/channel-generators.ts';
import type { Channel } from '../../core/channels/channel.ts';
import { findChannel, findControlled, requireValidState } from '../../control/channel-control.ts';
import type { Core } from '../../control/core.ts';
import { createSnoop, type SnoopDirection } from '../../control/snoop.ts';
import { AriError, defineHandlers } from '../handler.ts';
import type { Model } from '../../spec/index.ts';

/** A channel under Stasis control in a state that allows media (404, 409, 412). */
function controllable(core: Core, channelId: string): Channel {
  const channel = findControlled(core.channels, core.stasis, channelId);
  requireValidState(channel);
  return channel;
}

/** Digital silence for as long as it is installed. */
const silenceGenerator = (): AudioGenerator => ({
  fill(dst) {
    dst.fill(0);
    return true;
  },
});

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
    core.moh.startOnChannel(core.generators, controllable(core, channelId), mohClass);
  },

  stopMoh: ({ channelId }, { core }) => {
    core.moh.stopOnChannel(core.generators, controllable(core, channelId));
  },

  startSilence: ({ channelId }, { core }) => {
    const channel = controllable(core, channelId);
    if (!core.generators.get(channel, 'silence')) core.generators.set(channel, 'silence', silenceGenerator());
  },

  stopSilence: ({ channelId }, { core }) => {
    core.generators.set(controllable(core, channelId), 'silence', undefined);
  },

  snoopChannel: (params, { core }) => snoop(core, params),

  snoopChannelWithId: (params, { core }) => snoop(core, params),
});
