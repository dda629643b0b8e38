// Connecting with a websocket_client's retry policy: `reconnect_attempts` attempts in all,
// `reconnect_interval` apart, each one a connectOnce. Used where a connection is wanted once and
// may be abandoned (a media channel in client mode); ARI outbound sessions run their own loop.
import type WebSocket from 'ws';
import type { WebSocketClientConfig } from './client-config.ts';
import { clientUrl, connectOnce, WebSocketConnectError, type ConnectOnceOptions } from './connect.ts';

export interface ConnectOptions extends ConnectOnceOptions {
  /** Told of each failed attempt (for the log). */
  readonly onAttemptFailed?: (attempt: number, error: Error) => void;
}

/**
 * Connects to the client's server, retrying as configured. Resolves with the open socket; rejects
 * with WebSocketConnectError once every attempt failed or `signal` aborted.
 */
export async function connectWebSocketClient(client: WebSocketClientConfig, options: ConnectOptions = {}): Promise<WebSocket> {
  let lastError: Error = new Error('no attempt made');
  for (let attempt = 1; attempt <= client.reconnectAttempts; attempt++) {
    if (options.signal?.aborted) throw new WebSocketConnectError('connection abandoned');
    try {
      return await connectOnce(client, options);
    } catch (error) {
      lastError = error instanceof Error ? error : new Error(String(error));
      options.onAttemptFailed?.(attempt, lastError);
    }
    if (attempt < client.reconnectAttempts && client.reconnectInterval > 0) await pause(client.reconnectInterval, options.signal);
  }
  const url = clientUrl(client, options.params);
  throw new WebSocketConnectError(`cannot connect to ${url.host}${url.pathname} after ${client.reconnectAttempts} attempt(s): ${lastError.message}`, { cause: lastError });
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
