// Outbound calls and where they go. `PJSIP/alice` or `PJSIP/5551234@trunk` sends an INVITE to the
// AOR's registered contacts (the newest first) or its static `contact`; `PJSIP/alice/sip:…` to the
// URI given; no contact → the request fails at once. Messages and REFERs find their targets here too.
// A contact registered over TCP is reached over the connection its REGISTER came on (a phone behind
// NAT or a firewall cannot accept connections; RFC 5626 calls it the flow), whatever its Contact says.
// In a cluster, a phone registered over UDP through another member is called from here directly;
// one registered over TCP, TLS or WebSocket through another member over that member's connection.
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelRequest, TechnologyContext } from '../../core/channels/technology.ts';
import { InvalidError, NotFoundError, UnavailableError } from '../../core/errors.ts';
import { uriDestination } from '../../sip/dialog.ts';
import { isForeignFlow } from '../../sip/foreign-flow.ts';
import type { Binding } from '../../sip/registrar.ts';
import type { Destination } from '../../sip/transport.ts';
import { parseNameAddr, parseUri, type SipUri } from '../../sip/uri.ts';
import { SipCall, type OutboundSide } from './call.ts';
import { endpointChannelInit, outboundCaller, setEndpointVariables } from './endpoint-channel.ts';
import { withUserPhone } from './user-eq-phone.ts';
import { formatContactUri, nameAddr } from './addresses.ts';
import { outboundIdentityOptions } from './caller-identity.ts';
import { outboundCredentials } from './outbound-credentials.ts';
import { contactId } from './object-functions.ts';
import type { PjsipEndpoint } from './config/index.ts';
import type { SharedContact } from './contact-directory.ts';
import { transportProtocol } from './listeners.ts';
import { MAX_CALLS, type PjsipRuntime } from './runtime.ts';
import { endpointSessionOptions } from './config/session-values.ts';
import type { CallTransfers } from './transfers.ts';

export class Dialer {
  readonly #runtime: PjsipRuntime;
  readonly #transfers: CallTransfers;

  constructor(runtime: PjsipRuntime, transfers: CallTransfers) {
    this.#runtime = runtime;
    this.#transfers = transfers;
  }

  /** `PJSIP/alice`, `PJSIP/5551234@trunk`, `PJSIP/alice/sip:alice@192.0.2.1:5062`. */
  request(request: ChannelRequest): Channel {
    const runtime = this.#runtime;
    const context = runtime.context;
    if (!context || !runtime.layer) throw new UnavailableError('SIP is not running');
    const { endpoint, user, uri, through, contact } = this.resolve(request.resource, true);
    // An outbound_proxy takes the INVITE (named in a Route header); the Request-URI stays the target.
    // A phone reached over another server's connection is reached only there: no proxy in between.
    // A contact registered with a Path (the AOR's support_path) is reached through it, as res_pjsip_path
    // sets it as the request's outbound proxy: the first hop takes the INVITE, the whole Path is its Route.
    const path = contact && !through ? this.pathOf(uri) : undefined;
    const proxy = path ? path.first : endpoint.outboundProxy && !through ? parseUri(endpoint.outboundProxy.replace(/^<|>$/g, '')) : undefined;
    const viaProxy = proxy && proxy.kind === 'sip' ? proxy : undefined;
    const destination = through ? this.flowDestination(through, uri) : this.destinationOf(viaProxy ?? uri, endpoint);
    if (!destination) throw new UnavailableError(`No reachable contact for endpoint ${endpoint.id}`);
    try {
      const target = user !== undefined ? { ...uri, user } : uri;
      // user_eq_phone marks the Request-URI (and so the To) once the destination is known from the URI as it was.
      return this.#place(context, request, endpoint, destination, endpoint.userEqPhone ? withUserPhone(target) : target, viaProxy, contact, path?.route);
    } catch (error) {
      // A flow through another member that no call took is given back at once (it counts against a bound).
      if (isForeignFlow(destination.connection)) destination.connection.release();
      throw error;
    }
  }

