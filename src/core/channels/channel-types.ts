// The shapes around a channel: its state names, caller id and dialplan position, how it is made, and the internal events its owner and consumers listen to.
import type { EventsWithField } from '../../spec/events.ts';
import type { Indication } from './driver.ts';

export type ChannelState = 'Down' | 'Rsrvd' | 'OffHook' | 'Dialing' | 'Ring' | 'Ringing' | 'Up' | 'Busy';

export interface CallerId {
  name: string;
  number: string;
}

export interface DialplanLocation {
  context: string;
  exten: string;
  priority: number;
  appName: string;
  appData: string;
}

export interface ChannelInit {
  readonly id: string;
  readonly name: string;
  readonly technology: string;
  /** The endpoint resource this channel belongs to, when it has one (`alice` of `SIP/alice`). */
  readonly endpointResource?: string;
  readonly direction: 'inbound' | 'outbound';
  readonly state: ChannelState;
  readonly linkedId?: string;
  readonly language?: string;
  readonly caller?: CallerId;
  /** The caller's presentation (presentation.ts); allowed when not given. */
  readonly callerPresentation?: number;
  readonly location?: Partial<DialplanLocation>;
  readonly protocolId?: string;
  /** The account the channel's calls are billed to (ARI's `accountcode`, CDR's), as its technology gives it. */
  readonly accountcode?: string;
  /** CALLERID(tag): a label the caller party carries that no protocol sends (chan_pjsip's callerid_tag). */
  readonly callerTag?: string;
}

export type AudioHookDirection = 'read' | 'write';

export interface ChannelInternalEvents {
  state: ChannelState;
  dtmf: { digit: string; durationMs: number };
  /** The channel is hanging up; listeners release what they hold on it (bridges, media, waits). */
  hangup: {
    cause: number;
    /**
     * Queued by another channel's hang-up (a Local partner's): the thread owning this channel in
     * Asterisk notices it only later, after that partner is destroyed, so what the channel does
     * itself as it notices (leaving its Stasis application) waits for `hangup-noticed`.
     */
    noticedLater?: boolean;
  };
  /**
   * The thread owning the channel in Asterisk would notice its hang-up now: the channel is destroyed
   * next, or its hang-up logic (handlers, `h`) runs first and it is destroyed after that.
   */
  'hangup-noticed': undefined;
  /** The channel is being destroyed: just before its ChannelDestroyed. */
  destroying: undefined;
  /**
   * The channel is hanging up, before any `hangup` listener runs: what plays to it stops first, so
   * its playbacks finish before it leaves its bridge and application (as Asterisk's do).
   */
  'media-stopping': undefined;
  /** The channel is about to leave Stasis control (before StasisEnd); bridges release it. */
  'stasis-leaving': { app: string };
  /** The channel left Stasis control (for any reason). */
  'stasis-left': { app: string };
  answered: undefined;
  /**
   * Told to the far end (Dial()'s ringing to its caller, Busy(), an answer…), before the technology
   * acts on it: a SIP transfer's progress NOTIFYs follow what its transferee is told (refer-progress.ts).
   */
  indicated: Indication;
  /** The channel entered a bridge (its bridgeId was set by the bridging core). */
  'bridge-entered': { bridgeId: string };
  /** The far end indicated a condition (ringing, busy, ...). */
  'remote-indication': Indication;
  /** The far end said the call was forwarded (a SIP 181): the channel's redirecting party is already the new one. */
  'remote-redirecting': undefined;
  /** Text received from the far end (in-call messages). */
  text: string;
  /** The dialplan executor moved the channel (TIMEOUT(absolute) to `T`): a waiting application stops. */
  'pbx-interrupt': undefined;
  /** A frame listener or an audio hook was added: media the technology loops back (Echo()) must reach the channel again. */
  'media-tapped': undefined;
  /**
   * Something that takes or changes the channel's audio came or went (a listener, a hook, a mute, a
   * generator): an audio relay between two technologies looks again whether it may run (audio-relay.ts).
   */
  'media-path': undefined;
}

/** The events a channel raises about itself: those whose declaration carries the `channel` snapshot. */
export type ChannelEventName = EventsWithField<'channel'>;

export interface StasisControl {
  app: string;
  args: string[];
}

/** A caller id and a connected line a channel takes together (either may be left as it is). */
export interface ChannelIdentity {
  readonly caller?: CallerId;
  readonly connected?: CallerId;
}

/** Which parts of a channel's identity a change touched: each is one ARI event. */
export interface IdentityChange {
  readonly caller: boolean;
  readonly connected: boolean;
}
