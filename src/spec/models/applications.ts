// Models of the applications resource.
import type { ModelDecl } from '../types.ts';

export const applicationModels = {
  Application: {
    description: 'A client application and what it is subscribed to.',
    properties: {
      name: { type: 'string', required: true, description: 'Application name.' },
      channel_ids: { type: 'List[string]', required: true, description: 'Channels the application is subscribed to.' },
      bridge_ids: { type: 'List[string]', required: true, description: 'Bridges the application is subscribed to.' },
      endpoint_ids: { type: 'List[string]', required: true, description: 'Endpoints the application is subscribed to, as tech/resource.' },
      device_names: { type: 'List[string]', required: true, description: 'Device states the application is subscribed to.' },
      events_allowed: { type: 'List[object]', required: true, description: 'Event types the application accepts (empty means all).' },
      events_disallowed: { type: 'List[object]', required: true, description: 'Event types the application refuses.' },
      connected: { type: 'boolean', description: 'Patchbay: false while no event connection holds the application (absent while one does).' },
      disconnected_since: { type: 'Date', description: 'Patchbay: when its last event connection went away.' },
      calls_held_until: {
        type: 'Date',
        description: 'Patchbay: while its resumable connection is away, channels sent to it wait for it until then (the reconnect grace period).',
      },
    },
  },
} as const satisfies Record<string, ModelDecl>;
