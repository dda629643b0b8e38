/**
 * SIP message parser (RFC 3261 §7) that never throws on hostile input. parseMessage() reads one
 * whole message (a UDP datagram or a frame cut by StreamFramer) and returns either the message or
 * a reason, and whether enough was read to answer a request with 400 (or 505 for a SIP version
 * other than 2.0). Every size is bounded by ParserLimits.
 */
import { MAX_CSEQ, SipRequest, SipResponse, headerKey, parseCSeq, parseVia, splitList, type SipMessage } from './message.ts';
import { parseNameAddr, parseUri } from './uri.ts';
import { ownedCopy } from '../util/owned-buffer.ts';

export interface ParserLimits {
  /** Whole message, headers and body (default 65,535 bytes). */
  maxMessageSize: number;
  /** Header lines after unfolding (default 256). */
  maxHeaders: number;
  /** One header line after unfolding, name included (default 8,192 characters). */
  maxLineLength: number;
  /** Request-URI (default 4,096 characters). */
  maxUriLength: number;
  /** Body (default 65,535 bytes; never more than what the message size allows). */
  maxBodySize: number;
}

export const DEFAULT_LIMITS: ParserLimits = {
  maxMessageSize: 65535,
  maxHeaders: 256,
  maxLineLength: 8192,
  maxUriLength: 4096,
  maxBodySize: 65535,
};

export type ParseResult =
  | { ok: true; message: SipMessage }
  | {
      ok: false;
      reason: string;
      /** True when the input was a request whose top Via could be read: answer `status` to it. */
      canRespond: boolean;
      /** The status to answer with when canRespond (400, or 505 for another SIP version). */
      status?: number;
      /** What was read of the request when canRespond, to build the response from. */
      request?: SipRequest;
    };

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const CRLF = Buffer.from('\r\n\r\n');
const LFLF = Buffer.from('\n\n');

/** Index just past the blank line ending the header section, or -1; headerEnd is the index of the blank line. */
export function findHeaderEnd(buf: Buffer, from = 0, limit = buf.length): { headerEnd: number; bodyStart: number } | null {
  const slice = limit < buf.length ? buf.subarray(0, limit) : buf;
  const a = slice.indexOf(CRLF, from);
  const b = slice.indexOf(LFLF, from);
  // also "\n\r\n" (LF-terminated line followed by a CRLF blank line)
  if (a < 0 && b < 0) return null;
  if (b >= 0 && (a < 0 || b < a)) return { headerEnd: b + 1, bodyStart: b + 2 };
  return { headerEnd: a + 2, bodyStart: a + 4 };
}

function fail(reason: string, request?: SipRequest, status = 400): ParseResult {
  if (request && request.topVia()) return { ok: false, reason, canRespond: true, status, request };
  return { ok: false, reason, canRespond: false };
}

/**
 * Parses one message. `stream` is true for a frame from a stream transport (its body is exactly
 * the Content-Length the framer read); for datagrams the Content-Length is checked against the
 * bytes received (missing → the rest of the datagram; larger than received → error; smaller →
 * the extra bytes are ignored).
 */
export function parseMessage(input: Buffer | string, limits: ParserLimits = DEFAULT_LIMITS, stream = false): ParseResult {
  try {
    return parseUnsafe(typeof input === 'string' ? Buffer.from(input, 'utf8') : input, limits, stream);
  } catch (err) {
    // a bug must not take the server down: report it as an unparseable message
    return { ok: false, reason: `parser error: ${(err as Error).message}`, canRespond: false };
  }
}

