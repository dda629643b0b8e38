// Endpoints: listing, retrieval, out-of-call text messages and REFER (sent by the technology).
import { AriError, defineHandlers } from '../handler.ts';

/** The body's `variables`: an object of string values, or absent. */
function parseVariables(variables: unknown): Record<string, string> {
  if (variables === undefined || variables === null) return {};
  if (typeof variables !== 'object' || Array.isArray(variables)) throw new AriError(400, 'variables: must be a JSON object');
  // No prototype: a variable named `__proto__` or `constructor` is a name like any other.
  const result: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value !== 'string') throw new AriError(400, `variables: the value of ${name} must be a string`);
    result[name] = value;
  }
  return result;
}

export const endpointsHandlers = defineHandlers('endpoints', {
  list: (_params, { core }) => core.endpoints.list(),

  listByTech: ({ tech }, { core }) => core.endpoints.listByTechnology(tech),

  get: ({ tech, resource }, { core }) => core.endpoints.require(tech, resource),

  sendMessage: ({ to, from, body, variables }, { core }) => {
    if (to === '') throw new AriError(400, 'To must be specified');
    core.messages.send({ to, from, body: body ?? '', variables: parseVariables(variables) });
  },

  sendMessageToEndpoint: ({ tech, resource, from, body, variables }, { core }) => {
    const parsed = parseVariables(variables);
    core.endpoints.require(tech, resource);
    core.messages.send({ to: `${tech.toLowerCase()}:${resource}`, from, body: body ?? '', variables: parsed });
  },

  refer: ({ to, from, refer_to, to_self, variables }, { core }) => {
    const parsed = parseVariables(variables);
    core.messages.refer({ to, from, referTo: refer_to, toSelf: to_self === true, variables: parsed });
  },

  referToEndpoint: ({ tech, resource, from, refer_to, to_self, variables }, { core }) => {
    core.endpoints.require(tech, resource);
    const parsed = parseVariables(variables);
    core.messages.refer({ to: `${tech.toLowerCase()}:${resource}`, from, referTo: refer_to, toSelf: to_self === true, variables: parsed });
  },
});
