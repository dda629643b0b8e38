// Events: user events and channel claims (the WebSocket itself is served by events-ws.ts).
import { parseEventSource } from '../../core/applications.ts';
import { MODULE_NAMES } from '../../core/builtin-modules.ts';
import { formatAriDate } from '../../util/ari-date.ts';
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

  // `application` is not checked against the registered applications, as in Asterisk: a name
  // that is not connected wins the claim, and StasisBroadcast() then ends with FAILED.
  claimChannel: ({ channelId, application }, { core }) => {
    if (!core.modules.isRunning(MODULE_NAMES.stasisBroadcast)) throw new AriError(501, 'Channel broadcast is not available (res_stasis_broadcast.so is not running)');
    const result = core.broadcasts.claim(channelId, application);
    if (result === 'not-found') throw new AriError(404, 'Channel not found or not in broadcast state');
    if (result === 'conflict') throw new AriError(409, 'Channel has already been claimed by another application');
  },
});
