// A SIP call's end as the hang-up tests compare it with Asterisk's captures: the channel's events
// from its first ChannelHangupRequest to its ChannelDestroyed, one line each. The h-extension and
// hang-up-handler suites (sipp-hangup-extension, sipp-hangup-handlers) tell the same events; each
// says how its dialplan steps, user events and destruction read.
import { eventsUntilDestroyed, type Json, type SippServer } from './sipp-peer.ts';

/** How a suite writes the lines that differ between suites. */
export interface StoryLines {
  /** Where a ChannelDialplan (or ChannelDestroyed) event's snapshot is in the dialplan. */
  where(dialplan: Json): string;
  /** A ChannelUserevent's line. */
  userevent(event: Json): string;
  /** The ChannelDestroyed line, given where the channel was. */
  destroyed(where: string): string;
}

/** Reads events into `seen` until `channelId` is destroyed; its story from its first hang-up request on. */
export async function hangupStory(setup: SippServer, channelId: string, seen: Json[], lines: StoryLines): Promise<string[]> {
  await eventsUntilDestroyed(setup, channelId, seen);
  const own = seen.filter((event) => event.channel?.id === channelId);
  const first = own.findIndex((event) => event.type === 'ChannelHangupRequest');
  return own.slice(first).flatMap((event): string[] => {
    switch (event.type) {
      case 'ChannelHangupRequest':
        return [`HangupRequest${'cause' in event ? ` ${event.cause}` : ''}${event.soft ? ' soft' : ''}`];
      case 'ChannelDialplan':
        return [`Dialplan ${lines.where(event.channel.dialplan)}`];
      case 'ChannelUserevent':
        return [lines.userevent(event)];
      case 'ChannelDestroyed':
        return [lines.destroyed(lines.where(event.channel.dialplan))];
      case 'StasisEnd':
        return ['StasisEnd'];
      default:
        return [];
    }
  });
}
