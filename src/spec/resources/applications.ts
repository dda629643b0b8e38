// Applications: registered Stasis applications, their subscriptions and event filters.
import type { ResourceDecl } from '../types.ts';

const applicationName = { name: 'applicationName', description: 'Name of the application.', in: 'path', dataType: 'string', required: true } as const;
const eventSource = {
  name: 'eventSource',
  description: 'Event sources as <type>:<id> (channel:, bridge:, endpoint:, deviceState:); an empty id means all of that type.',
  in: 'query',
  dataType: 'string',
  required: true,
  allowMultiple: true,
} as const;
const noApp = { code: 404, reason: 'Application not found.' } as const;

export const applications = {
  name: 'applications',
  description: 'Stasis application resources',
  models: ['Application'],
  operations: [
    {
      nickname: 'list',
      method: 'GET',
      path: '/applications',
      summary: 'List the applications.',
      since: ['13.0.0'],
      params: [],
      responseClass: 'List[Application]',
      errors: [],
    },
    {
      nickname: 'get',
      method: 'GET',
      path: '/applications/{applicationName}',
      summary: 'Describe one application.',
      since: ['13.0.0'],
      params: [applicationName],
      responseClass: 'Application',
      errors: [noApp],
    },
    {
      nickname: 'subscribe',
      method: 'POST',
      path: '/applications/{applicationName}/subscription',
      summary: 'Subscribe the application to event sources.',
      since: ['13.0.0'],
      params: [applicationName, eventSource],
      responseClass: 'Application',
      errors: [
        { code: 400, reason: 'No event source given.' },
        noApp,
        { code: 422, reason: 'An event source was not found.' },
        // Patchbay: a subscription to every channel, bridge or endpoint beyond ari.max_subscribe_all_apps.
        { code: 503, reason: 'Too many applications receive every event (ari.max_subscribe_all_apps).' },
      ],
    },
    {
      nickname: 'unsubscribe',
      method: 'DELETE',
      path: '/applications/{applicationName}/subscription',
      summary: 'Unsubscribe the application from event sources.',
      since: ['13.0.0'],
      params: [applicationName, eventSource],
      responseClass: 'Application',
      errors: [
        { code: 400, reason: 'No event source given, or unknown source type.' },
        noApp,
        { code: 409, reason: 'The application is not subscribed to the event source.' },
        { code: 422, reason: 'An event source was not found.' },
      ],
    },
    {
      nickname: 'filter',
      method: 'PUT',
      path: '/applications/{applicationName}/eventFilter',
      summary: 'Set which event types the application receives.',
      since: ['13.26.0', '16.3.0'],
      params: [
        applicationName,
        {
          name: 'filter',
          description: 'Body: {"allowed": [{"type": ...}], "disallowed": [{"type": ...}]}; an empty body clears both lists.',
          in: 'body',
          dataType: 'object',
        },
      ],
      responseClass: 'Application',
      errors: [{ code: 400, reason: 'Invalid filter body.' }, noApp],
    },
  ],
} as const satisfies ResourceDecl;
