// The queue between a media WebSocket and the media clock: binary messages from the application,
// in the channel's format, cut into frames of `frameBytes` and played out one per tick, with
// chan_websocket's limits (a message arriving while 1000 frames wait is dropped whole; XOFF at
// 900, XON below 800) and its markers (MARK_MEDIA, STOP_MEDIA_BUFFERING), which wait in the queue
// between frames and are reported when playout reaches them.
//
// Frames live in a ring of fixed-size slots (a short frame is padded with the format's silence)
// that grows by doubling up to what the limits allow, so queueing and playing out allocate
// nothing once it has grown; each slot has a view made once.

export const QUEUE_LENGTH_MAX = 1000;
export const XOFF_LEVEL = 900;
export const XON_LEVEL = 800;
/** Markers waiting at once; MARK_MEDIA beyond it is refused (Asterisk sets no bound). */
export const MAX_PENDING_MARKERS = 1000;

export type MarkerKind = 'MEDIA_MARK_PROCESSED' | 'MEDIA_BUFFERING_COMPLETED';

interface Marker {
  /** Reported once this many frames have been played out since the queue started. */
  readonly atFrame: number;
  readonly kind: MarkerKind;
  readonly correlationId: string;
}

const INITIAL_SLOTS = 64;

export class MediaQueue {
  readonly frameBytes: number;
  readonly #silence: number;
  readonly #maxSlots: number;
  #ring: Uint8Array;
  #slots: Uint8Array[];
  #head = 0;
  #count = 0;
  /** Frames queued and played out since the start (marker positions). */
  #queuedTotal = 0;
  #playedTotal = 0;
  #markers: Marker[] = [];
  #markerHead = 0;
  /** The partial frame kept while buffering. */
  readonly #tail: Uint8Array;
  #tailLength = 0;

  /**
   * `silenceByte` fills short frames (0xff µ-law, 0xd5 A-law, 0 linear); `maxMessageBytes` is the
   * largest message, which may be queued whole on top of QUEUE_LENGTH_MAX - 1 frames.
   */
  constructor(frameBytes: number, silenceByte: number, maxMessageBytes: number) {
    this.frameBytes = frameBytes;
    this.#silence = silenceByte;
    this.#maxSlots = QUEUE_LENGTH_MAX + Math.ceil(maxMessageBytes / frameBytes) + 1;
    this.#tail = new Uint8Array(frameBytes);
    this.#ring = new Uint8Array(0);
    this.#slots = [];
    this.#allocate(Math.min(INITIAL_SLOTS, this.#maxSlots));
  }

  /** Frames waiting (markers do not count). */
  get length(): number {
    return this.#count;
  }

  get pendingMarkers(): number {
    return this.#markers.length - this.#markerHead;
  }

  get tailLength(): number {
    return this.#tailLength;
  }

  /** Bytes held for frames now (the ring grows with the queue, never beyond its limit). */
  get capacityBytes(): number {
    return this.#ring.length;
  }

  /**
   * Queues a message cut into frames. While `buffering`, a partial frame at its end is kept and
   * completed by the next message; otherwise it is dropped. Returns false when the message was
   * dropped whole because the queue was full.
   */
  pushMessage(data: Uint8Array, buffering: boolean): boolean {
    if (this.#count >= QUEUE_LENGTH_MAX) return false;
    const size = this.frameBytes;
    let offset = 0;
    if (this.#tailLength > 0) {
      const take = Math.min(size - this.#tailLength, data.length);
      this.#tail.set(data.subarray(0, take), this.#tailLength);
      this.#tailLength += take;
      offset = take;
      if (this.#tailLength === size) {
        this.#pushBytes(this.#tail, 0, size);
        this.#tailLength = 0;
      }
    }
    while (data.length - offset >= size) {
      this.#pushBytes(data, offset, size);
      offset += size;
    }
    if (offset < data.length && buffering) {
      this.#tail.set(data.subarray(offset), this.#tailLength);
      this.#tailLength += data.length - offset;
    }
    return true;
  }

  /** Queues one message as one frame (passthrough), cut or padded to the frame size. */
  pushWhole(data: Uint8Array): boolean {
    if (this.#count >= QUEUE_LENGTH_MAX) return false;
    this.#pushBytes(data, 0, Math.min(data.length, this.frameBytes));
    return true;
  }

  /** Queues the partial frame kept while buffering as a short (padded) frame. */
  flushTail(): void {
    if (this.#tailLength === 0) return;
    this.#pushBytes(this.#tail, 0, this.#tailLength);
    this.#tailLength = 0;
  }

  /** Queues a marker after the frames queued so far; false when too many wait. */
  pushMarker(kind: MarkerKind, correlationId: string): boolean {
    if (this.pendingMarkers >= MAX_PENDING_MARKERS) return false;
    this.#markers.push({ atFrame: this.#queuedTotal, kind, correlationId });
    return true;
  }

  /** Calls `report` for each marker playout has reached (all frames before it are played). */
  takeMarkers(report: (kind: MarkerKind, correlationId: string) => void): void {
    while (this.#markerHead < this.#markers.length && this.#markers[this.#markerHead].atFrame <= this.#playedTotal) {
      const marker = this.#markers[this.#markerHead++];
      report(marker.kind, marker.correlationId);
    }
    if (this.#markerHead === this.#markers.length && this.#markerHead > 0) {
      this.#markers.length = 0;
      this.#markerHead = 0;
    } else if (this.#markerHead > 256) {
      this.#markers = this.#markers.slice(this.#markerHead);
      this.#markerHead = 0;
    }
  }

  /** The next frame's bytes (a view valid until the next push), or undefined when none waits. */
  shift(): Uint8Array | undefined {
    if (this.#count === 0) return undefined;
    const slot = this.#slots[this.#head];
    this.#head = (this.#head + 1) % this.#slots.length;
    this.#count -= 1;
    this.#playedTotal += 1;
    return slot;
  }

  /** Drops every frame, marker and the kept partial frame (FLUSH_MEDIA). */
  clear(): void {
    this.#head = 0;
    this.#count = 0;
    this.#tailLength = 0;
    this.#playedTotal = this.#queuedTotal;
    this.#markers = [];
    this.#markerHead = 0;
  }

  #pushBytes(source: Uint8Array, offset: number, length: number): void {
    if (this.#count === this.#slots.length) this.#grow();
    const index = (this.#head + this.#count) % this.#slots.length;
    const slot = this.#slots[index];
    // Copy by hand: a subarray of the source would be an allocation per frame.
    for (let i = 0; i < length; i++) slot[i] = source[offset + i];
    if (length < slot.length) slot.fill(this.#silence, length);
    this.#count += 1;
    this.#queuedTotal += 1;
  }

  #grow(): void {
    const slots = Math.min(this.#slots.length * 2, this.#maxSlots);
    if (slots <= this.#slots.length) throw new RangeError('media queue is full beyond its limit');
    const old = this.#slots;
    const oldHead = this.#head;
    const count = this.#count;
    this.#allocate(slots);
    // Unroll the old ring into the new one, oldest first.
    for (let i = 0; i < count; i++) this.#slots[i].set(old[(oldHead + i) % old.length]);
    this.#head = 0;
  }

  #allocate(slots: number): void {
    const size = this.frameBytes;
    this.#ring = new Uint8Array(slots * size);
    this.#slots = Array.from({ length: slots }, (_, i) => this.#ring.subarray(i * size, (i + 1) * size));
  }
}
