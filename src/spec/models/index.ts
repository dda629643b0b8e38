// Every ARI model, merged from the per-resource files. The `as const` literal types are what
// ModelType (../types.ts) derives the TypeScript type of each model from.
import type { ModelDecl } from '../types.ts';
import { asteriskModels } from './asterisk.ts';
import { endpointModels } from './endpoints.ts';
import { channelModels } from './channels.ts';
import { bridgeModels } from './bridges.ts';
import { recordingModels } from './recordings.ts';
import { soundModels } from './sounds.ts';
import { playbackModels } from './playbacks.ts';
import { deviceStateModels } from './deviceStates.ts';
import { mailboxModels } from './mailboxes.ts';
import { applicationModels } from './applications.ts';
import { eventModels } from './events.ts';

export const MODELS = {
  ...asteriskModels,
  ...endpointModels,
  ...channelModels,
  ...bridgeModels,
  ...recordingModels,
  ...soundModels,
  ...playbackModels,
  ...deviceStateModels,
  ...mailboxModels,
  ...applicationModels,
  ...eventModels,
} as const satisfies Record<string, ModelDecl>;

export {
  asteriskModels,
  endpointModels,
  channelModels,
  bridgeModels,
  recordingModels,
  soundModels,
  playbackModels,
  deviceStateModels,
  mailboxModels,
  applicationModels,
  eventModels,
};
