// What the SIP roles (identify, authenticate, register, INVITE, MESSAGE, REFER, dial, stats) share.
// The technology owns all of it and hands each role this view: getters, because start() and stop()
// replace the transaction layer, the configuration and the registrar while the roles live on.
import type { Logger } from 'pino';
import type { TechnologyContext } from '../../core/channels/technology.ts';
import type { Registrar } from '../../sip/registrar.ts';
import type { TransactionLayer } from '../../sip/transaction/index.ts';
import type { TransportProtocol } from '../../sip/transport.ts';
import type { SipUri } from '../../sip/uri.ts';
import { contactUri } from './addresses.ts';
import type { CallServices, SipCall } from './call.ts';
import type { CallRegistry } from './call-registry.ts';
import type { ContactDirectory } from './contact-directory.ts';
import type { PjsipConfig } from './config/index.ts';
import type { FlowRelay } from './flow-relay.ts';
import type { ContactQualifier } from './qualify.ts';
import type { OutboundRegistrations } from './registrations.ts';

export const USER_AGENT = 'Patchbay';
/** Most calls at once that the technology keeps (each holds a socket and a dialog). */
export const MAX_CALLS = 4096;
/** X- headers carried as message variables, at most this many. */
export const MAX_MESSAGE_VARIABLES = 32;

export interface PjsipRuntime {
  readonly context: TechnologyContext | undefined;
  readonly log: Logger | undefined;
  readonly layer: TransactionLayer | undefined;
  readonly config: PjsipConfig;
  readonly registrar: Registrar;
  readonly qualifier: ContactQualifier | undefined;
  readonly registrations: OutboundRegistrations | undefined;
  /** Contacts registered through other servers (a cluster member's); undefined on a single server. */
  readonly contactDirectory: ContactDirectory | undefined;
  /** Calls over another server's connection to a phone (a cluster member's); undefined on a single server. */
  readonly flowRelay: FlowRelay | undefined;
  /** The live calls, found by dialog (Call-ID and tags). */
  readonly calls: CallRegistry<SipCall>;
  /** Our address as written in Contact, From and URIs of this server. */
  readonly publicHost: string;
  readonly port: number;
  readonly services: CallServices;
}

/**
 * Our Contact for a request or answer over `transport`, at the port of the listener it leaves
 * from (a TCP or TLS listener may have a port of its own), `sips:` when `secure` (addresses.ts contactUri).
 */
export function localContact(runtime: PjsipRuntime, user: string | undefined, transport: TransportProtocol, listener?: string, secure = false): SipUri {
  const port = transport === 'UDP' ? undefined : runtime.services.portOf?.(transport, listener);
  return contactUri(user, runtime.publicHost, port ?? runtime.port, transport, secure);
}
