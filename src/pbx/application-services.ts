// What dialplan applications may use from the core.
import type { Logger } from 'pino';
import type { Channel } from '../core/channels/channel.ts';
import type { Channels } from '../core/channels/channels.ts';
import type { Dialplan } from '../dialplan/dialplan.ts';
import type { GlobalVariables } from '../core/global-vars.ts';
import type { MessageRouter } from '../core/messages.ts';
import type { Playbacks } from '../core/playback/playbacks.ts';
import type { Recordings } from '../core/recordings/recordings.ts';
import type { Stasis } from '../core/stasis.ts';
import type { AstDb } from '../core/astdb.ts';
import type { ChannelBroadcasts } from '../core/broadcasts.ts';
import type { CallRecords } from '../core/cdr/call-records.ts';
import type { BasicBridge } from '../core/bridges/basic-bridge.ts';
import type { BridgeFeatures } from '../core/bridge-features.ts';
import type { ParkingLots } from '../core/parking/parking-lots.ts';

export interface PbxServices {
  readonly channels: Channels;
  readonly stasis: Stasis;
  readonly log: Logger;
  readonly globals: GlobalVariables;
  dialplan(): Dialplan;
  /** Out-of-call messages (MessageSend()). */
  readonly messages?: MessageRouter;
  /** Media played to channels (Playback()). */
  readonly playbacks?: Playbacks;
  /** Recording to files (Record()). */
  readonly recordings?: Recordings;
  /** The astdb while the core runs (DBdel, DBdeltree); undefined before start and after stop. */
  astdb?(): AstDb | undefined;
  /** Channel broadcast (StasisBroadcast()); undefined while res_stasis_broadcast.so is not running. */
  readonly broadcasts?: ChannelBroadcasts;
  /** The state of a device (`PJSIP/alice`, `Local/100@default`) as ChanIsAvail sees it: AST_DEVICE_* names (the technology's word first). */
  deviceState?(device: string): string | undefined;
  /**
   * Runs a subroutine (Gosub's `[[context,]exten,]priority[(args)]`) on a channel that is not in
   * the dialplan, until its Return (Dial's b() pre-dial handler); false when it could not start.
   */
  runSubroutine?(channel: Channel, target: string): Promise<boolean>;
  /**
   * Runs a subroutine on a channel from within the application its dialplan run is running
   * (Dial's B() pre-dial handler on the caller), until its Return; the location is put back.
   */
  runSubroutineWithin?(channel: Channel, target: string): Promise<boolean>;
  /** Runs the dialplan on a channel none runs yet, from its location (Dial's F and G send the callee there). */
  startDialplan?(channel: Channel): void;
  /**
   * Runs the `h` extension of `context` on a channel no dialplan runs when it hangs up (Dial's e on
   * the callee, as Asterisk's after-bridge h exten); nothing when the context has none.
   */
  hangupExtensionIn?(channel: Channel, context: string): void;
  /** Basic bridges, for the answered calls of Dial() (ARI shows them); none: Dial's calls have no bridge. */
  readonly bridges?: { createBasic(): BasicBridge };
  /** The in-call DTMF features of Dial()'s bridge (features.conf; Dial's t, T, h, H); none: digits just cross. */
  readonly features?: Pick<BridgeFeatures, 'forParties'>;
  /** The parking lots (Park(), ParkedCall()); none: this server parks no calls. */
  readonly parking?: ParkingLots;
  /** Call records (ResetCDR, NoCDR, CELGenUserEvent). */
  readonly records?: CallRecords;
  /** Music on hold on a channel (MusicOnHold()); start throws when it is not available. */
  readonly musicOnHold?: {
    start(channel: Channel, mohClass?: string): void;
    stop(channel: Channel): void;
  };
}
