// The web console's SIP ladder (docs/console.md, "SIP ladder"): the last messages of each dialog
// (a call, a subscription: Call-ID and tags; a registration: its Call-ID) as they were sent or received, fed by the
// `sip trace` tap (src/sip/trace.ts). Everything is bounded: messages per dialog, dialogs, and
// characters in total; the oldest dialog goes first. Above a configured rate of new dialogs the
// ladder stops taking new ones (the dialogs it holds carry on), so a busy server does not pay
// for serialising every message. What it holds is what the log of `sip trace` would hold, with
// the secrets masked: SDES keys (a=crypto's inline:) and digest responses of Authorization.
import { SipResponse, type SipMessage } from '../../sip/message.ts';
import { maskSdesKeys } from '../../sip/sdp/crypto.ts';
import type { TransportProtocol } from '../../sip/transport.ts';

export interface SipLadderSettings {
  /** Messages kept per dialog (its last ones); 0 turns the ladder off. */
  readonly messagesPerDialog: number;
  /** Dialogs kept, live and ended, newest last. */
  readonly dialogs: number;
  /** New dialogs per second (over the last 10 s) above which new dialogs are not recorded. */
  readonly maxCallRate: number;
}

export const DEFAULT_LADDER_SETTINGS: SipLadderSettings = { messagesPerDialog: 64, dialogs: 500, maxCallRate: 20 };

export interface LadderMessage {
  /** ms since the epoch. */
  readonly at: number;
  /** `in`: Patchbay received it; `out`: Patchbay sent it. */
  readonly direction: 'in' | 'out';
  /** The other party's transport address, `UDP 192.0.2.1:5060`. */
  readonly peer: string;
  /** `INVITE`, `100 Trying`, … */
  readonly summary: string;
  /** The method the message belongs to (CSeq's). */
  readonly method: string;
  readonly text: string;
}

export interface LadderDialog {
  /**
   * What names this ladder: a registration's Call-ID; for a dialog, its Call-ID, our side (`uac`:
   * we sent the request that made it, `uas`: we received it) and the tag of that request's From,
   * so that the two legs of a call Patchbay places to itself (one Call-ID) have a ladder each.
   */
  readonly id: string;
  readonly callId: string;
  /** The method of its first message: INVITE, REGISTER, SUBSCRIBE, OPTIONS … */
  readonly kind: string;
  readonly from: string;
  readonly to: string;
  readonly firstAt: number;
  lastAt: number;
  /** Channels this dialog carried (id and name), told by the technology when they are made. */
  readonly channels: Array<{ id: string; name: string }>;
  readonly messages: LadderMessage[];
  /** Messages dropped from its start because the dialog had more than the bound. */
  dropped: number;
  chars: number;
}

/** Longest message text kept (a body may be large). */
const MAX_MESSAGE_CHARS = 8 * 1024;
/** Characters held in total, all dialogs together (about 2 bytes each in memory). */
const MAX_TOTAL_CHARS = 8 * 1024 * 1024;
/** Channels remembered per dialog (forks, re-used Call-IDs). */
const MAX_CHANNELS_PER_DIALOG = 8;
const RATE_WINDOW_MS = 10_000;
/** From and To as shown in lists: bounded. */
const MAX_PARTY_CHARS = 200;
/** Tags kept in a ladder's id: bounded (a peer chooses its own). */
const MAX_TAG_CHARS = 128;
/** Outbound channels waiting for their first message (their INVITE is not sent when they are made). */
const MAX_WAITING_CHANNELS = 1000;

/** Requests of these methods are kept per Call-ID: they make no dialog whose tags would tell legs apart. */
const PER_CALL_ID_METHODS = new Set(['REGISTER']);

/** A channel's SIP leg as the technology tells it when the channel is made. */
export interface LadderLeg {
  readonly callId: string;
  /** An inbound call: the INVITE's From tag; an outbound one has none yet (its INVITE is not sent). */
  readonly remoteTag: string;
}

