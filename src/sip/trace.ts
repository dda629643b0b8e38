// `sip trace on|off` (Asterisk's `pjsip set logger on|off|host`): while on, the SIP messages of
// matching calls go into the log, whole, as they were sent or received. A match is a piece of text
// (a host, a user, a Call-ID); the first message that contains it in its start line, From, To,
// Call-ID or its peer's address makes the whole call (its Call-ID) traced from then on. With no
// match every message is traced. SDES keys (a=crypto's inline:) are masked: the log must not hold
// what decrypts the call's media.
import type { SipMessage, SipResponse } from './message.ts';
import { maskSdesKeys } from './sdp/crypto.ts';
import type { Destination, SipSender, Source, TcpConnection, TransportProtocol } from './transport.ts';

/** Where traced messages go: one call per message, as text. */
export type TraceWriter = (line: string, fields: Record<string, unknown>) => void;

/**
 * Sees every message the stack sends or receives, whether `sip trace` is on or not (the console's
 * per-dialog ladder); it must be cheap and must not throw.
 */
export type TraceTap = (message: SipMessage, direction: 'in' | 'out', transport: TransportProtocol, host: string, port: number) => void;

/** Call-IDs remembered as matching; the oldest is forgotten beyond this. */
const MAX_TRACED_CALLS = 1000;
/** Longest message text put into the log (a body may be large). */
const MAX_TRACED_CHARS = 16 * 1024;

export class SipTrace {
  #enabled = false;
  #match = '';
  readonly #calls = new Set<string>();
  #writer: TraceWriter | undefined;
  #tap: TraceTap | undefined;

  /** Where lines go (the SIP technology's log), set once SIP starts. */
  attach(writer: TraceWriter): void {
    this.#writer = writer;
  }

  /** One listener for every message (see TraceTap); undefined removes it. */
  tap(listener: TraceTap | undefined): void {
    this.#tap = listener;
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  enable(match: string): void {
    this.#enabled = true;
    this.#match = match.toLowerCase();
    this.#calls.clear();
  }

  disable(): void {
    this.#enabled = false;
    this.#match = '';
    this.#calls.clear();
  }

  describe(): { state: 'on' | 'off'; match: string; calls: number } {
    return { state: this.#enabled ? 'on' : 'off', match: this.#match, calls: this.#calls.size };
  }

  received(message: SipMessage, source: Source): void {
    this.#tap?.(message, 'in', source.transport, source.address, source.port);
    if (this.#enabled) this.#record(message, 'received from', source.transport, source.address, source.port);
  }

  sent(message: SipMessage, transport: TransportProtocol, host: string | undefined, port: number | undefined): void {
    this.#tap?.(message, 'out', transport, host ?? '?', port ?? 0);
    if (this.#enabled) this.#record(message, 'sent to', transport, host ?? '?', port ?? 0);
  }

  /** A sender that traces what goes through it to `inner`. */
  wrap(inner: SipSender): SipSender {
    return {
      send: (message: SipMessage, dest: Destination): Promise<TcpConnection | undefined> => {
        this.sent(message, dest.transport, dest.host, dest.port);
        return inner.send(message, dest);
      },
      sendResponse: (response: SipResponse, source?: Source): Promise<void> => {
        const via = response.topVia();
        this.sent(response, source?.transport ?? 'UDP', source?.address ?? via?.host, source?.port ?? via?.port);
        return inner.sendResponse(response, source);
      },
      localAddress: (transport, listener) => inner.localAddress(transport, listener),
    };
  }

  #record(message: SipMessage, direction: string, transport: TransportProtocol, host: string, port: number): void {
    const callId = message.get('Call-ID') ?? '';
    if (!this.#matches(message, callId, host)) return;
    let text = maskSdesKeys(message.toString()).replace(/\r\n/g, '\n');
    if (text.length > MAX_TRACED_CHARS) text = `${text.slice(0, MAX_TRACED_CHARS)}\n[… ${text.length - MAX_TRACED_CHARS} more characters]`;
    this.#writer?.(`SIP ${direction} ${transport} ${host}:${port}\n${text}`, { callId, direction: direction.split(' ')[0] });
  }

  #matches(message: SipMessage, callId: string, host: string): boolean {
    if (this.#match === '') return true;
    if (this.#calls.has(callId)) return true;
    const start = message.isRequest() ? message.startLine() : '';
    const haystack = [start, message.get('From'), message.get('To'), callId, host].join('\n').toLowerCase();
    if (!haystack.includes(this.#match)) return false;
    if (this.#calls.size >= MAX_TRACED_CALLS) this.#calls.delete(this.#calls.values().next().value!);
    this.#calls.add(callId);
    return true;
  }
}
