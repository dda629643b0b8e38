// MessageSend(destination[,from[,to]]): sends the channel's message (MESSAGE(body) and the
// MESSAGE_DATA() headers, as the dialplan set or received them) to `destination`
// (`pjsip:alice`, `pjsip:alice/sip:alice@192.0.2.1`, or any technology's `tech:resource`).
// MESSAGE_SEND_STATUS tells how it went, with Asterisk's values: SUCCESS, INVALID_PROTOCOL
// (no such technology), INVALID_URI (a malformed destination), FAILURE.
import { InvalidError, NotFoundError } from '../../core/errors.ts';
import type { TextMessage } from '../../core/messages.ts';
import type { DialplanApplication } from '../application.ts';
import { messageOf } from '../dialplan-message.ts';

export const messageSend: DialplanApplication = {
  name: 'MessageSend',
  synopsis: 'Sends the channel\'s MESSAGE() to pjsip:endpoint or another technology:resource (sets MESSAGE_SEND_STATUS)',
  execute(channel, [destination = '', from = '', toName = ''], services) {
    const status = (value: string): 'next' => {
      channel.setSystemVariable('MESSAGE_SEND_STATUS', value);
      return 'next';
    };
    const router = services.messages;
    if (!router) return status('FAILURE');
    const to = destination.trim();
    try {
      router.destination(to);
    } catch (error) {
      if (error instanceof NotFoundError) return status('INVALID_PROTOCOL');
      if (error instanceof InvalidError) return status('INVALID_URI');
      throw error;
    }
    const composed = messageOf(channel);
    const variables = Object.create(null) as Record<string, string>;
    for (const [name, value] of composed?.variables ?? []) variables[name] = value;
    const message: TextMessage = {
      from: from.trim() || composed?.from || '',
      to,
      body: composed?.body ?? '',
      variables,
    };
    try {
      router.send(message);
    } catch (error) {
      services.log.info({ channel: channel.name, to, err: error, toName }, 'MessageSend failed');
      return status('FAILURE');
    }
    return status('SUCCESS');
  },
};
