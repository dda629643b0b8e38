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
  /**
   * Optional: a numbered event as its parts (see LoggedMessage), instead of `deliver` with the
   * joined text. A transport that writes the parts straight into its frame never makes the
   * message's string (joining the shared event text with the application's fields made a new
   * string per event and application, which writing then copied flat once more).
   */
  deliverMessage?(application: string, event: CoreEvent, message: LoggedMessage): void;
}

/**
 * One numbered event as the log hands it to a transport, in parts: the message is `body` with
 * `fields` and the decimal `sequence` spliced before its closing brace, or, when `fields` is
 * empty, `body` itself. The event log reuses one such object for every event: a transport reads
 * it during the call and keeps nothing of it but what `text()` returns.
 */
export interface LoggedMessage {
  /**
   * The event's own text (`{…}`, shared by every application it goes to), or the whole message;
   * when `tail` is not empty, only the text's first part (`{…` without the closing brace).
   */
  readonly body: string;
  /**
   * The rest of the event's text after `body` (a channel's kept snapshot and the closing brace),
   * or ''. Kept apart so that the message is measured and written without first being joined into
   * one string, which measuring or writing would copy flat.
   */
  readonly tail: string;
  /** UTF-8 bytes of `body` and `tail` together. */
  readonly bodyBytes: number;
  /** `,"application":…,"asterisk_id":…,"sequence":`, or '' when `body` is the whole message. */
  readonly fields: string;
  /** UTF-8 bytes of `fields`. */
  readonly fieldsBytes: number;
  readonly sequence: number;
  /** UTF-8 bytes of the whole message. */
  readonly bytes: number;
  /** The message as one string (made on each call). */
  text(): string;
}

/**
 * Makes an event's JSON text from parts its publisher keeps serialised (a channel's unchanged
 * snapshot): the same text as JSON.stringify(event), or undefined to have it serialised whole.
 * The router passes it to the log with the event; the log asks only when an application needs text.
 */
export interface EventTextSource {
  eventText(event: CoreEvent): string | undefined;
  /**
   * Optional: the same text in two flat parts written into `into` (true), or false to have the
   * text made by eventText. Joining kept parts makes a chained string, and counting its bytes or
   * writing it into a frame copies it flat first (≈ 1 KB of garbage per event); the parts are
   * counted and written one by one instead.
   */
  splitEventText?(event: CoreEvent, into: SplitEventText): boolean;
}

/** An event's text as `head` + `tail`, both flat strings, and its UTF-8 bytes. */
export interface SplitEventText {
  head: string;
  tail: string;
  bytes: number;
}

/**
 * The text of one event, serialised once for every application it goes to (one publish): with
 * many applications subscribed to everything, stringifying the same event for each was most of
 * the cost of a call.
 */
export interface SharedText {
  /** The event's text, or its first part when `tail` is not empty. */
  text: string | undefined;
  /** The rest of the event's text after `text` (see EventTextSource.splitEventText), or ''/undefined. */
  tail?: string | undefined;
  /** UTF-8 bytes of `text` and `tail`, once measured. */
  bytes?: number | undefined;
  /** Makes `text` from kept parts when it is first needed (see EventTextSource). */
  source?: EventTextSource | undefined;
  /** Where a source writes the text's parts (one object per holder); without it the text is made whole. */
  readonly split?: SplitEventText;
}

/** A SharedText holder with nothing in it yet. */
export function emptySharedText(source?: EventTextSource): SharedText {
  return { text: undefined, tail: '', bytes: undefined, source, split: { head: '', tail: '', bytes: 0 } };
}
