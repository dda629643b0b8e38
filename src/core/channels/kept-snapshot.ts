// A channel's snapshot kept between changes, and its serialisation shared by the events that carry
// it. The channel says when anything a snapshot shows changed; until then the same snapshot object
// goes into each of its events, and the event log gets each event's text with the snapshot's part
// spliced in from the text made for the first event that carried it.
import type { CoreEvent } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';
import type { SplitEventText } from '../application-sink.ts';

/** Where a snapshot's text starts in an event's text (`channel` is the event's last field). */
const CHANNEL_FIELD = ',"channel":{"id":';

/**
 * Filled by splitEventText for eventText and emptied before it returns: one object for every
 * channel (JavaScript runs one eventText at a time, and it calls no code of a channel's).
 */
const SCRATCH: SplitEventText = { head: '', tail: '', bytes: 0 };

export class KeptSnapshot {
  #version = 0;
  // The snapshot kept at one version and its text once an event needed it, held in fields of
  // their own rather than an object per version: they live as long as the channel.
  /** The version #snapshot was kept at; -1: none kept. */
  #keptVersion = -1;
  #snapshot: Model<'Channel'> | undefined;
  /** `,"channel":{…}}`: the end of an event's text from its `channel` field on. */
  #tail: string | undefined;
  /** UTF-8 bytes of `#tail`. */
  #tailBytes = 0;

  /** Something a snapshot shows changed: the next snapshot is built anew. */
  changed(): void {
    this.#version++;
  }

  /** The snapshot kept for the current version, if any. */
  current(): Model<'Channel'> | undefined {
    return this.#keptVersion === this.#version ? this.#snapshot : undefined;
  }

  /**
   * Keeps the snapshot just built for the current version; undefined keeps none (a snapshot that
   * may change with no write to the channel, such as one reading dialplan functions).
   */
  keep(snapshot: Model<'Channel'> | undefined): void {
    this.#keptVersion = snapshot === undefined ? -1 : this.#version;
    this.#snapshot = snapshot;
    this.#tail = undefined;
    this.#tailBytes = 0;
  }

  /**
   * The JSON text of an event whose last field is `channel`, the same as JSON.stringify(event):
   * made from the kept snapshot's text when the event carries the kept snapshot. Undefined
   * otherwise (the caller serialises the event whole).
   */
  eventText(event: CoreEvent): string | undefined {
    const split = SCRATCH;
    if (!this.splitEventText(event, split)) return undefined;
    const text = split.tail === '' ? split.head : split.head + split.tail;
    split.head = split.tail = '';
    return text;
  }

  /**
   * The same text as eventText, in two flat parts: the event's other fields (`{…`) and the kept
   * snapshot's `,"channel":{…}}`. The first event of a snapshot is serialised whole (`head`, with
   * `tail` empty) and the snapshot's part kept as a slice of it (no copy); false when the event
   * does not carry the kept snapshot.
   */
  splitEventText(event: CoreEvent, into: SplitEventText): boolean {
    const holder = event as { channel?: Model<'Channel'> | undefined };
    const snapshot = holder.channel;
    if (this.#snapshot === undefined || snapshot !== this.#snapshot) return false;
    const tail = this.#tail;
    if (tail === undefined) {
      // `,"channel":{"id":` cannot occur inside the snapshot's own text: a quote inside a JSON
      // string is escaped, and none of its objects has a field `channel`.
      const whole = JSON.stringify(event);
      const at = whole.lastIndexOf(CHANNEL_FIELD);
      if (at > 0) {
        const kept = whole.slice(at);
        this.#tail = kept;
        this.#tailBytes = Buffer.byteLength(kept);
      }
      into.head = whole;
      into.tail = '';
      into.bytes = Buffer.byteLength(whole);
      return true;
    }
    // The event's other fields alone: the field is emptied for the one synchronous stringify
    // (an undefined field is left out; deleting it would turn the object into a slow dictionary).
    holder.channel = undefined;
    let head: string;
    try {
      head = JSON.stringify(event);
    } finally {
      holder.channel = snapshot;
    }
    if (head.length > 2) {
      // The head without its closing brace: a slice of a flat string is flat (no copy).
      into.head = head.slice(0, -1);
      into.tail = tail;
      into.bytes = Buffer.byteLength(head) - 1 + this.#tailBytes;
    } else {
      // `{}`: the tail's leading comma goes (no event is without fields; kept for honesty).
      into.head = `{${tail.slice(1)}`;
      into.tail = '';
      into.bytes = this.#tailBytes;
    }
    return true;
  }
}
