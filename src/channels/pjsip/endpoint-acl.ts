// An endpoint's own ACL (permit, deny, acl and their contact_ forms on `type=endpoint`), as Asterisk
// 22's pjsip_distributor.c applies it: once a request is identified to the endpoint, its source (and
// each Contact's IP host) must pass the endpoint's rules; a request that fails is handled as one
// from no endpoint at all (Asterisk swaps in its artificial endpoint, AST-2018-008): it is
// challenged 401, and no credentials pass, so the answer does not tell that the endpoint exists.
// The refusal is only in the log: "SIP ACL: Rejecting ..." and "Request 'INVITE' from '<sip:...>'
// failed for 'address:port' (callid: ...) - Not match Endpoint ACL".
// A request in a dialog (a call's, a subscription's) is checked against the ACL of the dialog's
// endpoint too and logged the same way, but it goes on (inbound-auth.ts, refusedInDialog).
//
// Each endpoint's lists are compiled once per configuration (start, reload, a change through ARI)
// with sip-acl.ts's compiler, so the check is a map lookup and the allocation-free rule walk.
import type { Logger } from 'pino';
import type { NamedAcl } from '../../config/ari-users.ts';
import type { SipRequest } from '../../sip/message.ts';
import type { Source } from '../../sip/transport-types.ts';
import type { AclLists, PjsipConfig, PjsipEndpoint } from './config/types.ts';
import type { NamedRules } from './acl-conf.ts';
import { compileSections, readNamedAcls, SipAcl } from './sip-acl.ts';

const hasLists = (lists: AclLists): boolean => lists.rules.length > 0 || lists.acl.length > 0 || lists.contactRules.length > 0 || lists.contactAcl.length > 0;

export class EndpointAcls {
  readonly #byEndpoint: ReadonlyMap<string, SipAcl>;

  /** The endpoints' ACLs against the named ACLs; undefined when no endpoint has one. Problems are logged. */
  static compile(endpoints: Iterable<PjsipEndpoint>, named: ReadonlyMap<string, NamedRules>, log: Logger, now: () => number = Date.now): EndpointAcls | undefined {
    const byEndpoint = new Map<string, SipAcl>();
    const problems: string[] = [];
    for (const endpoint of endpoints) {
      if (!hasLists(endpoint.acls)) continue;
      const acl = SipAcl.compile([{ id: endpoint.id, ...endpoint.acls }], named, log, problems, now, true);
      if (acl) byEndpoint.set(endpoint.id, acl);
    }
    for (const line of problems) log.error(line.replace(/^\[/, '[endpoint '));
    return byEndpoint.size > 0 ? new EndpointAcls(byEndpoint) : undefined;
  }

  private constructor(byEndpoint: ReadonlyMap<string, SipAcl>) {
    this.#byEndpoint = byEndpoint;
  }

  /** Whether the endpoint's own ACL refuses a request identified to it (logged as Asterisk does). */
  refuses(endpoint: PjsipEndpoint, request: SipRequest, source: Source): boolean {
    return this.refusesFor(endpoint.id, request, source);
  }

  /** The same by the endpoint's id (a dialog keeps only that). */
  refusesFor(endpointId: string, request: SipRequest, source: Source): boolean {
    const acl = this.#byEndpoint.get(endpointId);
    return acl !== undefined && acl.refuses(request, source);
  }
}

/** What screens requests: the `type=acl` sections (before anything) and the endpoints' own ACLs (once identified). */
export interface SipAcls {
  readonly sections: SipAcl | undefined;
  readonly endpoints: EndpointAcls | undefined;
}

/**
 * Both kinds of ACL of a configuration; acl.conf (beside `pjsipConf`) is read now, once for both,
 * and only when some ACL is configured.
 */
export function buildSipAcls(config: PjsipConfig, unbuilt: readonly string[], pjsipConf: string | null | undefined, settingsNamed: ReadonlyMap<string, NamedAcl>, log: Logger): SipAcls {
  let anyEndpoint = false;
  for (const endpoint of config.endpoints.values()) if (hasLists(endpoint.acls)) anyEndpoint = true;
  if (config.acls.size === 0 && unbuilt.length === 0 && !anyEndpoint) return { sections: undefined, endpoints: undefined };
  const named = readNamedAcls(pjsipConf, settingsNamed, log);
  return { sections: compileSections(config, unbuilt, named, log), endpoints: anyEndpoint ? EndpointAcls.compile(config.endpoints.values(), named, log) : undefined };
}
