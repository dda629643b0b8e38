// Hands the ladder of each ended SIP call to the LadderStore: when a PJSIP channel is destroyed,
// the dialog that carried it is written a moment later (the answer to a BYE arrives after the
// channel is gone). Dialogs that are due are written together, one transaction a turn, so that a
// busy server pays one commit per batch rather than one per call; whatever still waits is written
// at stop, before the database closes.
import type { LadderStore } from './ladder-store.ts';
import type { SipLadder } from './sip-ladder.ts';

/** How long after the channel ends its dialog is written: room for the BYE's 200 and retransmissions. */
const SETTLE_MS = 2000;
/** Dialogs due within this long of each other are written together (a busy server: one commit a second). */
const BATCH_MS = 1000;
/** Dialogs waiting at once; beyond (a flood of ended calls) the oldest are written early. */
const MAX_WAITING = 1000;

export interface EndedLaddersOptions {
  readonly ladder: SipLadder;
  readonly store: LadderStore;
  /** The core's channels (only their ends are watched). */
  readonly channels: { onLifecycle(event: 'destroyed', listener: (channel: { readonly id: string; readonly technology: string }) => void): () => void };
  readonly settleMs?: number;
}

export class EndedLadders {
  /** Ladder id → when it is due, oldest first. */
  readonly #waiting = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  readonly #unsubscribe: () => void;
  readonly #options: EndedLaddersOptions;

  constructor(options: EndedLaddersOptions) {
    this.#options = options;
    this.#unsubscribe = options.channels.onLifecycle('destroyed', (channel) => {
      if (channel.technology !== 'PJSIP') return;
      const dialog = options.ladder.ofChannel(channel.id);
      if (dialog) this.#schedule(dialog.id);
    });
  }

  #schedule(ladderId: string): void {
    // A dialog seen again (a second channel of the same dialog) waits from now.
    this.#waiting.delete(ladderId);
    this.#waiting.set(ladderId, Date.now() + (this.#options.settleMs ?? SETTLE_MS));
    if (this.#waiting.size > MAX_WAITING) this.#write([...this.#waiting.keys()].slice(0, this.#waiting.size - MAX_WAITING));
    this.#arm();
  }

  #arm(): void {
    if (this.#timer || this.#waiting.size === 0) return;
    const [firstDue] = this.#waiting.values();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const now = Date.now();
      this.#write([...this.#waiting].filter(([, due]) => due <= now).map(([ladderId]) => ladderId));
      this.#arm();
    }, Math.max(0, firstDue! - Date.now()) + BATCH_MS);
    this.#timer.unref();
  }

  #write(ladderIds: readonly string[]): void {
    const dialogs = [];
    for (const ladderId of ladderIds) {
      this.#waiting.delete(ladderId);
      const dialog = this.#options.ladder.get(ladderId);
      if (dialog) dialogs.push(dialog);
    }
    if (dialogs.length > 0) this.#options.store.saveAll(dialogs);
  }

  /** Writes what waits now (tests; shutdown). */
  flush(): void {
    this.#write([...this.#waiting.keys()]);
  }

  stop(): void {
    this.#unsubscribe();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.flush();
  }
}