function parseUnsafe(buf: Buffer, limits: ParserLimits, stream: boolean): ParseResult {
  if (buf.length > limits.maxMessageSize) return fail('message too large');
  let start = 0;
  // RFC 3261 §7.5: ignore CRLFs before the start line
  while (start < buf.length && (buf[start] === 0x0d || buf[start] === 0x0a)) start++;
  if (start >= buf.length) return fail('empty message');
  const end = findHeaderEnd(buf, start);
  if (!end) return fail('no end of headers');
  const headText = buf.toString('utf8', start, end.headerEnd);
  const rawLines = headText.split(/\r?\n/);
  if (rawLines[rawLines.length - 1] === '') rawLines.pop();
  const startLine = rawLines[0];
  if (startLine.length > limits.maxLineLength) {
    if (startLine.startsWith('SIP/')) return fail('start line too long');
    // A request is still answered (RFC 3261 §21.4.12: 414 when its Request-URI is what is long), so
    // that its sender stops retransmitting instead of meeting silence; its headers route the answer.
    const firstSpace = startLine.indexOf(' ');
    const lastSpace = startLine.lastIndexOf(' ');
    const method = startLine.slice(0, Math.max(firstSpace, 0));
    const partial = new SipRequest(TOKEN.test(method) ? method : 'UNKNOWN', 'sip:invalid');
    if (readHeaders(partial, rawLines, limits)) return fail('start line too long');
    return fail('start line too long', partial, lastSpace - firstSpace - 1 > limits.maxUriLength ? 414 : 400);
  }

  let message: SipMessage;
  let request: SipRequest | undefined;
  if (startLine.startsWith('SIP/')) {
    const m = /^SIP\/(\d+\.\d+) (\d{3})(?: (.*))?$/.exec(startLine);
    if (!m) return fail('bad status line');
    if (m[1] !== '2.0') return fail('unsupported SIP version');
    const status = Number(m[2]);
    if (status < 100 || status > 699) return fail('bad status code');
    const reason = m[3] ?? '';
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(reason)) return fail('bad reason phrase');
    message = new SipResponse(status, reason);
  } else {
    const parts = startLine.split(' ');
    if (parts.length !== 3) {
      // still try to read the headers so a 400 can be routed
      const partial = new SipRequest(parts[0] && TOKEN.test(parts[0]) ? parts[0] : 'UNKNOWN', 'sip:invalid');
      readHeaders(partial, rawLines, limits);
      return fail('bad request line', partial);
    }
    const [method, uriText, version] = parts;
    if (!TOKEN.test(method)) return fail('bad method');
    request = new SipRequest(method, 'sip:invalid');
    const headerError = readHeaders(request, rawLines, limits);
    if (headerError) return fail(headerError, request);
    if (!/^SIP\/\d+\.\d+$/i.test(version)) return fail('bad SIP version', request);
    if (version.toUpperCase() !== 'SIP/2.0') return fail('unsupported SIP version', request, 505);
    if (uriText.length > limits.maxUriLength) return fail('Request-URI too long', request, 414);
    const uri = parseUri(uriText);
    if (!uri) return fail('bad Request-URI', request);
    if (uri.kind === 'sip' && uri.headers.size > 0) return fail('headers in the Request-URI', request);
    request.uri = uri;
    request.uriText = uriText;
    message = request;
  }
  if (!request) {
    const headerError = readHeaders(message, rawLines, limits);
    if (headerError) return fail(headerError);
  }

  const problem = checkHeaders(message);
  if (problem) return fail(problem, request);

  // body
  const available = buf.length - end.bodyStart;
  const cl = message.get('content-length');
  let bodyLength: number;
  if (cl === undefined) {
    if (stream) return fail('Content-Length required on a stream transport', request);
    bodyLength = Math.max(0, available);
  } else {
    const n = message.contentLength();
    if (n === undefined) return fail('bad Content-Length', request);
    if (n > available) return fail('Content-Length larger than the message', request);
    bodyLength = n;
  }
  if (bodyLength > limits.maxBodySize) return fail('body too large', request, 413);
  // A copy of its own: an INVITE's body lives as long as its call (owned-buffer.ts says why not the pool).
  if (bodyLength > 0) message.body = ownedCopy(buf.subarray(end.bodyStart, end.bodyStart + bodyLength));
  return { ok: true, message };
}

