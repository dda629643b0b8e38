// WebSocket PING keep-alive of a client connection (websocket_client `enable_pingpongs`).
import type WebSocket from 'ws';
import type { WebSocketClientConfig } from './client-config.ts';

/** The ASCII payload of keep-alive PINGs; a PONG counts only when it echoes it (RFC 6455 §5.5.3). */
export const PING_PAYLOAD = Buffer.from('WS_CLIENT_PING');

/**
 * One PING every `pingpong_interval`; after `pingpong_probes` PINGs in a row without the matching
 * PONG, `onDead` is told and the connection is terminated (its owner's close handler decides what
 * follows: a reconnection, a hangup). Returns the function that stops it.
 */
export function startPingPong(ws: WebSocket, client: WebSocketClientConfig, onDead: () => void): () => void {
  if (!client.enablePingpongs) return () => {};
  let missed = 0;
  const onPong = (data: Buffer): void => {
    if (data.equals(PING_PAYLOAD)) missed = 0;
  };
  ws.on('pong', onPong);
  const timer = setInterval(() => {
    if (missed >= client.pingpongProbes) {
      clearInterval(timer);
      onDead();
      ws.terminate();
      return;
    }
    missed++;
    ws.ping(PING_PAYLOAD);
  }, client.pingpongInterval * 1000);
  timer.unref();
  return () => {
    clearInterval(timer);
    ws.off('pong', onPong);
  };
}
