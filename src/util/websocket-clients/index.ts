// Outgoing WebSocket connections to the servers named in `websocket_clients` (Asterisk's
// websocket_client.conf objects), for whoever dials out over WebSocket: media channels in client
// mode (connectWebSocketClient, with retries) and ARI outbound connections (connectOnce in their
// own reconnection loop).
export type { WebSocketClientConfig } from './client-config.ts';
export { WebSocketClients } from './clients.ts';
export { clientUrl, connectOnce, DEFAULT_MAX_PAYLOAD_BYTES, hostHeader, onClientMessage, WebSocketConnectError, type ConnectOnceOptions, type UriParams } from './connect.ts';
export { PING_PAYLOAD } from './ping-pong.ts';
export { connectWebSocketClient, type ConnectOptions } from './retry.ts';
