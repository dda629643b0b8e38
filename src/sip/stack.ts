// A transport and its transaction layer, wired once: the transport is built with handlers that
// hand every message and closed connection to the layer, so neither object patches the other's
// callbacks after the fact.
import { TransactionLayer, type TransactionLayerOptions, type TransactionUser } from './transaction/index.ts';
import { SipTransportSet, type ListenerSettings } from './transport-set.ts';
import type { SipMessage, SipRequest } from './message.ts';
import { SipTransport, type Source, type TcpConnection, type TransportHandlers, type TransportOptions } from './transport.ts';
import type { SipTrace } from './trace.ts';
import type { WebSocketTransportOptions } from './websocket-transport.ts';

export interface SipStack {
  readonly transport: SipTransport;
  readonly layer: TransactionLayer;
}

/**
 * Builds (does not start) a transport and the transaction layer above it. `onDrop` receives what the
 * transport refused before parsing completed (one log line's worth).
 */
export function openSipStack(transportOptions: TransportOptions, tu: TransactionUser, layerOptions: TransactionLayerOptions = {}, onDrop?: TransportHandlers['onDrop']): SipStack {
  const handlers: TransportHandlers = {
    onMessage: (message, source) => layer.receive(message, source),
    onConnectionClosed: (connection) => layer.connectionClosed(connection),
    onDrop,
  };
  const transport = new SipTransport(transportOptions, handlers);
  const layer = new TransactionLayer(transport, tu, layerOptions);
  return { transport, layer };
}

/**
 * What a user of the listeners may see before the transaction layer: a message that arrived on a
 * connection and belongs to a dialog another server runs over it (taken: true, the layer never
 * sees it), and each closed connection. A cluster member relays such flows (foreign-flow.ts).
 */
export interface ListenerHooks {
  /**
   * A request looked at before anything else (res_pjsip_acl's place): true when it was answered or
   * dropped there, and the layer never sees it (no transaction, no dialog is made for it).
   */
  screen?(request: SipRequest, source: Source): boolean;
  divert?(message: SipMessage, source: Source): boolean;
  connectionClosed?(connection: TcpConnection): void;
}

/** The same over several listening transports (pjsip.conf's transports), each answering for itself. */
export function openSipListeners(
  listeners: readonly ListenerSettings[],
  tu: TransactionUser,
  layerOptions: TransactionLayerOptions = {},
  onDrop?: TransportHandlers['onDrop'],
  transportOptions: ConstructorParameters<typeof SipTransportSet>[2] = {},
  trace?: SipTrace,
  webSocket?: WebSocketTransportOptions,
  hooks: ListenerHooks = {},
): { readonly transport: SipTransportSet; readonly layer: TransactionLayer } {
  const handlers: TransportHandlers = {
    onMessage: (message, source) => {
      trace?.received(message, source);
      if (hooks.screen !== undefined && message.isRequest() && hooks.screen(message, source)) return;
      // Only what came on a connection can belong to another server's flow: UDP costs one check.
      if (source.connection !== undefined && hooks.divert?.(message, source)) return;
      layer.receive(message, source);
    },
    onConnectionClosed: (connection) => {
      layer.connectionClosed(connection);
      hooks.connectionClosed?.(connection);
    },
    onDrop,
  };
  const transport = new SipTransportSet(listeners, handlers, transportOptions, webSocket);
  // `sip trace`: what the layer sends passes the trace first (it is off, and costs a test, until turned on).
  const layer = new TransactionLayer(trace ? trace.wrap(transport) : transport, tu, layerOptions);
  return { transport, layer };
}
