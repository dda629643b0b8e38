// The registry of every ARI declaration: resources in resources.json order, and all models.
import type { ModelType, ResourceDecl } from './types.ts';
import { MODELS } from './models/index.ts';
import { asterisk } from './resources/asterisk.ts';
import { endpoints } from './resources/endpoints.ts';
import { channels } from './resources/channels.ts';
import { bridges } from './resources/bridges.ts';
import { recordings } from './resources/recordings.ts';
import { sounds } from './resources/sounds.ts';
import { playbacks } from './resources/playbacks.ts';
import { deviceStates } from './resources/deviceStates.ts';
import { mailboxes } from './resources/mailboxes.ts';
import { events } from './resources/events.ts';
import { applications } from './resources/applications.ts';

export { MODELS };
export type Models = typeof MODELS;
export type ModelName = keyof Models;
export type Model<N extends ModelName> = ModelType<Models, N>;

export const DECLARED_RESOURCES = {
  asterisk,
  endpoints,
  channels,
  bridges,
  recordings,
  sounds,
  playbacks,
  deviceStates,
  mailboxes,
  events,
  applications,
} as const;

export type ResourceName = keyof typeof DECLARED_RESOURCES;

export const RESOURCE_LIST: readonly ResourceDecl[] = Object.values(DECLARED_RESOURCES);

export type EventName = Models['Event']['subTypes'][number];
/** An ARI event of type N, with `type` narrowed to the literal so a switch on it discriminates. */
export type EventOf<N extends EventName> = N extends EventName ? Omit<ModelType<Models, N>, 'type'> & { type: N } : never;