/** Unfolds and reads header lines into the message. Returns an error string or undefined. */
function readHeaders(message: SipMessage, rawLines: string[], limits: ParserLimits): string | undefined {
  let current: string | undefined;
  let count = 0;
  const flush = (): string | undefined => {
    if (current === undefined) return undefined;
    const line = current;
    current = undefined;
    const colon = line.indexOf(':');
    if (colon <= 0) return 'header without a colon';
    const name = line.slice(0, colon).replace(/[ \t]+$/, '');
    if (!TOKEN.test(name)) return 'bad header name';
    if (++count > limits.maxHeaders) return 'too many headers';
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    message.headers.push({ name, key: headerKey(name), value });
    return undefined;
  };
  for (let i = 1; i < rawLines.length; i++) {
    const raw = rawLines[i];
    if (raw.length > limits.maxLineLength) return 'header line too long';
    if (raw.includes('\r')) return 'bare CR in a header line';
    if (raw[0] === ' ' || raw[0] === '\t') {
      if (current === undefined) return 'continuation line without a header';
      current += ' ' + raw.replace(/^[ \t]+/, '');
      if (current.length > limits.maxLineLength) return 'header line too long';
      continue;
    }
    const err = flush();
    if (err) return err;
    current = raw;
  }
  return flush();
}

/** Mandatory headers present and readable (RFC 3261 §8.1.1, §8.2.2, §20). */
function checkHeaders(message: SipMessage): string | undefined {
  const vias = message.values('via');
  if (vias.length === 0) return 'missing Via';
  for (const v of vias) if (!parseVia(v)) return 'bad Via';
  for (const name of ['from', 'to', 'call-id', 'cseq']) {
    const lines = message.getAll(name);
    if (lines.length === 0) return `missing ${name}`;
    if (lines.length > 1) return `repeated ${name}`;
  }
  const from = parseNameAddr(message.get('from')!);
  if (!from) return 'bad From';
  const to = parseNameAddr(message.get('to')!);
  if (!to) return 'bad To';
  const callId = message.get('call-id')!;
  if (callId.length === 0 || /\s/.test(callId)) return 'bad Call-ID';
  const cseqText = message.get('cseq')!;
  const cseq = parseCSeq(cseqText);
  if (!cseq) return /^\s*\d{11,}/.test(cseqText) ? `CSeq above ${MAX_CSEQ}` : 'bad CSeq';
  if (message.isRequest() && cseq.method !== message.method) return 'CSeq method does not match the request method';
  const mf = message.getAll('max-forwards');
  if (mf.length > 1) return 'repeated Max-Forwards';
  if (mf.length === 1 && message.maxForwards() === undefined) return 'bad Max-Forwards';
  const cl = message.getAll('content-length');
  if (cl.length > 1) return 'repeated Content-Length';
  if (cl.length === 1 && message.contentLength() === undefined) return 'bad Content-Length';
  const expires = message.getAll('expires');
  if (expires.length > 1) return 'repeated Expires';
  if (expires.length === 1 && message.expires() === undefined) return 'bad Expires';
  const contactValues = message.values('contact');
  if (!(contactValues.length === 1 && contactValues[0] === '*')) {
    const c = message.contacts();
    if (c === 'wildcard' || c.length !== contactValues.length) return 'bad Contact';
  }
  for (const name of ['route', 'record-route'] as const) {
    if (message.routes(name).length !== message.values(name).length) return `bad ${name}`;
  }
  const retryAfter = message.get('retry-after');
  if (retryAfter !== undefined && !/^\s*\d{1,10}(\s|;|\(|$)/.test(retryAfter)) return 'bad Retry-After';
  for (const w of message.values('warning')) if (!/^\d{3}\s/.test(w)) return 'bad Warning';
  // unbalanced quotes anywhere in the list headers' values
  for (const h of message.headers) {
    if ((h.key === 'from' || h.key === 'to' || h.key === 'contact') && splitList(h.value).some((v) => countQuotes(v) % 2 === 1)) return `unbalanced quotes in ${h.name}`;
  }
  return undefined;
}

function countQuotes(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') i++;
    else if (value[i] === '"') n++;
  }
  return n;
}

