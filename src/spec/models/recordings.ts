// Models of the recordings resource.
import type { ModelDecl } from '../types.ts';

export const recordingModels = {
  StoredRecording: {
    description: 'A finished recording kept on disk.',
    properties: {
      name: { type: 'string', required: true, description: 'Path of the recording relative to the recordings directory, without extension.' },
      format: { type: 'string', required: true, description: 'File format (extension) of the recording.' },
    },
  },
  LiveRecording: {
    description: 'A recording that is in progress or has just ended.',
    properties: {
      name: { type: 'string', required: true, description: 'Name of the recording.' },
      format: { type: 'string', required: true, description: 'File format being written.' },
      target_uri: { type: 'string', required: true, description: 'What is being recorded, as channel:<id> or bridge:<id>.' },
      state: {
        type: 'string',
        required: true,
        allowedValues: ['queued', 'recording', 'paused', 'done', 'failed', 'canceled'],
        description: 'Progress of the recording.',
      },
      duration: { type: 'int', description: 'Length of the recording in whole seconds, when known.' },
      talking_duration: { type: 'int', description: 'Seconds of detected talking; only with silence detection.' },
      silence_duration: { type: 'int', description: 'Seconds of detected silence; only with silence detection.' },
      cause: { type: 'string', description: 'Why the recording failed.' },
      total_duration: { type: 'int', description: 'Total length of the recording in whole seconds (same value as duration).' },
    },
  },
} as const satisfies Record<string, ModelDecl>;
