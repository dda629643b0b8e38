// Where the event router's deliveries end up. Its own file because both ends name it: the router
// (applications.ts) hands events to sinks, and the event log (event-log.ts) that the router feeds
// passes each numbered event on to one. Declared here, neither of the two imports the other back.
import type { CoreEvent } from '../spec/events.ts';

/**
 * Where an application's events go: an event connection of the interface layer. With an event
 * log (event-log.ts) `json` is the message's text as sent (the event with `application`,
 * `asterisk_id` and `sequence`) and `sequence` its number; `event` is the core event as raised,
 * without those fields. Events about the connection itself (ApplicationReplaced) have neither.
 */
export interface ApplicationSink {
  deliver(application: string, event: CoreEvent, json?: string, sequence?: number): void;
}
