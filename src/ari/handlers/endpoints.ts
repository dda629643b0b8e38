// Endpoints: listing, retrieval, out-of-call text messages and REFER (sent by the technology).
import { messageEndpoint, parseMessageVariables, referEndpoint } from '../../control/endpoint-messages.ts';
import { AriError, defineHandlers } from '../handler.ts';

export const endpointsHandlers = defineHandlers('endpoints', {
  list: (_params, { core }) => core.endpoints.list(),

  listByTech: ({ tech }, { core }) => core.endpoints.listByTechnology(tech),

  get: ({ tech, resource }, { core }) => core.endpoints.require(tech, resource),

  sendMessage: ({ to, from, body, variables }, { core }) => {
    if (to === '') throw new AriError(400, 'To must be specified');
    core.messages.send({ to, from, body: body ?? '', variables: parseMessageVariables(variables) });
  },

  sendMessageToEndpoint: ({ tech, resource, from, body, variables }, { core }) => {
    messageEndpoint(core, tech, resource, { from, body, variables });
  },

  refer: ({ to, from, refer_to, to_self, variables }, { core }) => {
    const parsed = parseMessageVariables(variables);
    core.messages.refer({ to, from, referTo: refer_to, toSelf: to_self === true, variables: parsed });
  },

  referToEndpoint: ({ tech, resource, from, refer_to, to_self, variables }, { core }) => {
    referEndpoint(core, tech, resource, { from, referTo: refer_to, toSelf: to_self === true, variables });
  },
});
