// What dialplan applications may use from the core.
import type { Logger } from 'pino';
import type { Channels } from '../channels/channels.ts';
import type { Dialplan } from '../dialplan/dialplan.ts';
import type { GlobalVariables } from '../global-vars.ts';
import type { Stasis } from '../stasis.ts';

export interface PbxServices {
  readonly channels: Channels;
  readonly stasis: Stasis;
  readonly log: Logger;
  readonly globals: GlobalVariables;
  dialplan(): Dialplan;
}
