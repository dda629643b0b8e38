// One application's held events in a ring (the event log's storage, see event-log.ts): the JSON
// text as sent, and in typed arrays the time it was logged and its size.
import type { LoggedMessage } from './application-sink.ts';

/** One numbered event as it is sent. */
export interface LoggedEvent {
  readonly sequence: number;
  /** Milliseconds since the epoch when it was logged. */
  readonly at: number;
  /** The message as sent: the event with `application`, `asterisk_id` and `sequence`. */
  readonly json: string;
  readonly bytes: number;
}

/** Ring capacity a log starts with; it doubles as events arrive, up to what the count bound needs. */
const INITIAL_CAPACITY = 64;

/**
 * The held events of one application, oldest first, in a ring: the JSON text as sent, and in
 * typed arrays the time it was logged and its size. Sequences are consecutive and end at
 * lastSequence, so they are not stored. Appending allocates nothing but the text itself (the
 * ring grows by doubling, a bounded number of times), and dropping the oldest is O(1).
 */
export class ApplicationLog {
  /** The message text, or (where `spliced` is 1) the event's own text, shared by every application. */
  json: (string | undefined)[];
  spliced: Uint8Array;
  at: Float64Array;
  sizes: Float64Array;
  /** Index of the oldest held event. */
  head = 0;
  count = 0;
  bytes = 0;
  lastSequence = 0;
  /** The sequence an at-least-once reader acknowledged last; undefined until one connects. */
  acked: number | undefined;
  lastActivity = 0;
  /** `,"application":…,"asterisk_id":…,"sequence":` — what is spliced before each event's closing brace. */
  readonly deliveryFields: string;
  /** UTF-8 bytes of deliveryFields. */
  readonly deliveryFieldsBytes: number;

  /** @param maxCapacity events the ring ever holds at once (the count bound plus the one being added). */
  constructor(application: string, serverId: string, private readonly maxCapacity: number) {
    const capacity = Math.min(INITIAL_CAPACITY, maxCapacity);
    this.json = new Array<string | undefined>(capacity).fill(undefined);
    this.spliced = new Uint8Array(capacity);
    this.at = new Float64Array(capacity);
    this.sizes = new Float64Array(capacity);
    this.deliveryFields = `,"application":${JSON.stringify(application)},"asterisk_id":${JSON.stringify(serverId)},"sequence":`;
    this.deliveryFieldsBytes = Buffer.byteLength(this.deliveryFields);
  }

  /** Sequence of the oldest held event; lastSequence + 1 when none is held. */
  get firstHeld(): number {
    return this.lastSequence - this.count + 1;
  }

  /** Time the oldest held event was logged (only when count > 0). */
  get oldestAt(): number {
    return this.at[this.head]!;
  }

  /** Ring index of the held event with this sequence; -1 when it is not held. */
  indexOf(sequence: number): number {
    const offset = sequence - this.firstHeld;
    return offset >= 0 && offset < this.count ? (this.head + offset) % this.json.length : -1;
  }

  get(sequence: number): LoggedEvent | undefined {
    const index = this.indexOf(sequence);
    if (index < 0) return undefined;
    return { sequence, at: this.at[index]!, json: this.textAt(index, sequence), bytes: this.sizes[index]! };
  }

  text(sequence: number): string | undefined {
    const index = this.indexOf(sequence);
    return index < 0 ? undefined : this.textAt(index, sequence);
  }

  private textAt(index: number, sequence: number): string {
    const stored = this.json[index]!;
    return this.spliced[index] === 1 ? spliceDeliveryFields(stored, this.deliveryFields, sequence) : stored;
  }

  /** Adds the event after the newest as its own text (`{…}`), the delivery fields spliced in when read. */
  pushBody(at: number, body: string, bytes: number): void {
    this.push(at, body, bytes);
    this.spliced[(this.head + this.count - 1) % this.json.length] = 1;
  }

  /** Adds the event after the newest (its sequence is firstHeld + count: lastSequence is the caller's). */
  push(at: number, json: string, bytes: number): void {
    if (this.count === this.json.length) this.grow();
    const index = (this.head + this.count) % this.json.length;
    this.json[index] = json;
    this.spliced[index] = 0;
    this.at[index] = at;
    this.sizes[index] = bytes;
    this.count++;
    this.bytes += bytes;
  }

  dropOldest(): void {
    if (this.count === 0) return;
    const index = this.head;
    this.bytes -= this.sizes[index]!;
    this.json[index] = undefined;
    this.head = index + 1 === this.json.length ? 0 : index + 1;
    this.count--;
  }

  private grow(): void {
    const capacity = this.json.length;
    const larger = Math.max(capacity + 1, Math.min(capacity * 2, this.maxCapacity));
    const json = new Array<string | undefined>(larger).fill(undefined);
    const spliced = new Uint8Array(larger);
    const at = new Float64Array(larger);
    const sizes = new Float64Array(larger);
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % capacity;
      json[i] = this.json[from];
      spliced[i] = this.spliced[from]!;
      at[i] = this.at[from]!;
      sizes[i] = this.sizes[from]!;
    }
    this.json = json;
    this.spliced = spliced;
    this.at = at;
    this.sizes = sizes;
    this.head = 0;
  }
}

/**
 * The message text of an event: its own text (`{…}`) with `deliveryFields` and the sequence before
 * the closing brace, which is what serialising `{ ...event, application, asterisk_id, sequence }`
 * gives when the event has none of those fields.
 */
export function spliceDeliveryFields(body: string, deliveryFields: string, sequence: number): string {
  // `{}`: the fields open the object, without the comma.
  return body.length === 2 ? `{${deliveryFields.slice(1)}${sequence}}` : body.slice(0, -1) + deliveryFields + sequence + '}';
}

/**
 * The LoggedMessage the event log hands to transports, one object reused for every event: set()
 * fills it, and nothing is joined unless a transport asks for text().
 */
export class ReusedMessage implements LoggedMessage {
  body = '';
  tail = '';
  bodyBytes = 0;
  fields = '';
  fieldsBytes = 0;
  sequence = 0;
  bytes = 0;

  set(body: string, tail: string, bodyBytes: number, fields: string, fieldsBytes: number, sequence: number, bytes: number): this {
    this.body = body;
    this.tail = tail;
    this.bodyBytes = bodyBytes;
    this.fields = fields;
    this.fieldsBytes = fieldsBytes;
    this.sequence = sequence;
    this.bytes = bytes;
    return this;
  }

  text(): string {
    const body = this.tail === '' ? this.body : this.body + this.tail;
    return this.fields === '' ? body : spliceDeliveryFields(body, this.fields, this.sequence);
  }

  /** Lets go of the texts once the event is delivered (the object outlives them). */
  clear(): void {
    this.body = '';
    this.tail = '';
    this.fields = '';
  }
}