  /** The call and its channel, once its destination is known. */
  #place(context: TechnologyContext, request: ChannelRequest, endpoint: PjsipEndpoint, destination: Destination, target: SipUri, viaProxy: SipUri | undefined, contact: OutboundSide['contact'], route?: string): Channel {
    const runtime = this.#runtime;
    if (runtime.calls.size >= MAX_CALLS) throw new UnavailableError('Too many SIP calls');
    // The codecs of the calling side (outgoing_call_offer_pref's "remote"): ARI's formats, else what the requesting channel carries.
    const requestorFormat = request.requestor?.driver.nativeFormat?.();
    // The requesting channel is the one this call will most likely be connected with (Dial(), ARI's originator).
    const requestorDriver = request.requestor?.driver;
    const nearWorker = requestorDriver instanceof SipCall ? requestorDriver.stream?.workerIndex : undefined;
    const side: OutboundSide = {
      kind: 'outbound',
      target,
      destination,
      identity: outboundIdentityOptions(endpoint, runtime.config.global.defaultFromUser),
      ...(endpoint.userEqPhone ? { userEqPhone: true } : {}),
      ...(route !== undefined ? { route } : viaProxy ? { route: nameAddr(viaProxy) } : {}),
      credentials: outboundCredentials(runtime.config, endpoint.outboundAuth),
      coreCodecs: request.formats ?? (requestorFormat ? [requestorFormat] : []),
      ...(nearWorker === undefined ? {} : { nearWorker }),
      ...(contact ? { contact } : {}),
      // A redirected INVITE still goes through the outbound proxy or the phone's connection; else to the Contact's address.
      redirectDestination: (uri) => (viaProxy || isForeignFlow(destination.connection) ? destination : this.destinationOf(uri, endpoint)),
    };
    const call = new SipCall(runtime.services, side, endpoint.codecs, endpoint.id, { ...endpoint, ...endpointSessionOptions(endpoint) });
    this.#transfers.wire(call);
    const channel = context.channels.create(
      {
        ...(request.channelId ? { id: request.channelId } : {}),
        name: `PJSIP/${endpoint.id}-${context.channels.newNameSuffix('PJSIP')}`,
        technology: 'PJSIP',
        endpointResource: endpoint.id,
        direction: 'outbound',
        state: 'Down',
        // chan_pjsip gives every channel its endpoint's context, outbound ones too (captured: a
        // Dial() callee shows it in ChannelCreated).
        location: { context: endpoint.context },
        protocolId: call.callId,
        ...(request.requestor ? { linkedId: request.requestor.snapshot().id } : {}),
        ...endpointChannelInit(endpoint),
        ...outboundCaller(endpoint),
      },
      (created) => call.attach(created),
    );
    setEndpointVariables(channel, endpoint);
    // chan_pjsip gives the channel its endpoint's tone_zone (ast_channel_zone).
    channel.toneZone = endpoint.toneZone;
    // and its call and pickup groups (call pickup).
    if (endpoint.groups) channel.groups = endpoint.groups;
    runtime.calls.add(call);
    return channel;
  }

  /**
   * The endpoint, dialled user and URI of a dial string (`[user@]endpoint[/uri]`). With `relayed`
   * (calls and MESSAGEs), the newest contact may be one another server holds over a connection:
   * `through` names it, and the request goes over that server's connection (flow-relay.ts).
   */
  resolve(resource: string, relayed = false): { endpoint: PjsipEndpoint; user?: string; uri: SipUri; through?: SharedContact; contact?: OutboundSide['contact'] } {
    const slash = resource.indexOf('/');
    const head = slash < 0 ? resource : resource.slice(0, slash);
    const explicit = slash < 0 ? undefined : resource.slice(slash + 1);
    const at = head.lastIndexOf('@');
    const endpointId = at < 0 ? head : head.slice(at + 1);
    const user = at < 0 ? undefined : head.slice(0, at);
    if (endpointId === '') throw new InvalidError(`PJSIP dial string needs an endpoint: ${resource}`);
    const endpoint = this.#runtime.config.endpoints.get(endpointId);
    if (!endpoint) throw new NotFoundError(`Endpoint not found: PJSIP/${endpointId}`);
    if (explicit) {
      const parsed = parseUri(explicit);
      if (!parsed || parsed.kind !== 'sip') throw new InvalidError(`Not a SIP URI: ${explicit}`);
      return { endpoint, user, uri: parsed };
    }
    const newest = this.#newestContact(endpoint, relayed && this.#runtime.flowRelay !== undefined);
    if (newest?.through) return { endpoint, user, uri: newest.uri, through: newest.through };
    const uri = newest?.uri;
    // CHANNEL(aor) and CHANNEL(contact) of the call: the AOR and contact taken (Asterisk's session aor/contact).
    const contact = newest ? { aor: newest.aor, id: contactId(newest.aor, newest.text, newest.permanent) } : undefined;
    if (!uri) {
      // Registered only over a connection that another server holds: said plainly (docs/cluster.md).
      const elsewhere = endpoint.aors.flatMap((aorId) => this.#runtime.contactDirectory?.contactsOf(aorId) ?? [])[0];
      if (elsewhere) throw new UnavailableError(`PJSIP/${endpoint.id} is registered over ${elsewhere.transport.toUpperCase()} through cluster member ${elsewhere.holder} only: call it from there`);
      throw new UnavailableError(`No reachable contact for endpoint PJSIP/${endpoint.id}`);
    }
    return { endpoint, user, uri, ...(contact ? { contact } : {}) };
  }

  /**
   * The newest registered binding of the endpoint's AORs, else the first static contact. With a
   * contact directory (a cluster), a UDP contact registered through another server counts as a
   * binding of this one: a datagram reaches the phone from here as well (its NAT permitting, as
   * for any UDP contact); a TCP, TLS or WebSocket one cannot, its connection being the other's.
   */
  contactOf(endpoint: PjsipEndpoint): SipUri | undefined {
    return this.#newestContact(endpoint, false)?.uri;
  }

  /** contactOf with where it came from: its AOR, its text as stored, and whether it is configured (`contact=`). */

  /** contactOf, where with `relayed` a contact another server holds over a connection with a flow address counts too (`through`). */
  #newestContact(endpoint: PjsipEndpoint, relayed: boolean): { uri: SipUri; through?: SharedContact; aor: string; text: string; permanent: boolean } | undefined {
    const { qualifier, registrar, config, contactDirectory } = this.#runtime;
    // Contacts that qualifying found Unreachable are skipped, as Asterisk skips unavailable ones.
    const unreachable = (aor: string, uri: string): boolean => qualifier?.state(aor, uri)?.status === 'Unreachable';
    let newest: Pick<Binding, 'uri' | 'expiresAt'> | undefined;
    let through: SharedContact | undefined;
    let newestAor = '';
    for (const aorId of endpoint.aors) {
      for (const binding of registrar.lookup(aorId)) {
        if (unreachable(aorId, binding.uri)) continue;
        if (!newest || binding.expiresAt >= newest.expiresAt) [newest, through, newestAor] = [binding, undefined, aorId];
      }
      for (const shared of contactDirectory?.contactsOf(aorId) ?? []) {
        const overConnection = shared.transport !== 'udp';
        if (overConnection && (!relayed || shared.flow === undefined)) continue;
        if (!newest || shared.expiresAt > newest.expiresAt) [newest, through, newestAor] = [shared, overConnection ? shared : undefined, aorId];
      }
    }
    if (newest) {
      const parsed = parseUri(newest.uri);
      const found = { aor: newestAor, text: newest.uri, permanent: false };
      if (parsed && parsed.kind === 'sip') return through ? { uri: parsed, through, ...found } : { uri: parsed, ...found };
    }
    for (const aorId of endpoint.aors) {
      for (const contact of config.aors.get(aorId)?.contacts ?? []) {
        const text = contact.replace(/^<|>$/g, '');
        if (unreachable(aorId, text)) continue;
        const parsed = parseUri(text);
        if (parsed && parsed.kind === 'sip') return { uri: parsed, aor: aorId, text, permanent: true };
      }
    }
    return undefined;
  }

  /**
   * The Path a registered contact came with, when its AOR has support_path: its first hop (where
   * requests to the contact are sent) and the Route that names every hop. Undefined otherwise.
   */
  pathOf(uri: SipUri): { first: SipUri; route: string } | undefined {
    const binding = this.#runtime.registrar.findByUri(formatContactUri(uri));
    if (!binding || binding.path.length === 0 || this.#runtime.config.aors.get(binding.aor)?.supportPath !== true) return undefined;
    const first = parseNameAddr(binding.path[0])?.uri;
    return first && first.kind === 'sip' ? { first, route: binding.path.join(', ') } : undefined;
  }

  /**
   * The destination of a call to a contact another server holds over its connection: a flow
   * through that server (flow-relay.ts), the phone's address as the contact names it. Refused
   * (no flow, a bound reached) it is unreachable from here, said as the dialer says it.
   */
  flowDestination(contact: SharedContact, uri: SipUri): Destination {
    const relay = this.#runtime.flowRelay;
    const outcome = relay ? relay.flowTo(contact) : { refused: 'no relay' };
    if ('refused' in outcome) throw new UnavailableError(`PJSIP/${contact.aor} is registered over ${contact.transport.toUpperCase()} through cluster member ${contact.holder}, which cannot be reached from here: ${outcome.refused}`);
    const { flow } = outcome;
    const direct = uriDestination(uri);
    return { transport: flow.protocol, host: direct?.host ?? flow.remoteAddress, port: direct?.port ?? flow.remotePort, connection: flow };
  }

  /**
   * Where a request to the URI goes. A contact registered over TCP or TLS is reached over the
   * connection its REGISTER came on (from the listener that took it). Otherwise, with the endpoint's
   * `transport=`, it leaves from that transport's socket, over its protocol unless the URI names
   * one (`;transport=tcp`, `;transport=tls`, or a `sips:` URI: TLS).
   */
  destinationOf(uri: SipUri, endpoint?: PjsipEndpoint): Destination | undefined {
    const binding = this.#runtime.registrar.findByUri(formatContactUri(uri));
    const explicitUdp = uri.params.get('transport')?.toLowerCase() === 'udp' && uri.scheme !== 'sips';
    // The transport keeps one connection per remote address and port: this one, while it is open.
    // A browser (SIP over WebSocket) can be reached no other way, whatever its Contact says.
    if (binding && binding.source.transport !== 'udp' && !explicitUdp) {
      const { address: host, port, listener } = binding.source;
      const transport = ({ tcp: 'TCP', tls: 'TLS', ws: 'WS', wss: 'WSS' } as const)[binding.source.transport];
      return { transport, host, port, ...(listener !== undefined ? { listener } : {}) };
    }
    const destination = uriDestination(uri);
    const transport = endpoint?.transport === undefined ? undefined : this.#runtime.config.transports.get(endpoint.transport);
    if (!destination || !transport) return destination;
    const named = uri.params.has('transport') || uri.scheme === 'sips';
    const protocol = named ? destination.transport : transportProtocol(transport);
    // A TLS transport's default port is 5061 (a contact without a port, sent over it).
    const port = uri.port === undefined && protocol === 'TLS' && !named ? 5061 : destination.port;
    return { ...destination, transport: protocol, port, listener: transport.id };
  }
}
