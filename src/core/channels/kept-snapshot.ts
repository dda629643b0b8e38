// A channel's snapshot kept between changes, and its serialisation shared by the events that carry
// it. The channel says when anything a snapshot shows changed; until then the same snapshot object
// goes into each of its events, and the event log gets each event's text with the snapshot's part
// spliced in from the text made for the first event that carried it.
import type { CoreEvent } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';

/** Where a snapshot's text starts in an event's text (`channel` is the event's last field). */
const CHANNEL_FIELD = ',"channel":{"id":';
const CHANNEL_FIELD_NAME_LENGTH = ',"channel":'.length;

/** A snapshot at one version, and its JSON text once an event needed it. */
interface Kept {
  readonly version: number;
  readonly snapshot: Model<'Channel'>;
  text: string | undefined;
}

export class KeptSnapshot {
  #version = 0;
  #kept: Kept | undefined;

  /** Something a snapshot shows changed: the next snapshot is built anew. */
  changed(): void {
    this.#version++;
  }

  /** The snapshot kept for the current version, if any. */
  current(): Model<'Channel'> | undefined {
    const kept = this.#kept;
    return kept !== undefined && kept.version === this.#version ? kept.snapshot : undefined;
  }

  /**
   * Keeps the snapshot just built for the current version; undefined keeps none (a snapshot that
   * may change with no write to the channel, such as one reading dialplan functions).
   */
  keep(snapshot: Model<'Channel'> | undefined): void {
    this.#kept = snapshot === undefined ? undefined : { version: this.#version, snapshot, text: undefined };
  }

  /**
   * The JSON text of an event whose last field is `channel`, the same as JSON.stringify(event):
   * made from the kept snapshot's text when the event carries the kept snapshot. Undefined
   * otherwise (the caller serialises the event whole).
   */
  eventText(event: CoreEvent): string | undefined {
    const kept = this.#kept;
    const holder = event as { channel?: Model<'Channel'> | undefined };
    const snapshot = holder.channel;
    if (kept === undefined || snapshot !== kept.snapshot) return undefined;
    if (kept.text === undefined) {
      // The first event of this snapshot is serialised whole, and the snapshot's text is kept as a
      // slice of it (no copy). `,"channel":{"id":` cannot occur inside the snapshot's own text: a
      // quote inside a JSON string is escaped, and none of its objects has a field `channel`.
      const whole = JSON.stringify(event);
      const at = whole.lastIndexOf(CHANNEL_FIELD);
      if (at > 0) kept.text = whole.slice(at + CHANNEL_FIELD_NAME_LENGTH, -1);
      return whole;
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
    return head.length > 2 ? `${head.slice(0, -1)},"channel":${kept.text}}` : `{"channel":${kept.text}}`;
  }
}
