// Events: user events and channel claims (the WebSocket itself is served by events-ws.ts).
import { claimBroadcastChannel, sendUserEvent } from '../../control/user-events.ts';
import { AriError, defineHandlers } from '../handler.ts';

export const eventsHandlers = defineHandlers('events', {
  userEvent: ({ eventName, application, source, variables }, { core }) => {
    // 404 unknown application, 400 a device state as source, 422 a source that does not exist.
    sendUserEvent(core, { eventName, application, sources: source ?? [], variables: variables ?? {} });
  },

  // `application` is not checked against the registered applications, as in Asterisk: a name
  // that is not connected wins the claim, and StasisBroadcast() then ends with FAILED.
  claimChannel: ({ channelId, application }, { core }) => {
    const result = claimBroadcastChannel(core, channelId, application);
    if (result === 'unavailable') throw new AriError(501, 'Channel broadcast is not available (res_stasis_broadcast.so is not running)');
    if (result === 'not-found') throw new AriError(404, 'Channel not found or not in broadcast state');
    if (result === 'conflict') throw new AriError(409, 'Channel has already been claimed by another application');
  },
});
