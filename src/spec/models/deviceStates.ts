// Models of the deviceStates resource.
import type { ModelDecl } from '../types.ts';

export const deviceStateModels = {
  DeviceState: {
    description: 'The state of a device.',
    properties: {
      name: { type: 'string', required: true, description: 'Device name.' },
      state: {
        type: 'string',
        required: true,
        allowedValues: ['UNKNOWN', 'NOT_INUSE', 'INUSE', 'BUSY', 'INVALID', 'UNAVAILABLE', 'RINGING', 'RINGINUSE', 'ONHOLD'],
        description: 'Current state of the device.',
      },
    },
  },
} as const satisfies Record<string, ModelDecl>;
