// Bridges: creation, membership, variables, video source, music on hold, playback and recording.
import type { ResourceDecl } from '../types.ts';
import { noVariableName, noVariableNames, noVariables, recordingOptionParams, variableValueParam, variablesSetBody } from './shared.ts';

const bridgeId = { name: 'bridgeId', description: 'Id of the bridge.', in: 'path', dataType: 'string', required: true } as const;

const noBridge = { code: 404, reason: 'Bridge not found.' } as const;
const notInStasis = { code: 409, reason: 'Bridge is not in a Stasis application.' } as const;

const bridgeType = {
  name: 'type',
  description: 'Comma-separated bridge type and capabilities.',
  in: 'query',
  dataType: 'string',
  allowMultiple: true,
  allowedValues: ['mixing', 'holding', 'dtmf_events', 'proxy_media', 'video_sfu', 'video_single', 'sdp_label'],
} as const;
const bridgeName = { name: 'name', description: 'Name to give the bridge.', in: 'query', dataType: 'string' } as const;
const bridgeVariables = {
  name: 'variables',
  description: 'Body object "variables": bridge variables to set on the new bridge.',
  in: 'body',
  dataType: 'containers',
} as const;
// Bridge features applied as defaults to every channel that joins the bridge.
const bridgeMute = { name: 'mute', description: 'Mute the audio of channels joining the bridge by default.', in: 'query', dataType: 'boolean', defaultValue: false } as const;
const bridgeAbsorbDTMF = {
  name: 'absorbDTMF',
  description: 'Suppress the DTMF of channels joining the bridge by default.',
  in: 'query',
  dataType: 'boolean',
  defaultValue: false,
} as const;

const channelList = { name: 'channel', description: 'Ids of the channels.', in: 'query', dataType: 'string', required: true, allowMultiple: true } as const;

const variableName = { name: 'variable', description: 'Name of the variable.', in: 'query', dataType: 'string', required: true } as const;

const playMedia = { name: 'media', description: 'Media URIs to play, in order.', in: 'query', dataType: 'string', required: true, allowMultiple: true } as const;
const playAnnouncerFormat = { name: 'announcer_format', description: 'Format of the announcer channel that plays into the bridge.', in: 'query', dataType: 'string' } as const;
const playLang = { name: 'lang', description: 'Language of the sounds.', in: 'query', dataType: 'string' } as const;
const playOffsetms = { name: 'offsetms', description: 'Milliseconds to skip at the start of the first media.', in: 'query', dataType: 'int', defaultValue: 0, range: { min: 0 } } as const;
const playSkipms = { name: 'skipms', description: 'Milliseconds moved by a forward or reverse control.', in: 'query', dataType: 'int', defaultValue: 3000, range: { min: 0 } } as const;
/** Play requests are bounded (media count, URI length, say-back and tone sizes; docs/playback-bounds.md). */
const playErrors = [
  { code: 400, reason: 'Media list or a media URI beyond its bounds.' },
  noBridge,
  notInStasis,
  { code: 422, reason: 'Unknown announcer format.' },
] as const;
/** Patchbay's bounds on variables and names: not in Asterisk's declarations for bridge creation. */
const badParams = { code: 400, reason: 'Invalid parameters.' } as const;
/** Patchbay: 503 beyond max_bridges. */
const tooManyBridges = { code: 503, reason: 'Too many bridges (max_bridges).' } as const;

