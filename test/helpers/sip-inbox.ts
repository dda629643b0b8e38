// What the tests' hand-written SIP phones (raw-phone.ts over UDP, raw-tcp-phone.ts over TCP) share:
// reading a header, a tag, a random token, the headers a response copies from its request, and an
// inbox of received messages that a test waits on by first line.

/** A random token for branches, tags and Call-IDs. */
export const randomToken = (): string => Math.random().toString(36).slice(2);

/** The value of header `name` (a regular expression alternation for compact forms: `(?:call-id|i)`). */
export function sipHeader(message: string, name: string): string | undefined {
  return new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(message)?.[1]?.trim();
}

/** The `tag` parameter of a From or To value, or ''. */
export function tagOf(value: string | undefined): string {
  return /;tag=([^;\s>]+)/.exec(value ?? '')?.[1] ?? '';
}

/** The lines a response copies from its request (RFC 3261 §8.2.6.2): Via, From, Call-ID and CSeq. */
export function responseCopies(request: string): string[] {
  return request.split('\r\n').filter((line) => /^(via|v|from|f|call-id|i|cseq):/i.test(line));
}

/** The SIP messages a phone received, newest last, and whoever waits for one. */
export class SipInbox {
  readonly #messages: string[] = [];
  #waiters: Array<() => void> = [];

  /** `owner` names the phone in a timeout's error. */
  constructor(private readonly owner: string) {}

  /** How many received messages nobody has taken yet. */
  get size(): number {
    return this.#messages.length;
  }

  /** The first lines of the messages nobody has taken yet, oldest first. */
  firstLines(): string[] {
    return this.#messages.map((m) => m.split('\r\n')[0]);
  }

  add(message: string): void {
    this.#messages.push(message);
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Takes the next message whose first line matches (and `also`), waiting at most `timeoutMs`. */
  async next(firstLine: RegExp, timeoutMs: number, also: (message: string) => boolean = () => true): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.#messages.findIndex((m) => firstLine.test(m.split('\r\n')[0]) && also(m));
      if (index >= 0) return this.#messages.splice(index, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.owner}: no SIP message ${firstLine} (got ${this.#messages.map((m) => m.split('\r\n')[0]).join(', ')})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}