/**
 * Cuts a byte stream (TCP) into messages by Content-Length (RFC 3261 §18.3). Bounded: a header
 * section or a message larger than maxMessageSize is an error (the connection should be closed).
 * CRLF keep-alives (RFC 5626 §3.5.1) between messages are skipped and counted; a double CRLF
 * "ping" is reported so the transport can answer with a single CRLF "pong".
 */
export class StreamFramer {
  // bytes [head, len) of store are pending; store grows by doubling so a peer dribbling bytes
  // costs linear time, and the header search resumes where it stopped
  private store: Buffer = Buffer.alloc(0);
  private head = 0;
  private len = 0;
  private scanned = 0;
  private needed = -1;
  constructor(private readonly limits: ParserLimits = DEFAULT_LIMITS) {}

  /** Bytes waiting for the rest of a message. */
  get pending(): number {
    return this.len - this.head;
  }

  /**
   * Adds bytes; returns the complete frames, the number of CRLFCRLF pings seen, or an error
   * (after which the stream should be closed).
   */
  push(chunk: Buffer): { frames: Buffer[]; pings: number; error?: string } {
    const frames: Buffer[] = [];
    let pings = 0;
    this.append(chunk);
    for (;;) {
      if (this.needed < 0) {
        if (this.scanned === 0) {
          // keep-alives between messages
          let i = this.head;
          while (i < this.len && (this.store[i] === 0x0d || this.store[i] === 0x0a)) {
            if (this.store[i] === 0x0d && this.store[i + 1] === 0x0a && this.store[i + 2] === 0x0d && this.store[i + 3] === 0x0a && i + 3 < this.len) {
              pings++;
              i += 4;
              continue;
            }
            i++;
          }
          this.head = i;
        }
        const available = this.len - this.head;
        if (available === 0) break;
        const view = this.store.subarray(this.head, this.len);
        const end = findHeaderEnd(view, Math.max(0, this.scanned - 3), Math.min(available, this.limits.maxMessageSize));
        if (!end) {
          if (available >= this.limits.maxMessageSize) return this.error(frames, pings, 'header section too large');
          this.scanned = available;
          break;
        }
        const headText = view.toString('latin1', 0, end.headerEnd);
        const m = /(?:^|\n)(?:content-length|l)[ \t]*:[ \t]*([^\r\n]*)/i.exec(headText);
        if (!m) return this.error(frames, pings, 'missing Content-Length on a stream');
        const clText = m[1].trim();
        if (!/^\d{1,10}$/.test(clText)) return this.error(frames, pings, 'bad Content-Length');
        const total = end.bodyStart + Number(clText);
        if (total > this.limits.maxMessageSize) return this.error(frames, pings, 'message too large');
        this.needed = total;
      }
      if (this.len - this.head < this.needed) break;
      frames.push(Buffer.from(this.store.subarray(this.head, this.head + this.needed)));
      this.head += this.needed;
      this.needed = -1;
      this.scanned = 0;
    }
    this.compact();
    return { frames, pings };
  }

  private append(chunk: Buffer): void {
    if (this.len + chunk.length > this.store.length) {
      this.compact();
      if (this.len + chunk.length > this.store.length) {
        const grown = Buffer.allocUnsafe(Math.max(this.store.length * 2, this.len + chunk.length, 4096));
        this.store.copy(grown, 0, 0, this.len);
        this.store = grown;
      }
    }
    chunk.copy(this.store, this.len);
    this.len += chunk.length;
  }

  private compact(): void {
    if (this.head === 0) return;
    this.store.copyWithin(0, this.head, this.len);
    this.len -= this.head;
    this.head = 0;
    // give back a large buffer once the stream is idle
    if (this.len === 0 && this.store.length > 65536) this.store = Buffer.alloc(0);
  }

  private error(frames: Buffer[], pings: number, error: string): { frames: Buffer[]; pings: number; error: string } {
    this.store = Buffer.alloc(0);
    this.head = this.len = this.scanned = 0;
    this.needed = -1;
    return { frames, pings, error };
  }
}