export const bridges = {
  name: 'bridges',
  description: 'Bridge resources',
  models: ['Bridge'],
  operations: [
    {
      nickname: 'list',
      method: 'GET',
      path: '/bridges',
      summary: 'List the active bridges.',
      since: ['12.0.0'],
      params: [],
      responseClass: 'List[Bridge]',
      errors: [],
    },
    {
      nickname: 'create',
      method: 'POST',
      path: '/bridges',
      summary: 'Create a bridge.',
      since: ['12.0.0'],
      params: [
        bridgeType,
        { name: 'bridgeId', description: 'Id to give the bridge.', in: 'query', dataType: 'string' },
        bridgeName,
        bridgeVariables,
        bridgeMute,
        bridgeAbsorbDTMF,
      ],
      responseClass: 'Bridge',
      errors: [badParams, { code: 409, reason: 'Bridge id already in use.' }, tooManyBridges],
    },
    {
      nickname: 'createWithId',
      method: 'POST',
      path: '/bridges/{bridgeId}',
      summary: 'Create a bridge with a chosen id.',
      since: ['12.2.0'],
      params: [
        { name: 'bridgeId', description: 'Id to give the bridge.', in: 'path', dataType: 'string', required: true },
        bridgeType,
        bridgeName,
        bridgeVariables,
        bridgeMute,
        bridgeAbsorbDTMF,
      ],
      responseClass: 'Bridge',
      errors: [badParams, { code: 409, reason: 'Bridge id already in use.' }, tooManyBridges],
    },
    {
      nickname: 'get',
      method: 'GET',
      path: '/bridges/{bridgeId}',
      summary: 'Describe one bridge.',
      since: ['12.0.0'],
      params: [bridgeId],
      responseClass: 'Bridge',
      errors: [noBridge],
    },
    {
      nickname: 'destroy',
      method: 'DELETE',
      path: '/bridges/{bridgeId}',
      summary: 'Destroy a bridge; its channels stay alive.',
      since: ['12.0.0'],
      params: [bridgeId],
      responseClass: 'void',
      // 409 for a bridge no application owns (Dial()'s basic bridge), as Asterisk answers it, undeclared.
      errors: [noBridge, notInStasis],
    },
    {
      nickname: 'getBridgeVar',
      method: 'GET',
      path: '/bridges/{bridgeId}/variable',
      summary: 'Read a bridge variable.',
      since: ['20.20.0', '22.10.0', '23.4.0'],
      params: [bridgeId, variableName],
      responseClass: 'Variable',
      errors: [
        noVariableName,
        { code: 404, reason: 'Bridge or variable not found.' },
        notInStasis,
      ],
    },
    {
      nickname: 'setBridgeVar',
      method: 'POST',
      path: '/bridges/{bridgeId}/variable',
      summary: 'Set a bridge variable.',
      since: ['20.20.0', '22.10.0', '23.4.0'],
      params: [
        bridgeId,
        variableName,
        variableValueParam,
        { name: 'report_events', description: 'Whether to include the variable in later bridge events.', in: 'query', dataType: 'boolean', defaultValue: false },
      ],
      responseClass: 'void',
      errors: [noVariableName, noBridge, notInStasis],
    },
    {
      nickname: 'getBridgeVars',
      method: 'GET',
      path: '/bridges/{bridgeId}/variables',
      summary: 'Read several bridge variables at once.',
      since: ['20.20.0', '22.10.0', '23.4.0'],
      params: [
        bridgeId,
        { name: 'variables', description: 'Names of the variables.', in: 'query', dataType: 'string', required: true, allowMultiple: true },
      ],
      responseClass: 'Variables',
      errors: [
        noVariableNames,
        { code: 404, reason: 'Bridge or variable not found.' },
        notInStasis,
      ],
    },
    {
      nickname: 'setBridgeVars',
      method: 'POST',
      path: '/bridges/{bridgeId}/variables',
      summary: 'Set several bridge variables at once.',
      since: ['20.20.0', '22.10.0', '23.4.0'],
      params: [
        bridgeId,
        variablesSetBody,
      ],
      responseClass: 'void',
      errors: [noVariables, noBridge, notInStasis],
    },
    {
      nickname: 'addChannel',
      method: 'POST',
      path: '/bridges/{bridgeId}/addChannel',
      summary: 'Add channels to the bridge.',
      since: ['12.0.0'],
      params: [
        bridgeId,
        channelList,
        { name: 'role', description: 'Role given to every added channel, replacing earlier roles.', in: 'query', dataType: 'string', aliases: ['roles'] },
        { name: 'absorbDTMF', description: 'Suppress the DTMF of the added channels.', in: 'query', dataType: 'boolean', defaultValue: false },
        { name: 'mute', description: 'Mute the audio of the added channels.', in: 'query', dataType: 'boolean', defaultValue: false },
        {
          name: 'inhibitConnectedLineUpdates',
          description: 'Generate no connected-line updates as the channels join.',
          in: 'query',
          dataType: 'boolean',
          defaultValue: false,
        },
      ],
      responseClass: 'void',
      errors: [
        { code: 400, reason: 'A listed channel was not found.' },
        noBridge,
        { code: 409, reason: 'Bridge not in a Stasis application, or a channel is recording.' },
        { code: 422, reason: 'A listed channel is not in a Stasis application.' },
      ],
    },
    {
      nickname: 'removeChannel',
      method: 'POST',
      path: '/bridges/{bridgeId}/removeChannel',
      summary: 'Remove channels from the bridge.',
      since: ['12.0.0'],
      params: [bridgeId, channelList],
      responseClass: 'void',
      errors: [
        { code: 400, reason: 'A listed channel was not found.' },
        noBridge,
        notInStasis,
        { code: 422, reason: 'A listed channel is not in the bridge.' },
      ],
    },
    {
      nickname: 'setVideoSource',
      method: 'POST',
      path: '/bridges/{bridgeId}/videoSource/{channelId}',
      summary: 'Lock the video of the bridge to one channel.',
      since: ['13.13.0', '14.2.0'],
      params: [bridgeId, { name: 'channelId', description: 'Id of the channel providing the video.', in: 'path', dataType: 'string', required: true }],
      responseClass: 'void',
      errors: [
        { code: 404, reason: 'Bridge or channel not found.' },
        { code: 409, reason: 'Channel is not in a Stasis application.' },
        { code: 422, reason: 'Channel is not in the bridge.' },
      ],
    },
    {
      nickname: 'clearVideoSource',
      method: 'DELETE',
      path: '/bridges/{bridgeId}/videoSource',
      summary: 'Return the bridge video to talk detection.',
      since: ['13.13.0', '14.2.0'],
      params: [bridgeId],
      responseClass: 'void',
      // 409 for a bridge no application owns (Dial()'s basic bridge), as Asterisk answers it, undeclared.
      errors: [noBridge, notInStasis],
    },
    {
      nickname: 'startMoh',
      method: 'POST',
      path: '/bridges/{bridgeId}/moh',
      summary: 'Start music on hold in the bridge.',
      since: ['12.0.0'],
      params: [bridgeId, { name: 'mohClass', description: 'Music on hold class to use.', in: 'query', dataType: 'string' }],
      responseClass: 'void',
      errors: [noBridge, notInStasis],
    },
    {
      nickname: 'stopMoh',
      method: 'DELETE',
      path: '/bridges/{bridgeId}/moh',
      summary: 'Stop music on hold in the bridge.',
      since: ['12.0.0'],
      params: [bridgeId],
      responseClass: 'void',
      errors: [noBridge, notInStasis],
    },
    {
      nickname: 'play',
      method: 'POST',
      path: '/bridges/{bridgeId}/play',
      summary: 'Start playing media to everyone in the bridge.',
      since: ['12.0.0'],
      params: [
        bridgeId,
        playMedia,
        playAnnouncerFormat,
        playLang,
        playOffsetms,
        playSkipms,
        { name: 'playbackId', description: 'Id to give the new playback.', in: 'query', dataType: 'string' },
      ],
      responseClass: 'Playback',
      errors: [...playErrors],
      successStatus: 201,
    },
    {
      nickname: 'playWithId',
      method: 'POST',
      path: '/bridges/{bridgeId}/play/{playbackId}',
      summary: 'Start playing media to the bridge with a chosen playback id.',
      since: ['12.3.0'],
      params: [
        bridgeId,
        { name: 'playbackId', description: 'Id to give the new playback.', in: 'path', dataType: 'string', required: true },
        playMedia,
        playAnnouncerFormat,
        playLang,
        playOffsetms,
        playSkipms,
      ],
      responseClass: 'Playback',
      errors: [...playErrors],
      successStatus: 201,
    },
    {
      nickname: 'record',
      method: 'POST',
      path: '/bridges/{bridgeId}/record',
      summary: 'Start recording everything said in the bridge.',
      since: ['12.0.0'],
      params: [
        bridgeId,
        { name: 'name', description: 'Name of the recording.', in: 'query', dataType: 'string', required: true },
        { name: 'format', description: 'File format to record in.', in: 'query', dataType: 'string', required: true },
        { name: 'recorder_format', description: 'Format of the recorder channel that listens to the bridge.', in: 'query', dataType: 'string' },
        ...recordingOptionParams,
      ],
      responseClass: 'LiveRecording',
      errors: [
        { code: 400, reason: 'Invalid parameters.' },
        noBridge,
        { code: 409, reason: 'Bridge not in a Stasis application, or the recording name is in use.' },
        { code: 422, reason: 'Unknown format.' },
      ],
      successStatus: 201,
    },
  ],
} as const satisfies ResourceDecl;
