// Models of the mailboxes resource.
import type { ModelDecl } from '../types.ts';

export const mailboxModels = {
  Mailbox: {
    description: 'Message counts of a voice mailbox.',
    properties: {
      name: { type: 'string', required: true, description: 'Mailbox name.' },
      old_messages: { type: 'int', required: true, description: 'Number of messages already heard.' },
      new_messages: { type: 'int', required: true, description: 'Number of messages not yet heard.' },
    },
  },
} as const satisfies Record<string, ModelDecl>;