/** Masks a digest `response="…"` (and Proxy-Authorization's) so that the page never shows it. */
export function maskDigestResponses(text: string): string {
  return text.replace(/^((?:Proxy-)?Authorization:[^\r\n]*?\bresponse=)("[^"\r\n]*"|[^,\s\r\n]*)/gim, '$1"[masked]"');
}

export class SipLadder {
  #settings: SipLadderSettings;
  /** Ladder id → dialog, oldest first (insertion order). */
  readonly #dialogs = new Map<string, LadderDialog>();
  /** Call-ID → outbound channels whose first message is still to come, oldest first. */
  readonly #waitingChannels = new Map<string, Array<{ id: string; name: string }>>();
  /** When the last new dialogs started, for the rate gate. */
  readonly #starts: number[] = [];
  #chars = 0;
  /** New dialogs left out because of the rate gate, since start. */
  skipped = 0;

  constructor(settings: SipLadderSettings = DEFAULT_LADDER_SETTINGS, private readonly now: () => number = Date.now) {
    this.#settings = settings;
  }

  configure(settings: SipLadderSettings): void {
    this.#settings = settings;
    if (settings.messagesPerDialog === 0) this.clear();
    this.#trim();
  }

  get settings(): SipLadderSettings {
    return this.#settings;
  }

  clear(): void {
    this.#dialogs.clear();
    this.#waitingChannels.clear();
    this.#chars = 0;
  }

  /** The tap: one message sent or received. */
  record(message: SipMessage, direction: 'in' | 'out', transport: TransportProtocol, host: string, port: number): void {
    if (this.#settings.messagesPerDialog === 0) return;
    const callId = (message.get('Call-ID') ?? '').slice(0, 256);
    if (callId === '') return;
    const at = this.now();
    const cseqMethod = /\s(\S+)\s*$/.exec(message.get('CSeq') ?? '')?.[1] ?? '';
    const key = this.#keyOf(message, direction, callId, cseqMethod);
    let dialog = this.#dialogs.get(key.existing ?? key.created);
    if (!dialog) {
      // Qualify pings (OPTIONS, a new Call-ID each) would push the calls out of the ring, and
      // count against the rate: they are left out, as their answers show in the contacts' state.
      if (cseqMethod === 'OPTIONS') return;
      if (!this.#admitNewDialog(at)) return;
      dialog = {
        id: key.created,
        callId,
        kind: message.isRequest() ? message.method : cseqMethod,
        from: (message.get('From') ?? '').slice(0, MAX_PARTY_CHARS),
        to: (message.get('To') ?? '').slice(0, MAX_PARTY_CHARS),
        firstAt: at,
        lastAt: at,
        channels: [],
        messages: [],
        dropped: 0,
        chars: 0,
      };
      this.#dialogs.set(dialog.id, dialog);
      if (key.created.startsWith(`${callId};uac=`)) this.#bindWaiting(dialog);
    }
    let text = maskDigestResponses(maskSdesKeys(message.toString()));
    if (text.length > MAX_MESSAGE_CHARS) text = `${text.slice(0, MAX_MESSAGE_CHARS)}\r\n[… ${text.length - MAX_MESSAGE_CHARS} more characters]`;
    const method = cseqMethod;
    const summary = message instanceof SipResponse ? `${message.status} ${message.reason}`.slice(0, 80) : message.isRequest() ? message.method : '';
    dialog.messages.push({ at, direction, peer: `${transport} ${host}:${port}`, summary, method, text });
    dialog.lastAt = at;
    dialog.chars += text.length;
    this.#chars += text.length;
    while (dialog.messages.length > this.#settings.messagesPerDialog) {
      const oldest = dialog.messages.shift()!;
      dialog.chars -= oldest.text.length;
      this.#chars -= oldest.text.length;
      dialog.dropped += 1;
    }
    // A dialog seen again moves to the newest end, so that live ones are the last evicted.
    this.#dialogs.delete(dialog.id);
    this.#dialogs.set(dialog.id, dialog);
    this.#trim();
  }

  /**
   * The ladder a message belongs to. Our side's tag is the From tag of what we send as requests and
   * receive as responses, the To tag otherwise; a dialog we made (uac) is named by our tag, one we
   * accepted (uas) by the far end's, which is known from its first INVITE on (ours is not yet).
   * In a self-call the two legs share the Call-ID and the tags but never our side's tag.
   */
  #keyOf(message: SipMessage, direction: 'in' | 'out', callId: string, cseqMethod: string): { existing?: string; created: string } {
    if (PER_CALL_ID_METHODS.has(cseqMethod)) return { created: callId };
    const fromTag = (message.fromTag() ?? '').slice(0, MAX_TAG_CHARS);
    const toTag = (message.toTag() ?? '').slice(0, MAX_TAG_CHARS);
    const weSentTheRequest = message.isRequest() === (direction === 'out');
    const ourTag = weSentTheRequest ? fromTag : toTag;
    const farTag = weSentTheRequest ? toTag : fromTag;
    const asUac = `${callId};uac=${ourTag}`;
    if (ourTag !== '' && this.#dialogs.has(asUac)) return { existing: asUac, created: asUac };
    const asUas = `${callId};uas=${farTag}`;
    if (farTag !== '' && this.#dialogs.has(asUas)) return { existing: asUas, created: asUas };
    // A dialog seen the first time: its first message is (normally) the request that made it.
    return { created: weSentTheRequest ? asUac : asUas };
  }

  /**
   * The technology made a channel: an inbound one's dialog is there (its INVITE came), an outbound
   * one's starts with the INVITE it is about to send, so it waits for the first dialog we make
   * with its Call-ID. A Call-ID alone (a caller that knows no tags) names the newest ladder of it.
   */
  bind(leg: LadderLeg | string, channel: { id: string; name: string }): void {
    if (this.#settings.messagesPerDialog === 0) return;
    if (typeof leg === 'string') {
      const dialog = this.get(leg);
      if (dialog) addChannel(dialog, channel);
      return;
    }
    const tag = leg.remoteTag.slice(0, MAX_TAG_CHARS);
    if (tag !== '') {
      const dialog = this.#dialogs.get(`${leg.callId};uas=${tag}`);
      if (dialog) addChannel(dialog, channel);
      return;
    }
    // Made after its INVITE went (the technology may send before the core tells of the channel).
    const made = this.list().find((dialog) => dialog.id.startsWith(`${leg.callId};uac=`));
    if (made) {
      addChannel(made, channel);
      return;
    }
    const waiting = this.#waitingChannels.get(leg.callId) ?? [];
    if (waiting.length >= MAX_CHANNELS_PER_DIALOG) return;
    waiting.push({ id: channel.id, name: channel.name });
    this.#waitingChannels.delete(leg.callId);
    this.#waitingChannels.set(leg.callId, waiting);
    // Channels whose INVITE never went (failed before sending, or the rate gate): the oldest go.
    while (this.#waitingChannels.size > MAX_WAITING_CHANNELS) this.#waitingChannels.delete(this.#waitingChannels.keys().next().value!);
  }

  #bindWaiting(dialog: LadderDialog): void {
    const waiting = this.#waitingChannels.get(dialog.callId);
    if (!waiting) return;
    this.#waitingChannels.delete(dialog.callId);
    for (const channel of waiting) addChannel(dialog, channel);
  }

  /** A ladder by its id, or else the newest with this Call-ID (a Call-ID as the id was before dialogs). */
  get(idOrCallId: string): LadderDialog | undefined {
    return this.#dialogs.get(idOrCallId) ?? this.list().find((dialog) => dialog.callId === idOrCallId);
  }

  /** Newest first. */
  list(): LadderDialog[] {
    return [...this.#dialogs.values()].reverse();
  }

  /** The dialog that carried a channel (by its id or its name). */
  ofChannel(idOrName: string): LadderDialog | undefined {
    for (const dialog of this.list()) if (dialog.channels.some((c) => c.id === idOrName || c.name === idOrName)) return dialog;
    return undefined;
  }

  get totalChars(): number {
    return this.#chars;
  }

  #admitNewDialog(at: number): boolean {
    while (this.#starts.length > 0 && this.#starts[0]! <= at - RATE_WINDOW_MS) this.#starts.shift();
    // The window never holds more than the rate allows, so it stays small.
    if (this.#starts.length >= this.#settings.maxCallRate * (RATE_WINDOW_MS / 1000)) {
      this.skipped += 1;
      return false;
    }
    this.#starts.push(at);
    return true;
  }

  #trim(): void {
    while (this.#dialogs.size > this.#settings.dialogs || (this.#chars > MAX_TOTAL_CHARS && this.#dialogs.size > 1)) {
      const [id, oldest] = this.#dialogs.entries().next().value!;
      this.#dialogs.delete(id);
      this.#chars -= oldest.chars;
    }
  }
}

function addChannel(dialog: LadderDialog, channel: { id: string; name: string }): void {
  if (dialog.channels.some((c) => c.id === channel.id) || dialog.channels.length >= MAX_CHANNELS_PER_DIALOG) return;
  dialog.channels.push({ id: channel.id, name: channel.name });
}
