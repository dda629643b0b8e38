// An ARI request as every transport hands it to the dispatcher (HTTP, REST over WebSocket, a
// cluster member's forward), and the answer it gets back. Apart from the dispatcher so that what
// only passes requests on (the forwarding contract) need not import the dispatcher itself.
import type { AriUser } from '../config/config.ts';

export interface AriRequest {
  readonly method: string;
  /** Path relative to /ari, still percent-encoded, e.g. `/channels/abc`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly contentType?: string;
  readonly body?: Buffer;
  readonly user: AriUser;
  /** `http://host:port` as the client addressed the server, or undefined without a Host header. */
  readonly origin?: string;
  /** REST over WebSocket cannot carry binary bodies. */
  readonly transport: 'http' | 'websocket';
  /** Filled by dispatch() with the routed `resource.nickname`, for request logs and metrics. */
  readonly meta?: { operation?: string };
  /** Sent here by another cluster member: served here, never forwarded again. */
  readonly forwarded?: boolean;
}

export interface AriResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** A JSON value to serialise, raw bytes, or a stream (binary downloads). */
  readonly json?: unknown;
  readonly raw?: Buffer | NodeJS.ReadableStream;
  readonly contentType?: string;
}
