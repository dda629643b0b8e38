// The contract of a dialplan application (Answer, Dial, Stasis, ...).
import type { Channel } from '../core/channels/channel.ts';
import type { ApplicationOutcome } from '../core/channels/technology.ts';
import type { PbxServices } from './application-services.ts';

/**
 * What the executor does after an application returns (declared beside the technologies' seam,
 * whose applications return the same):
 * - `next`: go on to the next priority;
 * - `jump`: the application moved the channel (Goto, continue from Stasis); run from `channel.location` as is;
 * - `stop`: end dialplan execution (Hangup; the channel is hung up by the executor if still up).
 */
export type AppOutcome = ApplicationOutcome;

export interface DialplanApplication {
  readonly name: string;
  /** One line for the list of supported applications (docs and README are generated from it). */
  readonly synopsis?: string;
  /** `args` is the application data after variable substitution, split with splitArgs. */
  execute(channel: Channel, args: string[], services: PbxServices, rawData: string): Promise<AppOutcome> | AppOutcome;
  /**
   * What the load-time dialplan check says of a line's data (options this server does not act
   * on), one sentence each; the check prefixes the line's place.
   */
  checkData?(data: string): string[];
}
