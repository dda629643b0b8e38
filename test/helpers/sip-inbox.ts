// What the tests' hand-written SIP phones (raw-phone.ts over UDP, raw-tcp-phone.ts over TCP) share:
// reading a header, a tag, a random token, the headers a response copies from its request, and an
// inbox of received messages that a test waits on by first line; and the plain out-of-dialog
// INVITE the suites that only fire one at the server from a UDP socket send.
import { randomBytes } from 'node:crypto';

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

/** What rawInviteText() needs; the branch (z9hG4bK…) and From tag are random unless given. */
export interface RawInvite {
  /** The server's SIP port on 127.0.0.1. */
  readonly serverPort: number;
  /** The sender's UDP port on 127.0.0.1 (Via and Contact). */
  readonly localPort: number;
  /** The user called (Request-URI and To). */
  readonly user: string;
  readonly fromUser: string;
  readonly callId: string;
  readonly branch?: string;
  readonly fromTag?: string;
}

/** An INVITE over UDP from 127.0.0.1 with a PCMU offer (CSeq 1, media port 40000), as text. */
export function rawInviteText(invite: RawInvite): string {
  const { serverPort, localPort, user, fromUser, callId } = invite;
  const branch = invite.branch ?? `z9hG4bK${randomBytes(6).toString('hex')}`;
  const fromTag = invite.fromTag ?? randomBytes(4).toString('hex');
  const sdp = ['v=0', 'o=x 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
  return [
    `INVITE sip:${user}@127.0.0.1:${serverPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};branch=${branch};rport`,
    'Max-Forwards: 70',
    `From: <sip:${fromUser}@127.0.0.1>;tag=${fromTag}`,
    `To: <sip:${user}@127.0.0.1:${serverPort}>`,
    `Call-ID: ${callId}`,
    'CSeq: 1 INVITE',
    `Contact: <sip:${fromUser}@127.0.0.1:${localPort}>`,
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n');
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
