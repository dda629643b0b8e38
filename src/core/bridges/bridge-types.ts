// The shapes a bridge is made of: its type and video mode, the options and state of a member, the
// audio it contributes and hands out, and its working buffers. Kept apart from bridge.ts, which is
// the behaviour; bridge.ts re-exports the public ones.
import { samplesPerFrame, type SampleRate } from '../../media/frame.ts';
import type { EventsWithField } from '../../spec/events.ts';
import type { Channel, FrameListener } from '../channels/channel.ts';
import type { Indication } from '../channels/technology.ts';
import type { MemberAudio } from './member-audio.ts';

export type BridgeType = 'mixing' | 'holding';

/** The events a bridge raises about itself: those whose declaration carries the `bridge` snapshot. */
export type BridgeEventName = EventsWithField<'bridge'>;
export type VideoMode = 'none' | 'talker' | 'single' | 'sfu';

/** Audio the bridge itself contributes each tick (bridge playback, music on hold). */
export interface BridgeAudioSource {
  /** Fills `dst` with the next 20 ms at `rate` (the bridge's mix rate); false when it has nothing this tick. */
  fill(dst: Int16Array, rate: SampleRate): boolean;
}

/** Receives the whole mix each tick (bridge recordings), 20 ms at the bridge's mix rate. */
export type MixListener = (mix: Int16Array, rate: SampleRate) => void;

export interface MemberOptions {
  readonly roles?: readonly string[];
  readonly absorbDtmf?: boolean;
  readonly mute?: boolean;
  readonly inhibitConnectedLineUpdates?: boolean;
}

/** A channel in a bridge, with its options and the listeners the bridge put on it. */
export interface BridgeMember {
  readonly channel: Channel;
  roles: string[];
  absorbDtmf: boolean;
  mute: boolean;
  /** Entered with inhibitConnectedLineUpdates: no connected-line updates while two-party. */
  inhibitColp: boolean;
  /** Its audio to and from the mix, at its native rate and the bridge's. */
  readonly audio: MemberAudio;
  /** What this member put into the sum this tick (to subtract it from its own output). */
  contribution: Int16Array | undefined;
  readonly onFrame: FrameListener;
  readonly onDtmf: (event: { digit: string; durationMs: number }) => void;
  readonly onHangup: () => void;
  /** A hold or unhold from the channel's far end, passed to the other members (mixing bridges). */
  readonly onIndication: (indication: Indication) => void;
  /** Its far end holds the other members: they are told unhold when it leaves. */
  holding: boolean;
  /** A channel that leaves its application (continue, hangup) leaves the bridge first. */
  readonly onStasisLeft: () => void;
}

export interface BridgeInit {
  readonly id: string;
  readonly name: string;
  readonly type: BridgeType;
  readonly videoMode: VideoMode;
  /** Member defaults given at creation (the spec's bridge features). */
  readonly defaultMute?: boolean;
  readonly defaultAbsorbDtmf?: boolean;
  /** Requested type tokens beyond the base type (dtmf_events, proxy_media, ...), kept for reference. */
  readonly flags?: readonly string[];
  /** False: the bridge sets no BRIDGEPEER/BRIDGEPVTCALLID (a bridge nobody sees, e.g. a cluster media leg's). */
  readonly peerVariables?: boolean;
  /** Who made the bridge, as ARI shows it (`bridge_class`, `creator`); default a Stasis application's. */
  readonly maker?: { readonly bridgeClass: string; readonly creator: string };
}

/** The bridge's working buffers, 20 ms at its mix rate; made again only when that rate changes. */
export interface MixBuffers {
  readonly sum: Int32Array;
  /** What one bridge source (playback, music on hold) gives this tick. */
  readonly source: Int16Array;
  /** The whole mix clipped to 16 bits, for the mix listeners. */
  readonly mix: Int16Array;
}

export function mixBuffersAt(rate: SampleRate): MixBuffers {
  const samples = samplesPerFrame(rate);
  return { sum: new Int32Array(samples), source: new Int16Array(samples), mix: new Int16Array(samples) };
}
