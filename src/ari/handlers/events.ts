// Events: user events (the WebSocket itself is served by events-ws.ts).
import { parseEventSource } from '../../core/applications.ts';
import { formatAriDate } from '../../core/time.ts';
import { AriError, defineHandlers } from '../handler.ts';

export const eventsHandlers = defineHandlers('events', {
  userEvent: ({ eventName, application, source, variables }, { core }) => {
    if (!core.applications.get(application)) throw new AriError(404, `Application not found: ${application}`);
    const event: Record<string, unknown> = {
      type: 'ChannelUserevent',
      timestamp: formatAriDate(),
      eventname: eventName,
      userevent: { ...(variables ?? {}), eventname: eventName },
    };
    for (const uri of source ?? []) {
      if (uri === '') continue;
      const { kind, id } = parseEventSource(uri);
      if (kind === 'deviceState') throw new AriError(400, `Invalid event source for a user event: ${uri}`);
      const snapshot = core.objects.snapshot(kind, id);
      if (snapshot === undefined) throw new AriError(422, `Event source does not exist: ${uri}`);
      event[kind] = snapshot;
    }
    core.applications.sendTo(application, { ...event, type: 'ChannelUserevent', timestamp: event.timestamp as string });
  },
});
