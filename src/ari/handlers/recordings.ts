// Recordings: stored recordings (files under the recordings directory) and live recordings (in
// progress), plus the operations that start one — channel record and bridge record, served from
// here and merged into the channels and bridges resources. The work is the core's
// (src/core/recordings/*); core failures map to 400/403/404/409/422 in the dispatcher.
import { findControlled } from '../../control/channel-control.ts';
import type { LiveRecording } from '../../core/recordings/live-recording.ts';
import type { RecordRequest } from '../../core/recordings/recordings.ts';
import { defineHandlers, Reply } from '../handler.ts';
import type { Model } from '../../spec/index.ts';

type LiveJson = Model<'LiveRecording'>;

const live = (recording: LiveRecording): LiveJson => recording.toJson();

/** 201 with the live recording's address (the name URI-encoded, `/` included). */
const created = (recording: LiveRecording): Reply<LiveJson> =>
  new Reply(live(recording), 201, { Location: `/ari/recordings/live/${encodeURIComponent(recording.name)}` });

interface RecordParams {
  readonly name: string;
  readonly format: string;
  readonly maxDurationSeconds: number;
  readonly maxSilenceSeconds: number;
  readonly ifExists: 'fail' | 'overwrite' | 'append';
  readonly beep: boolean;
  readonly terminateOn: 'none' | 'any' | '*' | '#';
}

const request = (params: RecordParams): RecordRequest => ({
  name: params.name,
  format: params.format,
  maxDurationSeconds: params.maxDurationSeconds,
  maxSilenceSeconds: params.maxSilenceSeconds,
  ifExists: params.ifExists,
  beep: params.beep,
  terminateOn: params.terminateOn,
});

export const recordingsHandlers = defineHandlers('recordings', {
  listStored: (_params, { core }) => core.recordings.store.list(),

  getStored: ({ recordingName }, { core }) => core.recordings.store.get(recordingName),

  deleteStored: ({ recordingName }, { core }) => {
    core.recordings.store.delete(recordingName);
  },

  getStoredFile: ({ recordingName }, { core }) => core.recordings.store.open(recordingName),

  copyStored: ({ recordingName, destinationRecordingName }, { core }) => core.recordings.store.copy(recordingName, destinationRecordingName),

  getLive: ({ recordingName }, { core }) => live(core.recordings.getLive(recordingName)),

  cancel: ({ recordingName }, { core }) => core.recordings.control(recordingName, 'cancel'),

  stop: ({ recordingName }, { core }) => core.recordings.control(recordingName, 'stop'),

  pause: ({ recordingName }, { core }) => core.recordings.control(recordingName, 'pause'),

  unpause: ({ recordingName }, { core }) => core.recordings.control(recordingName, 'unpause'),

  mute: ({ recordingName }, { core }) => core.recordings.control(recordingName, 'mute'),

  unmute: ({ recordingName }, { core }) => core.recordings.control(recordingName, 'unmute'),
});

export const channelRecordHandlers = defineHandlers('channels', {
  record: (params, { core }) => {
    // 404 unknown channel, 409 not in Stasis; then 422 format, 400 name, 409 bridged / name taken.
    const channel = findControlled(core.channels, core.stasis, params.channelId);
    return created(core.recordings.recordChannel(channel, request(params)));
  },
});

export const bridgeRecordHandlers = defineHandlers('bridges', {
  record: (params, { core }) => {
    const bridge = core.bridges.require(params.bridgeId);
    return created(core.recordings.recordBridge(bridge, { ...request(params), recorderFormat: params.recorder_format }));
  },
});
