// The `transport` object type: where SIP listens (protocol, bind), what it writes towards the
// outside (external_* addresses, local_net) and a TLS transport's certificates and checks. Declared
// apart from the other res_pjsip objects (declarations.ts, which lists it in PJSIP_TYPES) because
// its options are the listeners' (../listeners.ts), not an endpoint's or a registration's.
import { isIP } from 'node:net';
import type { TlsMethod } from '../../../sip/tls-material.ts';
import { bool, choice, custom, declareObject, int, listOf, optional, optionalText, parsed, type Draft } from './options.ts';
import type { PjsipTransport } from './types.ts';
import { parseAddress, parseHostPort, parseInteger, parseNetwork, shown, type Parsed } from './values.ts';

const TRANSPORT_PROTOCOLS = ['udp', 'tcp', 'tls', 'ws', 'wss', 'flow'] as const;
type TransportDraft = Omit<Draft<PjsipTransport>, 'protocol'> & { protocol: (typeof TRANSPORT_PROTOCOLS)[number] };

function parseBind(value: string): Parsed<{ host: string; port: number }> {
  // Port 0: a free port chosen at start (tests; Asterisk itself wants a real one).
  const anyPort = isIP(value.trim()) ? null : /^(.+):0$/.exec(value.trim());
  const result = parseHostPort(anyPort ? anyPort[1] : value);
  if (!result.ok) return result;
  if (!isIP(result.value.host)) return { ok: false, error: `${shown(value)}: bind needs an IP address` };
  return { ok: true, value: { host: result.value.host, port: anyPort ? 0 : (result.value.port ?? 5060) } };
}

// Asterisk's `method` words; sslv2 and sslv3 are refused by OpenSSL 3 (and so by node:tls).
const TLS_METHODS = ['default', 'unspecified', 'sslv23', 'tlsv1', 'tlsv1_1', 'tlsv1_2', 'tlsv1_3', 'sslv2', 'sslv3'] as const;

function parseTlsMethod(value: string): Parsed<TlsMethod> {
  const word = value.trim().toLowerCase();
  if (word === 'sslv2' || word === 'sslv3') return { ok: false, error: `${shown(value)}: SSLv2 and SSLv3 are not supported (use tlsv1_2, tlsv1_3 or sslv23)` };
  const known = TLS_METHODS.find((method): method is TlsMethod => method === word);
  return known ? { ok: true, value: known } : { ok: false, error: `${shown(value)} is not one of ${TLS_METHODS.join(', ')}` };
}

/** The options of a `protocol=tls` transport (read on any transport, used by TLS ones). */
const TLS_TRANSPORT_OPTIONS = {
  cert_file: optionalText('certFile', { doc: 'PEM certificate (chain) the TLS transport presents, as server and as client. Required with `protocol=tls`; re-read at reload.' }),
  priv_key_file: optionalText('privKeyFile', { doc: 'PEM private key of `cert_file`. Required with `protocol=tls`.' }),
  password: optionalText('password', { doc: 'Passphrase of an encrypted `priv_key_file`.' }),
  ca_list_file: optionalText('caListFile', { doc: 'PEM file of the CAs peer certificates are checked against (`verify_server`, `verify_client`).' }),
  ca_list_path: optionalText('caListPath', { doc: 'Directory of PEM CA certificates, read as `ca_list_file` is.' }),
  method: parsed('method', parseTlsMethod, { default: 'sslv23', doc: 'TLS version: `tlsv1_2`, `tlsv1_3` (only that one), or `sslv23`/`default`: the best both sides have (TLS 1.2 or 1.3).' }),
  cipher: optionalText('cipher', { doc: 'OpenSSL cipher names, comma separated (else OpenSSL\'s defaults).' }),
  verify_server: bool('verifyServer', { default: 'no', doc: 'Check the certificate of servers Patchbay connects to against the CA list, and their host name (sent as SNI).' }),
  verify_client: bool('verifyClient', { default: 'no', doc: 'Check a certificate a client presents against the CA list (one without a certificate is still let in).' }),
  require_client_cert: bool('requireClientCert', { default: 'no', doc: 'Refuse TLS clients without a valid certificate.' }),
  allow_wildcard_certs: bool('allowWildcardCerts', { default: 'no', doc: 'With `verify_server`, accept a wildcard certificate (`*.example.com`) for the host name.' }),
};

