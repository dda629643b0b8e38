// Events: user events (the WebSocket itself is served by events-ws.ts).
import { parseEventSource } from '../../core/applications.ts';
import { formatAriDate } from '../../core/time.ts';
import type { ObjectKind, ObjectSnapshots } from '../../core/objects.ts';
import type { CoreEventOf } from '../../spec/events.ts';
import { AriError, defineHandlers } from '../handler.ts';

/** Puts a source's snapshot into the user event under its kind; false when the source does not exist. */
function attach<K extends ObjectKind>(event: CoreEventOf<'ChannelUserevent'>, kind: K, snapshot: ObjectSnapshots[K] | undefined): boolean {
  if (snapshot === undefined) return false;
  const sources: Partial<ObjectSnapshots> = event;
  sources[kind] = snapshot;
  return true;
}

export const eventsHandlers = defineHandlers('events', {
  userEvent: ({ eventName, application, source, variables }, { core }) => {
    if (!core.applications.get(application)) throw new AriError(404, `Application not found: ${application}`);
    const event: CoreEventOf<'ChannelUserevent'> = {
      type: 'ChannelUserevent',
      timestamp: formatAriDate(),
      eventname: eventName,
      userevent: { ...(variables ?? {}), eventname: eventName },
    };
    for (const uri of source ?? []) {
      if (uri === '') continue;
      const { kind, id } = parseEventSource(uri);
      if (kind === 'deviceState') throw new AriError(400, `Invalid event source for a user event: ${uri}`);
      if (!attach(event, kind, core.objects.snapshot(kind, id))) throw new AriError(422, `Event source does not exist: ${uri}`);
    }
    core.applications.sendTo(application, event);
  },
});
