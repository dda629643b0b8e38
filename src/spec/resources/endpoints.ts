// Endpoints: listing, retrieval, out-of-call text messages and REFER.
import type { ResourceDecl } from '../types.ts';

const tech = { name: 'tech', description: 'Technology of the endpoint (e.g. PJSIP).', in: 'path', dataType: 'string', required: true } as const;
const resource = { name: 'resource', description: 'Resource name of the endpoint within its technology.', in: 'path', dataType: 'string', required: true } as const;
const variables = { name: 'variables', description: 'Body object "variables": extra key/value pairs sent with the message.', in: 'body', dataType: 'containers' } as const;
const sender = { name: 'from', description: 'Sender URI.', in: 'query', dataType: 'string', required: true } as const;
const messageBody = { name: 'body', description: 'Text of the message.', in: 'query', dataType: 'string' } as const;
const toSelf = { name: 'to_self', description: 'Whether refer_to names an endpoint of this server.', in: 'query', dataType: 'boolean', defaultValue: false } as const;
/** What an operation naming an endpoint answers when it cannot. */
const endpointErrors = [
  { code: 400, reason: 'Invalid parameters.' },
  { code: 404, reason: 'Endpoint not found.' },
] as const;

export const endpoints = {
  name: 'endpoints',
  description: 'Endpoint resources',
  models: ['Endpoint', 'TextMessage'],
  operations: [
    {
      nickname: 'list',
      method: 'GET',
      path: '/endpoints',
      summary: 'List every endpoint.',
      since: ['12.0.0'],
      params: [],
      responseClass: 'List[Endpoint]',
      errors: [],
    },
    {
      nickname: 'sendMessage',
      method: 'PUT',
      path: '/endpoints/sendMessage',
      summary: 'Send an out-of-call text message to a technology:resource destination.',
      since: ['13.0.0'],
      params: [
        { name: 'to', description: 'Destination URI, in the form technology:resource.', in: 'query', dataType: 'string', required: true },
        sender,
        messageBody,
        variables,
      ],
      responseClass: 'void',
      errors: endpointErrors,
      successStatus: 202,
    },
    {
      nickname: 'refer',
      method: 'POST',
      path: '/endpoints/refer',
      summary: 'Ask a destination to transfer itself elsewhere with a REFER.',
      since: ['18.20.0', '20.5.0'],
      params: [
        { name: 'to', description: 'Destination URI receiving the REFER, in the form technology:resource.', in: 'query', dataType: 'string', required: true },
        sender,
        { name: 'refer_to', description: 'URI the destination is asked to contact.', in: 'query', dataType: 'string', required: true },
        toSelf,
        variables,
      ],
      responseClass: 'void',
      errors: endpointErrors,
      successStatus: 202,
    },
    {
      nickname: 'listByTech',
      method: 'GET',
      path: '/endpoints/{tech}',
      summary: 'List the endpoints of one technology.',
      since: ['12.0.0'],
      params: [tech],
      responseClass: 'List[Endpoint]',
      errors: [{ code: 404, reason: 'No endpoints for that technology.' }],
    },
    {
      nickname: 'get',
      method: 'GET',
      path: '/endpoints/{tech}/{resource}',
      summary: 'Describe one endpoint.',
      since: ['12.0.0'],
      params: [tech, resource],
      responseClass: 'Endpoint',
      errors: endpointErrors,
    },
    {
      nickname: 'sendMessageToEndpoint',
      method: 'PUT',
      path: '/endpoints/{tech}/{resource}/sendMessage',
      summary: 'Send an out-of-call text message to this endpoint.',
      since: ['13.0.0'],
      params: [
        tech,
        resource,
        sender,
        messageBody,
        variables,
      ],
      responseClass: 'void',
      errors: endpointErrors,
      successStatus: 202,
    },
    {
      nickname: 'referToEndpoint',
      method: 'POST',
      path: '/endpoints/{tech}/{resource}/refer',
      summary: 'Ask this endpoint to transfer itself elsewhere with a REFER.',
      since: ['18.20.0', '20.5.0'],
      params: [
        tech,
        resource,
        sender,
        { name: 'refer_to', description: 'URI the endpoint is asked to contact.', in: 'query', dataType: 'string', required: true },
        toSelf,
        variables,
      ],
      responseClass: 'void',
      errors: endpointErrors,
      successStatus: 202,
    },
  ],
} as const satisfies ResourceDecl;
