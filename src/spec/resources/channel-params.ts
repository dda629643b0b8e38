// The parameters and errors the channel operations share (ids, originate's parameters, play and
// snoop options, the error answers), apart from the operations in channels.ts so each reads alone.
export const channelId = { name: 'channelId', description: 'Id of the channel.', in: 'path', dataType: 'string', required: true } as const;
export const playbackIdPath = { name: 'playbackId', description: 'Id to give the new playback.', in: 'path', dataType: 'string', required: true } as const;
export const snoopIdPath = { name: 'snoopId', description: 'Id to give the new snoop channel.', in: 'path', dataType: 'string', required: true } as const;

export const variablesBody = {
  name: 'variables',
  description: 'Body object "variables": channel variables to set on the new channel.',
  in: 'body',
  dataType: 'containers',
} as const;

export const noChannel = { code: 404, reason: 'Channel not found.' } as const;
/**
 * Not in Asterisk's declarations (it answers 500 "Allocation failed" when it cannot allocate a
 * channel). Patchbay refuses with 503 when the request would go beyond `max_channels` or, for
 * Local channels, `local_max_depth`: the server is at capacity and the request may succeed later.
 */
export const atCapacity = { code: 503, reason: 'Channel limit (max_channels) or Local channel depth (local_max_depth) reached.' } as const;
export const notInStasis = { code: 409, reason: 'Channel is not in a Stasis application.' } as const;
export const badState = { code: 412, reason: 'Channel is in a state that does not allow this operation.' } as const;
/** Patchbay's bounds on variables (names, values, entries): not in Asterisk's declarations for create. */
export const badParams = { code: 400, reason: 'Invalid parameters.' } as const;
/** Asterisk answers this 404 too without declaring it (resource_channels.c: the label is looked up before dialing). */
export const noLabel = { code: 404, reason: 'The label is not in the context.' } as const;
/** Play requests are bounded (media count, URI length, say-back and tone sizes; docs/playback-bounds.md). */
export const badMedia = { code: 400, reason: 'Media list or a media URI beyond its bounds.' } as const;

/** The standard trio of errors for operations on a channel controlled by an application. */
export const controlErrors = [noChannel, notInStasis, badState] as const;

/** What both originate operations answer when they cannot (POST /channels, POST /channels/{channelId}). */
export const originateErrors = [badParams, noLabel, { code: 409, reason: 'Channel id already in use.' }, atCapacity] as const;

export const originateParams = {
  endpoint: { name: 'endpoint', description: 'Endpoint to dial, as technology/resource.', in: 'query', dataType: 'string', required: true },
  extension: { name: 'extension', description: 'Dialplan extension to run once answered.', in: 'query', dataType: 'string' },
  context: { name: 'context', description: 'Dialplan context to run once answered.', in: 'query', dataType: 'string' },
  priority: { name: 'priority', description: 'Dialplan priority to run once answered.', in: 'query', dataType: 'long' },
  label: { name: 'label', description: 'Dialplan priority label to run once answered; overrides priority.', in: 'query', dataType: 'string' },
  app: { name: 'app', description: 'Application that receives the channel once answered (instead of the dialplan).', in: 'query', dataType: 'string' },
  appArgs: { name: 'appArgs', description: 'Arguments passed to the application, comma-separated.', in: 'query', dataType: 'string' },
  callerId: { name: 'callerId', description: 'Caller id to present.', in: 'query', dataType: 'string' },
  timeout: { name: 'timeout', description: 'Seconds to wait for an answer; -1 waits forever.', in: 'query', dataType: 'int', defaultValue: 30 },
  channelId: { name: 'channelId', description: 'Id to give the new channel.', in: 'query', dataType: 'string' },
  otherChannelId: { name: 'otherChannelId', description: 'Id to give the second half of a Local channel.', in: 'query', dataType: 'string' },
  originator: { name: 'originator', description: 'Channel whose linked id and capabilities the new channel takes; excludes formats.', in: 'query', dataType: 'string' },
  formats: { name: 'formats', description: 'Comma-separated format names to offer; excludes originator.', in: 'query', dataType: 'string' },
} as const;

/** Whom originate dials and where the answered channel goes, with its variables: both originate operations, in this order. */
export const originateDestinationParams = [
  originateParams.endpoint,
  originateParams.extension,
  originateParams.context,
  originateParams.priority,
  originateParams.label,
  originateParams.app,
  originateParams.appArgs,
  originateParams.callerId,
  originateParams.timeout,
  variablesBody,
] as const;

/** The second half's id and the new channel's capabilities: after the channel's own id wherever a channel is made. */
export const creationParams = [originateParams.otherChannelId, originateParams.originator, originateParams.formats] as const;

export const playMedia = { name: 'media', description: 'Media URIs to play, in order.', in: 'query', dataType: 'string', required: true, allowMultiple: true } as const;
export const playLang = { name: 'lang', description: 'Language of the sounds; the channel language when absent.', in: 'query', dataType: 'string' } as const;
export const playOffsetms = { name: 'offsetms', description: 'Milliseconds to skip at the start of the first media.', in: 'query', dataType: 'int', range: { min: 0 } } as const;
export const playSkipms = { name: 'skipms', description: 'Milliseconds moved by a forward or reverse control.', in: 'query', dataType: 'int', defaultValue: 3000, range: { min: 0 } } as const;

export const directionParam = {
  name: 'direction',
  description: 'Which audio direction is affected.',
  in: 'query',
  dataType: 'string',
  defaultValue: 'both',
  allowedValues: ['both', 'in', 'out'],
} as const;

export const snoopSpy = {
  name: 'spy',
  description: 'Direction of audio to listen to.',
  in: 'query',
  dataType: 'string',
  defaultValue: 'none',
  allowedValues: ['none', 'both', 'out', 'in'],
} as const;
export const snoopWhisper = {
  name: 'whisper',
  description: 'Direction of audio to speak into.',
  in: 'query',
  dataType: 'string',
  defaultValue: 'none',
  allowedValues: ['none', 'both', 'out', 'in'],
} as const;
export const snoopApp = { name: 'app', description: 'Application that receives the snoop channel.', in: 'query', dataType: 'string', required: true } as const;
export const snoopAppArgs = { name: 'appArgs', description: 'Arguments passed to the application.', in: 'query', dataType: 'string' } as const;
