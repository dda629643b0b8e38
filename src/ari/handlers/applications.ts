// Applications: listing, subscriptions to event sources, event filters.
import { defineHandlers } from '../handler.ts';

export const applicationsHandlers = defineHandlers('applications', {
  list: (_params, { core }) => core.applications.list().map((app) => app.snapshot()),
  get: ({ applicationName }, { core }) => core.applications.require(applicationName).snapshot(),
  subscribe: ({ applicationName, eventSource }, { core }) => core.applications.subscribe(applicationName, eventSource).snapshot(),
  unsubscribe: ({ applicationName, eventSource }, { core }) => core.applications.unsubscribe(applicationName, eventSource).snapshot(),
  filter: ({ applicationName, filter }, { core }) => core.applications.setFilter(applicationName, filter).snapshot(),
});
