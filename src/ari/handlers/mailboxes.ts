// Mailboxes: message counts maintained by applications.
import { defineHandlers } from '../handler.ts';

export const mailboxesHandlers = defineHandlers('mailboxes', {
  list: (_params, { core }) => core.mailboxes.list(),
  get: ({ mailboxName }, { core }) => core.mailboxes.get(mailboxName),
  update: ({ mailboxName, oldMessages, newMessages }, { core }) => core.mailboxes.update(mailboxName, oldMessages, newMessages),
  delete: ({ mailboxName }, { core }) => core.mailboxes.delete(mailboxName),
});
