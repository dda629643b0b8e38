// The events as the core raises them, derived from the declarations (./models/events.ts), so that
// a misspelt event name or a missing, misspelt or mistyped field is a compile error wherever an
// event is built. The core fills `type`, `timestamp` and the event's own fields; the interface
// layer adds `application` and `asterisk_id` when it delivers the event to a connection.
import type { EventName, EventOf } from './index.ts';

/** Fields of an ARI event that the interface layer adds on delivery. */
export type DeliveryField = 'application' | 'asterisk_id' | 'sequence';

/** Event N as the core raises it. */
export type CoreEventOf<N extends EventName> = N extends EventName ? Omit<EventOf<N>, DeliveryField> : never;

/** Any event the core raises: a union discriminated by `type`. */
export type CoreEvent = CoreEventOf<EventName>;

/** The fields of event N besides `type` and `timestamp`. */
export type EventFields<N extends EventName> = Omit<CoreEventOf<N>, 'type' | 'timestamp'>;

/** Events whose declaration carries field F (e.g. `channel`: the events a channel can raise about itself). */
export type EventsWithField<F extends string> = { [N in EventName]: F extends keyof EventOf<N> ? N : never }[EventName];

/**
 * The fields of event N a raiser supplies when it fills `Filled` itself (a channel fills `channel`).
 * `Filled` stays in the type as a field that must be absent, so that even for an event with no
 * fields of its own a misspelt field is an excess property.
 */
export type RaisedFields<N extends EventName, Filled extends string> = Omit<EventFields<N>, Filled> & { readonly [F in Filled]?: never };

/**
 * The arguments after an event's name: its fields (which may be left out when the event has no
 * required field of its own), then `Rest`.
 */
export type RaiseArgs<Fields, Rest extends unknown[] = []> = {} extends Fields ? [fields?: Fields, ...rest: Rest] : [fields: Fields, ...rest: Rest];
