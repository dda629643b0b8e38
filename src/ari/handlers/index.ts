// Every resource's handler table. An operation with no handler answers 501 (see not-implemented.ts).
import type { HandlerTable } from '../handler.ts';
import { applicationsHandlers } from './applications.ts';
import { asteriskHandlers } from './asterisk.ts';
import { channelsHandlers } from './channels.ts';
import { deviceStatesHandlers } from './deviceStates.ts';
import { endpointsHandlers } from './endpoints.ts';
import { eventsHandlers } from './events.ts';
import { mailboxesHandlers } from './mailboxes.ts';

export const HANDLER_TABLES: readonly HandlerTable[] = [asteriskHandlers, applicationsHandlers, eventsHandlers, deviceStatesHandlers, mailboxesHandlers, channelsHandlers, endpointsHandlers];
