// Hands the ladder of each ended SIP call to the LadderStore: when a PJSIP channel is destroyed,
// the dialog that carried it is written a moment later (the answer to a BYE arrives after the
// channel is gone), and whatever is still waiting is written at stop, before the database closes.
import type { Channels } from '../../core/channels/channels.ts';
import type { LadderStore } from './ladder-store.ts';
import type { SipLadder } from './sip-ladder.ts';

/** How long after the channel ends its dialog is written: room for the BYE's 200 and retransmissions. */
const SETTLE_MS = 2000;
/** Dialogs waiting to be written at once; beyond (a flood of ended calls) the oldest is written early. */
const MAX_WAITING = 1000;

export interface EndedLaddersOptions {
  readonly ladder: SipLadder;
  readonly store: LadderStore;
  readonly channels: Channels;
  readonly settleMs?: number;
}

export class EndedLadders {
  readonly #waiting = new Map<string, NodeJS.Timeout>();
  readonly #unsubscribe: () => void;
  readonly #options: EndedLaddersOptions;

  constructor(options: EndedLaddersOptions) {
    this.#options = options;
    this.#unsubscribe = options.channels.onLifecycle('destroyed', (channel) => {
      if (channel.technology !== 'PJSIP') return;
      const dialog = options.ladder.ofChannel(channel.id);
      if (dialog) this.#schedule(dialog.callId);
    });
  }

  #schedule(callId: string): void {
    clearTimeout(this.#waiting.get(callId));
    this.#waiting.delete(callId);
    if (this.#waiting.size >= MAX_WAITING) {
      const [oldest] = this.#waiting.keys();
      this.#write(oldest!);
    }
    const timer = setTimeout(() => this.#write(callId), this.#options.settleMs ?? SETTLE_MS);
    timer.unref();
    this.#waiting.set(callId, timer);
  }

  #write(callId: string): void {
    clearTimeout(this.#waiting.get(callId));
    this.#waiting.delete(callId);
    const dialog = this.#options.ladder.get(callId);
    if (dialog) this.#options.store.save(dialog);
  }

  /** Writes what waits now (tests; shutdown). */
  flush(): void {
    for (const callId of [...this.#waiting.keys()]) this.#write(callId);
  }

  stop(): void {
    this.#unsubscribe();
    this.flush();
  }
}
