// Playbacks: media being played to a channel or bridge.
import type { ResourceDecl } from '../types.ts';

const playbackId = { name: 'playbackId', description: 'Id of the playback.', in: 'path', dataType: 'string', required: true } as const;
const noPlayback = { code: 404, reason: 'Playback not found.' } as const;

export const playbacks = {
  name: 'playbacks',
  description: 'Playback control resources',
  models: ['Playback'],
  operations: [
    {
      nickname: 'get',
      method: 'GET',
      path: '/playbacks/{playbackId}',
      summary: 'Describe one playback.',
      since: ['12.0.0'],
      params: [playbackId],
      responseClass: 'Playback',
      errors: [noPlayback],
      aliases: [{ method: 'GET', path: '/playback/{playbackId}' }],
    },
    {
      nickname: 'stop',
      method: 'DELETE',
      path: '/playbacks/{playbackId}',
      summary: 'Stop a playback.',
      since: ['12.0.0'],
      params: [playbackId],
      responseClass: 'void',
      errors: [noPlayback],
      aliases: [{ method: 'DELETE', path: '/playback/{playbackId}' }],
    },
    {
      nickname: 'control',
      method: 'POST',
      path: '/playbacks/{playbackId}/control',
      summary: 'Pause, resume, rewind, fast-forward or restart a playback.',
      since: ['12.0.0'],
      params: [
        playbackId,
        {
          name: 'operation',
          description: 'What to do with the playback.',
          in: 'query',
          dataType: 'string',
          required: true,
          allowedValues: ['restart', 'pause', 'unpause', 'reverse', 'forward'],
        },
      ],
      responseClass: 'void',
      errors: [
        { code: 400, reason: 'Unknown operation.' },
        noPlayback,
        { code: 409, reason: 'The playback is in a state that does not allow this operation.' },
      ],
      aliases: [{ method: 'POST', path: '/playback/{playbackId}/control' }],
    },
  ],
} as const satisfies ResourceDecl;
