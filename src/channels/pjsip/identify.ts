// Which endpoint an out-of-dialog request comes from, as res_pjsip's endpoint identifiers decide:
// the Contact of a line=yes outbound registration first, then global endpoint_identifier_order
// (ip → identify objects, username/auth_username → the From user, anonymous).
import type { SipRequest } from '../../sip/message.ts';
import type { Source } from '../../sip/transport.ts';
import { identifyMatchesAddress, type PjsipEndpoint } from './config/index.ts';
import type { PjsipRuntime } from './runtime.ts';

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
          const endpoint = config.endpoints.get(user);
          if (endpoint && (endpoint.identifyBy.includes('username') || endpoint.identifyBy.includes('auth_username'))) return endpoint;
        }
      } else if (method === 'anonymous') {
        const endpoint = config.endpoints.get('anonymous');
        if (endpoint) return endpoint;
      }
    }
    return undefined;
  }
}