export const TRANSPORT = declareObject<PjsipTransport, TransportDraft>({
  type: 'transport',
  initial: (id) => ({
    type: 'transport',
    id,
    protocol: 'udp',
    bind: { host: '0.0.0.0', port: 5060 },
    localNet: [],
    method: 'sslv23',
    verifyServer: false,
    verifyClient: false,
    requireClientCert: false,
    allowWildcardCerts: false,
    tcpKeepaliveEnable: false,
    tcpKeepaliveIdleTime: 30,
    tcpKeepaliveIntervalTime: 1,
    tcpKeepaliveProbeCount: 5,
    symmetricTransport: false,
    allowReload: false,
  }),
  options: {
    protocol: choice('protocol', TRANSPORT_PROTOCOLS, {
      default: 'udp',
      doc: '`udp`, `tcp`, `tls`, or `ws`/`wss`: SIP over WebSocket for browsers on the HTTP server\'s `/ws` (its `bind` is not used); others leave the transport out, with a warning.',
    }),
    bind: parsed('bind', parseBind, { default: '0.0.0.0:5060', doc: 'Address and port the transport listens on; with any transport configured, `sip.bind`/`sip.port` are not used.' }),
    external_media_address: optional('externalMediaAddress', parseAddress, { doc: 'Address written in SDP c= and o= lines towards destinations outside `local_net` (every destination without one), replacing a local address only.' }),
    external_signaling_address: optional('externalSignalingAddress', parseAddress, { doc: 'Address written in the Contact of requests and responses (not of REGISTER responses or a 302 to INVITE) and the Via of requests towards destinations outside `local_net` (every destination without one).' }),
    external_signaling_port: custom<TransportDraft>({ default: '0', doc: 'With `external_signaling_address`: the port written with it in Contact and Via (0: the bound port).' }, (draft, value, report) => {
      const result = parseInteger(value, 0, 65535);
      if (!result.ok) return report.fail(result.error);
      if (result.value === 0) delete draft.externalSignalingPort;
      else draft.externalSignalingPort = result.value;
    }),
    local_net: listOf('localNet', parseNetwork, { doc: 'Networks whose destinations see the local addresses in Via, Contact and SDP, not the external ones (a list; none: every destination is outside).' }),
    ...TLS_TRANSPORT_OPTIONS,
    tcp_keepalive_enable: bool('tcpKeepaliveEnable', { default: 'no', doc: 'The kernel\'s TCP keep-alive probes on the TCP and TLS connections of this transport (accepted and opened), so that a dead peer or NAT binding is found.' }),
    tcp_keepalive_idle_time: int('tcpKeepaliveIdleTime', 1, 86_400, { default: '30', doc: 'Seconds a connection is idle before the first keep-alive probe.' }),
    tcp_keepalive_interval_time: int('tcpKeepaliveIntervalTime', 1, 86_400, { default: '1', doc: 'Seconds between probes: Node.js cannot set it (the system\'s value is used).', implemented: false }),
    tcp_keepalive_probe_count: int('tcpKeepaliveProbeCount', 1, 100, { default: '5', doc: 'Unanswered probes before the connection is dropped: Node.js cannot set it (the system\'s value is used).', implemented: false }),
    symmetric_transport: bool('symmetricTransport', { default: 'no', doc: 'Requests to a phone go over the transport its REGISTER came on (the `x-ast-txp` Contact parameter).', implemented: false }),
    allow_reload: bool('allowReload', { default: 'no', doc: 'Whether a reload may change this transport.', implemented: false }),
  },
  finish(draft, report) {
    const { protocol } = draft;
    if (protocol !== 'udp' && protocol !== 'tcp' && protocol !== 'tls' && protocol !== 'ws' && protocol !== 'wss') {
      report.warn(`protocol=${protocol} is not implemented by Patchbay (udp, tcp, tls, ws and wss are); transport ignored`);
      return undefined;
    }
    if (protocol === 'tls') {
      if (draft.certFile === undefined) report.error('cert_file', 'is required with protocol=tls');
      if (draft.privKeyFile === undefined) report.error('priv_key_file', 'is required with protocol=tls');
    }
    return { ...draft, protocol };
  },
});
