// Out-of-call text messages. A message addressed `tech:resource` is routed to its technology's
// transport; a technology without one (every technology, until SIP carries messages on the wire)
// delivers locally: the destination endpoint raises TextMessageReceived to the applications
// subscribed to it. Transports hand the messages they receive to receive(), which does the same.
import type { Applications } from './applications.ts';
import type { Endpoints } from './endpoints.ts';
import { InvalidError, NotFoundError } from './errors.ts';
import { formatAriDate } from '../util/ari-date.ts';
import type { MessageDestination, MessageTransport, ReferRequest, TextMessage } from './message-transport.ts';

// The message and transport shapes live in message-transport.ts (the technology contract names
// them without importing this router); re-exported for the code that sends and receives messages.
export type { MessageDestination, MessageTransport, ReferRequest, TextMessage } from './message-transport.ts';

export interface MessageRouterOptions {
  readonly endpoints: Endpoints;
  readonly applications: Applications;
}

export class MessageRouter {
  private readonly transports = new Map<string, MessageTransport>();
  private readonly endpoints: Endpoints;
  private readonly applications: Applications;

  constructor(options: MessageRouterOptions) {
    this.endpoints = options.endpoints;
    this.applications = options.applications;
  }

  /** Plugs a transport in for a technology; `undefined` returns it to local delivery. */
  setTransport(technology: string, transport: MessageTransport | undefined): void {
    if (transport) this.transports.set(technology.toLowerCase(), transport);
    else this.transports.delete(technology.toLowerCase());
  }

  /**
   * Parses `tech:resource`. InvalidError for a malformed destination, NotFoundError for a
   * technology that has no endpoints (technology names match case-insensitively).
   */
  destination(to: string): MessageDestination {
    const colon = to.indexOf(':');
    if (to === '') throw new InvalidError('To must be specified');
    if (colon <= 0 || colon === to.length - 1) throw new InvalidError(`Invalid destination, expected technology:resource: ${to}`);
    const technology = this.endpoints.technologyName(to.slice(0, colon));
    if (!technology) throw new NotFoundError(`Unknown message technology: ${to.slice(0, colon)}`);
    const address = to.slice(colon + 1);
    const slash = address.indexOf('/');
    const resource = slash < 0 ? address : address.slice(0, slash);
    if (resource === '') throw new InvalidError(`Invalid destination, expected technology:resource: ${to}`);
    return { technology, resource, address };
  }

  /** Sends a message; see destination() for the errors, plus NotFoundError for an unknown endpoint. */
  send(message: TextMessage): void {
    const destination = this.destination(message.to);
    const transport = this.transports.get(destination.technology.toLowerCase());
    if (transport) transport.send(message, destination);
    else this.receive(message, destination.technology, destination.resource);
  }

  /**
   * Sends a REFER through the destination technology. InvalidError for an empty `to`,
   * NotFoundError (`Endpoint not found`) when the technology is unknown or cannot refer, or the
   * endpoint is unknown to it.
   */
  refer(request: ReferRequest): void {
    if (request.to === '') throw new InvalidError('To must be specified');
    let destination: MessageDestination;
    try {
      destination = this.destination(request.to);
    } catch {
      throw new NotFoundError('Endpoint not found');
    }
    const transport = this.transports.get(destination.technology.toLowerCase());
    if (!transport?.refer) throw new NotFoundError('Endpoint not found');
    transport.refer(request, destination);
  }

  /** A message arrived for an endpoint: its subscribers receive TextMessageReceived. */
  receive(message: TextMessage, technology: string, resource: string): void {
    const endpoint = this.endpoints.get(technology, resource);
    if (!endpoint) throw new NotFoundError('Endpoint not found');
    this.applications.publish(
      {
        type: 'TextMessageReceived',
        timestamp: formatAriDate(),
        message: { from: message.from, to: message.to, body: message.body, variables: { ...message.variables } },
        endpoint,
      },
      { endpointIds: [`${endpoint.technology}/${endpoint.resource}`] },
    );
  }
}
