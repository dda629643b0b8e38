// Where SIP listens, from the transport sections (pjsip.conf, config_objects) or, with none, from
// the YAML `sip.bind`/`sip.port`: the listener settings of sip/transport-set.ts, with a TLS
// transport's certificates and policy passed down as sip/tls-material.ts reads them.
import type { Logger } from 'pino';
import type { ListenerSettings } from '../../sip/transport-set.ts';
import type { TlsSettings } from '../../sip/tls-material.ts';
import type { TransportProtocol } from '../../sip/transport.ts';
import type { WebSocketTransportOptions } from '../../sip/websocket-transport.ts';
import type { OutboundNat } from '../../sip/outbound-nat.ts';
import { networkContains } from './config/values.ts';
import type { PjsipTransport } from './config/index.ts';

/** The SIP protocol of a transport section. */
export function transportProtocol(transport: PjsipTransport): TransportProtocol {
  const protocols = { udp: 'UDP', tcp: 'TCP', tls: 'TLS', ws: 'WS', wss: 'WSS' } as const;
  return protocols[transport.protocol];
}

/** A TLS transport's settings as the SIP stack takes them (undefined for UDP and TCP). */
export function tlsSettingsOf(transport: PjsipTransport): TlsSettings | undefined {
  if (transport.protocol !== 'tls') return undefined;
  const { certFile, privKeyFile, password, caListFile, caListPath, cipher } = transport;
  return {
    ...(certFile ? { certFile } : {}),
    ...(privKeyFile ? { privKeyFile } : {}),
    ...(password ? { password } : {}),
    ...(caListFile ? { caListFile } : {}),
    ...(caListPath ? { caListPath } : {}),
    ...(cipher ? { cipher } : {}),
    method: transport.method,
    verifyServer: transport.verifyServer,
    verifyClient: transport.verifyClient,
    requireClientCert: transport.requireClientCert,
    allowWildcardCerts: transport.allowWildcardCerts,
  };
}

/**
 * The external addresses of a transport applied per destination as Asterisk's res_pjsip_nat
 * (sip/outbound-nat.ts), when they depend on the destination (`local_net`) or add a port
 * (`external_signaling_port`); undefined otherwise — then the external addresses, if any, are
 * simply written in everything sent (no local network: every destination is outside). The YAML
 * `sip.externalAddress` stands for both external addresses when the transport names none.
 */
export function outboundNatOf(transport: PjsipTransport, externalAddress: string | undefined): OutboundNat | undefined {
  const signalingHost = transport.externalSignalingAddress || externalAddress || undefined;
  const mediaHost = transport.externalMediaAddress || externalAddress || undefined;
  if (signalingHost === undefined && mediaHost === undefined) return undefined;
  const signalingPort = signalingHost === undefined ? undefined : transport.externalSignalingPort;
  if (transport.localNet.length === 0 && signalingPort === undefined) return undefined;
  const localNets = transport.localNet;
  return {
    ...(signalingHost !== undefined ? { signalingHost } : {}),
    ...(signalingPort !== undefined ? { signalingPort } : {}),
    ...(mediaHost !== undefined ? { mediaHost } : {}),
    ...(localNets.length > 0 ? { isLocal: (address: string) => localNets.some((network) => networkContains(network, address)) } : {}),
  };
}

/** One listener per transport section, at its `bind`. */
export function listenersOf(transports: readonly PjsipTransport[], externalAddress: string | undefined): ListenerSettings[] {
  return transports.map((transport) => {
    const nat = outboundNatOf(transport, externalAddress);
    // With per-destination rewriting the local address is written and the external one put in on the way out.
    const publicHost = nat ? undefined : transport.externalSignalingAddress || externalAddress;
    const tls = tlsSettingsOf(transport);
    return {
      name: transport.id,
      protocols: [transportProtocol(transport)],
      host: transport.bind.host,
      port: transport.bind.port,
      ...(publicHost ? { publicHost } : {}),
      ...(nat ? { nat } : {}),
      ...(tls ? { tls } : {}),
      ...(transport.tcpKeepaliveEnable ? { tcpKeepAliveMs: transport.tcpKeepaliveIdleTime * 1000 } : {}),
    };
  });
}

/** Whether a transport (a section's protocol, or a binding's source transport) is SIP over WebSocket. */
export function isWebSocketSource(transport: string): boolean {
  return transport === 'ws' || transport === 'wss';
}

/**
 * SIP over WebSocket when a `ws` or `wss` transport is configured, as Asterisk's
 * res_pjsip_transport_websocket: one transport for every browser, on the HTTP server's `/ws`
 * (its address is written in Via and Contact once the HTTP server listens: webSocketListening).
 */
export function webSocketTransportOf(
  transports: readonly PjsipTransport[],
  publicHost: string,
  tcp: { readonly maxConnections: number; readonly maxConnectionsPerSource: number },
  log: Logger,
): WebSocketTransportOptions | undefined {
  const sockets = transports.filter((transport) => isWebSocketSource(transport.protocol));
  const first = sockets[0];
  if (!first) return undefined;
  if (sockets.length > 1) log.warn({ transports: sockets.map((transport) => transport.id) }, `several ws/wss transports: browsers use one WebSocket path (/ws); [${first.id}] names them`);
  if (first.protocol === 'wss') log.info({ transport: first.id }, 'wss transport: Patchbay\'s HTTP server speaks plain HTTP; browsers reach /ws through a TLS-terminating proxy');
  return {
    name: first.id,
    host: publicHost,
    port: 0,
    secure: first.protocol === 'wss',
    maxConnections: tcp.maxConnections,
    maxConnectionsPerSource: tcp.maxConnectionsPerSource,
  };
}
