// Playbacks: GET/DELETE/control of a playback by id, and the operations that start one —
// channel play/playWithId and bridge play/playWithId (served from here, merged into the channels
// and bridges resources). The engine is the core's (src/core/playback/*).
import { findControllable } from '../../control/channel-control.ts';
import { playOnBridge as playToBridge, playOnChannel as playToChannel, type PlayOptions } from '../../control/play.ts';
import type { Core } from '../../control/core.ts';
import { UnprocessableError } from '../../core/errors.ts';
import type { Playback, PlaybackOperation } from '../../core/playback/playback.ts';
import { getCodec } from '../../media/codecs.ts';
import { defineHandlers, Reply } from '../handler.ts';
import type { Model } from '../../spec/index.ts';

type PlaybackJson = Model<'Playback'>;

const json = (playback: Playback): PlaybackJson => playback.snapshot();

/** 201 with the new playback's address, as Asterisk answers every play request. */
const created = (playback: Playback): Reply<PlaybackJson> =>
  new Reply(json(playback), 201, { Location: `/ari/playbacks/${encodeURIComponent(playback.id)}` });

function playOnChannel(core: Core, channelId: string, params: PlayOptions): Reply<PlaybackJson> {
  // 404 unknown channel, 409 not in Stasis, 412 not answered (outbound) — as control/channel-control.ts rules.
  return created(playToChannel(core, findControllable(core, channelId), params));
}

function playOnBridge(core: Core, bridgeId: string, params: PlayOptions & { readonly announcer_format?: string }): Reply<PlaybackJson> {
  const bridge = core.bridges.require(bridgeId);
  if (params.announcer_format && !getCodec(params.announcer_format)) {
    throw new UnprocessableError('specified announcer_format is unknown on this system');
  }
  return created(playToBridge(core, bridge, params));
}

export const playbacksHandlers = defineHandlers('playbacks', {
  get: ({ playbackId }, { core }) => json(core.playbacks.require(playbackId)),

  stop: ({ playbackId }, { core }) => {
    core.playbacks.stop(playbackId);
  },

  // `operation` was checked against its allowed values before this runs (400 before the lookup).
  control: ({ playbackId, operation }, { core }) => {
    core.playbacks.control(playbackId, operation as PlaybackOperation);
  },
});

export const channelPlayHandlers = defineHandlers('channels', {
  play: ({ channelId, ...params }, { core }) => playOnChannel(core, channelId, params),
  playWithId: ({ channelId, ...params }, { core }) => playOnChannel(core, channelId, params),
});

export const bridgePlayHandlers = defineHandlers('bridges', {
  play: ({ bridgeId, ...params }, { core }) => playOnBridge(core, bridgeId, params),
  playWithId: ({ bridgeId, ...params }, { core }) => playOnBridge(core, bridgeId, params),
});
