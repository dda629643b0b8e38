// Models of the playbacks resource.
import type { ModelDecl } from '../types.ts';

export const playbackModels = {
  Playback: {
    description: 'Media being played to a channel or a bridge.',
    properties: {
      id: { type: 'string', required: true, description: 'Unique id of the playback.' },
      media_uri: { type: 'string', required: true, description: 'URI of the media now playing.' },
      next_media_uri: { type: 'string', description: 'URI of the following media, when a list is being played.' },
      target_uri: { type: 'string', required: true, description: 'Where the media is played, as channel:<id> or bridge:<id>.' },
      language: { type: 'string', description: 'Language used to pick the media.' },
      state: {
        type: 'string',
        required: true,
        allowedValues: ['enqueued', 'playing', 'complete', 'failed'],
        description: 'Progress of the playback; failed means the media could not be found.',
      },
    },
  },
} as const satisfies Record<string, ModelDecl>;
