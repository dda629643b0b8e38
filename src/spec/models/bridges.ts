// Models of the bridges resource.
import type { ModelDecl } from '../types.ts';

export const bridgeModels = {
  Bridge: {
    description: 'A place where channels are joined so that their media is exchanged.',
    properties: {
      id: { type: 'string', required: true, description: 'Unique id of the bridge.' },
      technology: { type: 'string', required: true, description: 'Bridging technology in use.' },
      bridge_type: { type: 'string', required: true, allowedValues: ['mixing', 'holding'], description: 'Kind of bridge.' },
      bridge_class: { type: 'string', required: true, description: 'Class of the bridge.' },
      creator: { type: 'string', required: true, description: 'Who created the bridge.' },
      name: { type: 'string', required: true, description: 'Name given to the bridge.' },
      channels: { type: 'List[string]', required: true, description: 'Ids of the channels in the bridge.' },
      video_mode: { type: 'string', allowedValues: ['none', 'talker', 'single', 'sfu'], description: 'How video is distributed in the bridge.' },
      video_source_id: { type: 'string', description: 'Channel whose video is sent to the others, when one is set.' },
      creationtime: { type: 'Date', required: true, description: 'When the bridge was created.' },
      bridgevars: { type: 'object', description: 'Bridge variables and their values, when any exist.' },
    },
  },
} as const satisfies Record<string, ModelDecl>;
