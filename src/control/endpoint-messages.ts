// Text messages and REFER addressed to an endpoint of this server by technology and resource: the
// endpoint must exist (the endpoint registry's knowledge) before the message router carries the
// request. ARI asks for these by name here instead of consulting the two itself.
import type { Endpoints } from '../core/endpoints.ts';
import { InvalidError } from '../core/errors.ts';
import type { MessageRouter } from '../core/messages.ts';

/** The core subsystems endpoint messaging needs. */
export interface EndpointMessageServices {
  readonly endpoints: Endpoints;
  readonly messages: MessageRouter;
}

/** A request body's `variables`: an object of string values, or absent. InvalidError otherwise. */
export function parseMessageVariables(variables: unknown): Record<string, string> {
  if (variables === undefined || variables === null) return {};
  if (typeof variables !== 'object' || Array.isArray(variables)) throw new InvalidError('variables: must be a JSON object');
  // No prototype: a variable named `__proto__` or `constructor` is a name like any other.
  const result: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value !== 'string') throw new InvalidError(`variables: the value of ${name} must be a string`);
    result[name] = value;
  }
  return result;
}

/** The router's address of endpoint `tech/resource` (`pjsip:alice`). */
const addressOf = (tech: string, resource: string): string => `${tech.toLowerCase()}:${resource}`;

export interface EndpointMessage {
  readonly from: string;
  readonly body?: string;
  /** Unchecked, as the request carried it. */
  readonly variables: unknown;
}

/** Sends an out-of-call text message to an endpoint; checks the variables, then that the endpoint exists. */
export function messageEndpoint(services: EndpointMessageServices, tech: string, resource: string, message: EndpointMessage): void {
  const variables = parseMessageVariables(message.variables);
  services.endpoints.require(tech, resource);
  services.messages.send({ to: addressOf(tech, resource), from: message.from, body: message.body ?? '', variables });
}

export interface EndpointRefer {
  readonly from: string;
  readonly referTo: string;
  readonly toSelf: boolean;
  /** Unchecked, as the request carried it. */
  readonly variables: unknown;
}

/** Asks an endpoint to transfer itself elsewhere; checks that the endpoint exists, then the variables. */
export function referEndpoint(services: EndpointMessageServices, tech: string, resource: string, refer: EndpointRefer): void {
  services.endpoints.require(tech, resource);
  const variables = parseMessageVariables(refer.variables);
  services.messages.refer({ to: addressOf(tech, resource), from: refer.from, referTo: refer.referTo, toSelf: refer.toSelf, variables });
}
