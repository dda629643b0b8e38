// Models of the sounds resource.
import type { ModelDecl } from '../types.ts';

export const soundModels = {
  FormatLangPair: {
    description: 'One language and file format in which a sound exists.',
    properties: {
      language: { type: 'string', required: true, description: 'Language of this variant.' },
      format: { type: 'string', required: true, description: 'File format of this variant.' },
    },
  },
  Sound: {
    description: 'A prompt file available for playback.',
    properties: {
      id: { type: 'string', required: true, description: 'Sound id, used in sound: media URIs.' },
      text: { type: 'string', description: 'Words spoken in the sound.' },
      formats: { type: 'List[FormatLangPair]', required: true, description: 'Language and format variants of the sound.' },
    },
  },
} as const satisfies Record<string, ModelDecl>;
