// The callers' connection to a Patchbay (or Asterisk) over ARI, as any ARI application: REST
// requests, and one events WebSocket for an application of their own, subscribed to everything so
// that a caller can expect events the application under test causes on its channels.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';

/** Where the server is and who the callers are. */
export interface AriTarget {
  /** `http://host:port` (a trailing `/ari` is accepted). */
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  /** An `Authorization` header value, instead of username and password. */
  readonly authorization?: string;
}

/** An ARI event as JSON (`type` is the event's name). */
export type AriEvent = Readonly<Record<string, unknown>> & { readonly type: string };

export class AriRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Largest event accepted from the server (a hostile or broken server cannot make us buffer more). */
const MAX_EVENT_BYTES = 1 << 20;
const REQUEST_TIMEOUT_MS = 10_000;

export class AriLink {
  /** The callers' own Stasis application (unique per link, so runs do not see each other's calls). */
  readonly app = `patchbay-callers-${randomBytes(6).toString('hex')}`;
  private readonly base: string;
  private readonly auth: string;
  private socket: WebSocket | undefined;
  private readonly listeners = new Set<(event: AriEvent, raw: string) => void>();

  constructor(readonly target: AriTarget) {
    this.base = target.url.replace(/\/+$/, '').replace(/\/ari$/, '');
    this.auth = target.authorization ?? `Basic ${Buffer.from(`${target.username ?? ''}:${target.password ?? ''}`).toString('base64')}`;
  }

  /** Opens the events WebSocket; resolves once it is up (events of calls made later are not missed). */
  async connect(): Promise<void> {
    const url = `${this.base.replace(/^http/, 'ws')}/ari/events?app=${encodeURIComponent(this.app)}&subscribeAll=true`;
    const socket = new WebSocket(url, { headers: { authorization: this.auth }, maxPayload: MAX_EVENT_BYTES });
    this.socket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => reject(new Error(`the ARI events WebSocket was refused: HTTP ${response.statusCode}`)));
      socket.once('error', (err) => reject(new Error(`cannot reach ARI at ${this.base}: ${err.message}`)));
    });
    socket.on('error', () => undefined);
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const raw = String(data);
      let event: unknown;
      try {
        event = JSON.parse(raw);
      } catch {
        return;
      }
      if (!event || typeof event !== 'object' || typeof (event as { type?: unknown }).type !== 'string') return;
      for (const listener of this.listeners) listener(event as AriEvent, raw);
    });
  }

  /** Calls `listener` with every event (and its text, to look ids up cheaply) until the returned function is called. */
  listen(listener: (event: AriEvent, raw: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An ARI request (`path` below /ari); the parsed JSON answer, or null for an empty one. */
  async request(method: string, path: string, query: Record<string, string | undefined> = {}, body?: unknown): Promise<unknown> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
    const search = params.size > 0 ? `?${params}` : '';
    const headers: Record<string, string> = { authorization: this.auth };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.base}/ari${path}${search}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) {
      let message = text.slice(0, 200);
      try {
        const parsed = JSON.parse(text) as { message?: unknown };
        if (typeof parsed.message === 'string') message = parsed.message.slice(0, 200);
      } catch {
        // a plain-text error body: keep it as it is
      }
      throw new AriRequestError(`${method} /ari${path} answered ${response.status}: ${message}`, response.status);
    }
    if (text === '') return null;
    return JSON.parse(text) as unknown;
  }

  /** A media WebSocket to a `WebSocket` channel made by externalMedia (server mode). */
  openMedia(connectionId: string): WebSocket {
    return new WebSocket(`${this.base.replace(/^http/, 'ws')}/media/${encodeURIComponent(connectionId)}`, ['media'], {
      headers: { authorization: this.auth },
      maxPayload: 65536,
    });
  }

  close(): void {
    this.listeners.clear();
    this.socket?.close();
    this.socket = undefined;
  }
}
