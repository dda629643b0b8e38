// Where SIP listens, from the transport sections (pjsip.conf, config_objects) or, with none, from
// the YAML `sip.bind`/`sip.port`: the listener settings of sip/transport-set.ts, with a TLS
// transport's certificates and policy passed down as sip/tls-material.ts reads them.
import type { ListenerSettings } from '../../sip/transport-set.ts';
import type { TlsSettings } from '../../sip/tls-material.ts';
import type { TransportProtocol } from '../../sip/transport.ts';
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

/** One listener per transport section, at its `bind`. */
export function listenersOf(transports: readonly PjsipTransport[], externalAddress: string | undefined): ListenerSettings[] {
  return transports.map((transport) => {
    const publicHost = transport.externalSignalingAddress || externalAddress;
    const tls = tlsSettingsOf(transport);
    return {
      name: transport.id,
      protocols: [transportProtocol(transport)],
      host: transport.bind.host,
      port: transport.bind.port,
      ...(publicHost ? { publicHost } : {}),
      ...(tls ? { tls } : {}),
    };
  });
}
