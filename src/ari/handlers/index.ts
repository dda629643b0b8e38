// Every resource's handler table. An operation with no handler answers 501 (see not-implemented.ts).
import type { HandlerTable } from '../handler.ts';
import { applicationsHandlers } from './applications.ts';
import { asteriskHandlers } from './asterisk.ts';
import { bridgesHandlers } from './bridges.ts';
import { channelMediaHandlers } from './channel-media.ts';
import { channelsHandlers } from './channels.ts';
import { deviceStatesHandlers } from './deviceStates.ts';
import { endpointsHandlers } from './endpoints.ts';
import { eventsHandlers } from './events.ts';
import { externalMediaHandlers } from './external-media.ts';
import { mailboxesHandlers } from './mailboxes.ts';
import { bridgePlayHandlers, channelPlayHandlers, playbacksHandlers } from './playbacks.ts';
import { bridgeRecordHandlers, channelRecordHandlers, recordingsHandlers } from './recordings.ts';
import { soundsHandlers } from './sounds.ts';

export const HANDLER_TABLES: readonly HandlerTable[] = [asteriskHandlers, applicationsHandlers, eventsHandlers, deviceStatesHandlers, mailboxesHandlers, channelsHandlers, channelMediaHandlers, externalMediaHandlers, bridgesHandlers, endpointsHandlers, playbacksHandlers, channelPlayHandlers, bridgePlayHandlers, soundsHandlers, recordingsHandlers, channelRecordHandlers, bridgeRecordHandlers];
