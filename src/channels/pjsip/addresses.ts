// SIP text the technology writes about itself and its peers (From, To, Contact, Refer-To), built
// from parts through sip/uri.ts's formatters so that user parts are escaped, IPv6 hosts bracketed
// and display names quoted the one way.
import type { TransportProtocol } from '../../sip/transport.ts';
import { formatNameAddr, formatUri, type SipUri, type Uri } from '../../sip/uri.ts';

/** A `sip:` URI of ours or a peer's, built from parts so that sip/uri.ts escapes and brackets them. */
export function plainSipUri(user: string | undefined, host: string, port?: number, params: ReadonlyArray<[string, string | null]> = []): SipUri {
  return {
    kind: 'sip',
    scheme: 'sip',
    host: host.replace(/^\[|\]$/g, ''),
    params: new Map(params),
    headers: new Map(),
    ...(user !== undefined ? { user } : {}),
    ...(port !== undefined ? { port } : {}),
  };
}

/**
 * Our Contact URI for signalling over `transport` (RFC 3261 §8.1.1.8), as pjsip writes it: the
 * transport named unless UDP (`;transport=tcp`, `;transport=tls`), and `sips:` when the dialog's
 * URI is a SIPS one (RFC 3261 §8.1.1.8: a SIPS request needs a SIPS Contact).
 */
export function contactUri(user: string | undefined, host: string, port: number, transport: TransportProtocol, secure: boolean): SipUri {
  const uri = plainSipUri(user, host, port, transport === 'UDP' ? [] : [['transport', transport.toLowerCase()]]);
  return secure ? { ...uri, scheme: 'sips' } : uri;
}

/** Whether a URI is a SIPS one (the dialog then needs TLS end to end). */
export function isSipsUri(uri: Uri | undefined): boolean {
  return uri?.kind === 'sip' && uri.scheme === 'sips';
}

/** `<uri>` with header parameters (`;tag=…`, `;expires=…`). */
export function nameAddr(uri: Uri | string, params: ReadonlyArray<[string, string | null]> = [], displayName?: string): string {
  return formatNameAddr({ uri, params: new Map(params), ...(displayName !== undefined ? { displayName } : {}) });
}

/** A URI as we store and send a contact: sip/uri.ts's text without the password and URI headers. */
export function formatContactUri(uri: Uri): string {
  if (uri.kind !== 'sip') return formatUri(uri);
  const { password: _password, ...rest } = uri;
  return formatUri({ ...rest, headers: new Map() });
}
