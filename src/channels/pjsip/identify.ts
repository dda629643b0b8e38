// Which endpoint an out-of-dialog request comes from, as res_pjsip's endpoint identifiers decide:
// the Contact of a line=yes outbound registration first, then global endpoint_identifier_order
// (ip → identify objects' match, header → their match_header, username/auth_username → the From
// user, anonymous). As in Asterisk, an identifier the order leaves out is tried after it: the
// header identifier, so an identify's match_header works with the default order.
import type { SipRequest } from '../../sip/message.ts';
import type { Source } from '../../sip/transport.ts';
import { identifyMatchesAddress, type PjsipConfig, type PjsipEndpoint } from './config/index.ts';
import type { PjsipRuntime } from './runtime.ts';

/**
 * The object names a user of a domain may have, in Asterisk's order (multi-domain): `user@domain`,
 * then `user@<the domain it is an alias of>` (a domain_alias section named after the domain), then
 * `user` alone.
 */
export function namesInDomain(user: string, domain: string, config: Pick<PjsipConfig, 'domainAliases'>): string[] {
  if (domain === '') return [user];
  const host = domain.toLowerCase();
  const alias = config.domainAliases.get(host) ?? config.domainAliases.get(domain);
  return [`${user}@${host}`, ...(alias && alias.domain !== '' ? [`${user}@${alias.domain}`] : []), user];
}

export class EndpointIdentifier {
  readonly #runtime: PjsipRuntime;

  constructor(runtime: PjsipRuntime) {
    this.#runtime = runtime;
  }

  identify(request: SipRequest, source: Source): PjsipEndpoint | undefined {
    const config = this.#runtime.config;
    // A request to the Contact of a line=yes registration comes from that registration's endpoint.
    const lineEndpoint = request.uri.kind === 'sip' ? this.#runtime.registrations?.endpointOfLine(request.uri.params.get('line')) : undefined;
    if (lineEndpoint !== undefined && config.endpoints.has(lineEndpoint)) return config.endpoints.get(lineEndpoint);
    for (const method of config.global.endpointIdentifierOrder) {
      if (method === 'ip') {
        for (const identify of config.identifies.values()) {
          if (identifyMatchesAddress(identify.match, source.address)) {
            const endpoint = config.endpoints.get(identify.endpoint);
            if (endpoint) return endpoint;
          }
        }
      } else if (method === 'username' || method === 'auth_username') {
        const from = request.from()?.uri;
        const user = from && from.kind === 'sip' ? from.user : undefined;
        if (user) {
          for (const name of namesInDomain(user, from?.kind === 'sip' ? from.host : '', config)) {
            const endpoint = config.endpoints.get(name);
            if (endpoint && (endpoint.identifyBy.includes('username') || endpoint.identifyBy.includes('auth_username'))) return endpoint;
          }
        }
      } else if (method === 'anonymous') {
        const endpoint = config.endpoints.get('anonymous');
        if (endpoint) return endpoint;
      } else if (method === 'header') {
        const endpoint = this.#byHeader(request);
        if (endpoint) return endpoint;
      }
    }
    return config.global.endpointIdentifierOrder.includes('header') ? undefined : this.#byHeader(request);
  }

  /** The endpoint of the first identify whose match_header the request carries, value for value. */
  #byHeader(request: SipRequest): PjsipEndpoint | undefined {
    const config = this.#runtime.config;
    for (const identify of config.identifies.values()) {
      const wanted = identify.matchHeader;
      if (!wanted || !request.getAll(wanted.name).some((value) => value.trim() === wanted.value)) continue;
      const endpoint = config.endpoints.get(identify.endpoint);
      if (endpoint) return endpoint;
    }
    return undefined;
  }
}
