// Models of the endpoints resource.
import type { ModelDecl } from '../types.ts';

export const endpointModels = {
  Endpoint: {
    description: 'A device or account reachable through a channel technology.',
    properties: {
      technology: { type: 'string', required: true, description: 'Channel technology of the endpoint.' },
      resource: { type: 'string', required: true, description: 'Name of the endpoint within its technology.' },
      state: { type: 'string', allowedValues: ['unknown', 'offline', 'online'], description: 'Reachability of the endpoint.' },
      channel_ids: { type: 'List[string]', required: true, description: 'Ids of the channels currently on the endpoint.' },
      max_channels: { type: 'int', description: 'Most channels the endpoint may hold at once.' },
    },
  },
  TextMessage: {
    description: 'An out-of-call text message.',
    properties: {
      from: { type: 'string', required: true, description: 'URI of the sender.' },
      to: { type: 'string', required: true, description: 'Destination of the message.' },
      body: { type: 'string', required: true, description: 'Text of the message.' },
      variables: { type: 'object', description: 'Extra key/value pairs carried with the message.' },
    },
  },
} as const satisfies Record<string, ModelDecl>;
