// The callers' connection to a Patchbay (or Asterisk) over ARI, as any ARI application: REST
// requests, and one events WebSocket for an application of their own, subscribed to everything so
// that a caller can expect events the application under test causes on its channels.
//
// The REST requests go over that events WebSocket (ARI's REST over WebSocket) once the server has
// shown it answers them, HTTP otherwise. A suite starts its calls together, each with a few
// requests at once: over HTTP that is a burst of new connections, and a busy Node.js server takes
// in one new connection per turn of its event loop (libuv accepts one per poll), so at load the
// last of them waited seconds in the listen queue — long enough for a caller to miss its greeting.
// On the socket they cost no connection at all.
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
/** How long connect() waits for the answer to its probe before it settles for HTTP. */
const PROBE_TIMEOUT_MS = 5000;

interface PendingRequest {
  readonly resolve: (response: RestResponse) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

interface RestResponse {
  readonly status: number;
  readonly body: string;
}

export class AriLink {
  /** The callers' own Stasis application (unique per link, so runs do not see each other's calls). */
  readonly app = `patchbay-callers-${randomBytes(6).toString('hex')}`;
  private readonly base: string;
  private readonly auth: string;
  private socket: WebSocket | undefined;
  private readonly listeners = new Set<(event: AriEvent, raw: string) => void>();
  /** REST requests sent over the events WebSocket, by request_id, until answered. */
  private readonly pending = new Map<string, PendingRequest>();
  private nextRequestId = 0;
  /** The server answered a REST request over the events WebSocket: requests go that way. */
  private restOverSocket = false;

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
      if ((event as { type: string }).type === 'RESTResponse') return this.answered(event as Record<string, unknown>);
      for (const listener of this.listeners) listener(event as AriEvent, raw);
    });
    socket.on('close', () => {
      this.restOverSocket = false;
      for (const [id, waiting] of this.pending) {
        clearTimeout(waiting.timer);
        waiting.reject(new Error('the ARI events WebSocket closed'));
        this.pending.delete(id);
      }
    });
    // A server without REST over WebSocket (Asterisk before 20.14, 21.9, 22.4) never answers: HTTP it is.
    try {
      await this.overSocket('GET', `/applications/${encodeURIComponent(this.app)}`, {}, undefined, PROBE_TIMEOUT_MS);
      this.restOverSocket = true;
    } catch {
      this.restOverSocket = false;
    }
  }

  /** Calls `listener` with every event (and its text, to look ids up cheaply) until the returned function is called. */
  listen(listener: (event: AriEvent, raw: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An ARI request (`path` below /ari); the parsed JSON answer, or null for an empty one. */
  async request(method: string, path: string, query: Record<string, string | undefined> = {}, body?: unknown): Promise<unknown> {
    const { status, body: text } = this.restOverSocket ? await this.overSocket(method, path, query, body, REQUEST_TIMEOUT_MS) : await this.overHttp(method, path, query, body);
    if (status < 200 || status > 299) {
      let message = text.slice(0, 200);
      try {
        const parsed = JSON.parse(text) as { message?: unknown };
        if (typeof parsed.message === 'string') message = parsed.message.slice(0, 200);
      } catch {
        // a plain-text error body: keep it as it is
      }
      throw new AriRequestError(`${method} /ari${path} answered ${status}: ${message}`, status);
    }
    if (text === '') return null;
    return JSON.parse(text) as unknown;
  }

  private async overHttp(method: string, path: string, query: Record<string, string | undefined>, body: unknown): Promise<RestResponse> {
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
    return { status: response.status, body: await response.text() };
  }

  /** A RESTRequest on the events WebSocket; its RESTResponse, or an error after `timeoutMs`. */
  private overSocket(method: string, path: string, query: Record<string, string | undefined>, body: unknown, timeoutMs: number): Promise<RestResponse> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error('the ARI events WebSocket is not open'));
    const id = `r${++this.nextRequestId}`;
    const message: Record<string, unknown> = {
      type: 'RESTRequest',
      request_id: id,
      method,
      uri: path.replace(/^\/+/, ''),
      query_strings: Object.entries(query).flatMap(([name, value]) => (value === undefined ? [] : [{ name, value }])),
    };
    if (body !== undefined) {
      message.content_type = 'application/json';
      message.message_body = JSON.stringify(body);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} /ari${path}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      socket.send(JSON.stringify(message), (error) => {
        if (!error) return;
        clearTimeout(timer);
        this.pending.delete(id);
        reject(error);
      });
    });
  }

  /** A RESTResponse: settles the request it answers (an unknown or late one is dropped). */
  private answered(response: Record<string, unknown>): void {
    const id = typeof response.request_id === 'string' ? response.request_id : '';
    const waiting = this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    const status = typeof response.status_code === 'number' ? response.status_code : 500;
    waiting.resolve({ status, body: typeof response.message_body === 'string' ? response.message_body : '' });
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
