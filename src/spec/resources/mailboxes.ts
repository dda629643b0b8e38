// Mailboxes: message-waiting counts of application-controlled mailboxes.
import type { ResourceDecl } from '../types.ts';

const mailboxName = { name: 'mailboxName', description: 'Name of the mailbox.', in: 'path', dataType: 'string', required: true } as const;
const noMailbox = { code: 404, reason: 'Mailbox not found.' } as const;

export const mailboxes = {
  name: 'mailboxes',
  description: 'Mailboxes resources',
  models: ['Mailbox'],
  operations: [
    {
      nickname: 'list',
      method: 'GET',
      path: '/mailboxes',
      summary: 'List the mailboxes.',
      since: ['12.1.0'],
      params: [],
      responseClass: 'List[Mailbox]',
      errors: [],
    },
    {
      nickname: 'get',
      method: 'GET',
      path: '/mailboxes/{mailboxName}',
      summary: 'Read the message counts of a mailbox.',
      since: ['12.1.0'],
      params: [mailboxName],
      responseClass: 'Mailbox',
      errors: [noMailbox],
    },
    {
      nickname: 'update',
      method: 'PUT',
      path: '/mailboxes/{mailboxName}',
      summary: 'Create a mailbox or set its message counts.',
      since: ['12.1.0'],
      params: [
        mailboxName,
        { name: 'oldMessages', description: 'Number of messages already read.', in: 'query', dataType: 'int', required: true },
        { name: 'newMessages', description: 'Number of unread messages.', in: 'query', dataType: 'int', required: true },
      ],
      responseClass: 'void',
      // Patchbay: 503 beyond max_mailboxes.
      errors: [noMailbox, { code: 503, reason: 'Too many mailboxes (max_mailboxes).' }],
    },
    {
      nickname: 'delete',
      method: 'DELETE',
      path: '/mailboxes/{mailboxName}',
      summary: 'Destroy a mailbox.',
      since: ['12.1.0'],
      params: [mailboxName],
      responseClass: 'void',
      errors: [noMailbox],
    },
  ],
} as const satisfies ResourceDecl;
