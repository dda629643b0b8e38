// What carries a mixing bridge's audio instead of its own mixer while nothing here needs it: two
// members' technologies relaying it between them (audio-relay.ts), or three and more members'
// technologies mixing it themselves (technology-mix.ts, e.g. SIP calls mixed in a media worker).
// The bridge tells this when its members change, when something of its own (a playback, a
// recording, a mute) comes or goes, and when its mix rate changes; while either runs, the bridge
// mixes nothing. Two members whose relay only a recording of the bridge stops are mixed by their
// technologies instead (a mix of two: each hears the other), so that the recording can be written
// there from the mix (a relay passes packets undecoded: it has no mix to write).
import type { SampleRate } from '../../media/frame.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../../media/recording-writer.ts';
import { AudioRelay } from '../channels/audio-relay.ts';
import type { Channel, FrameListener } from '../channels/channel.ts';
import { TechnologyMix } from '../channels/technology-mix.ts';

/** A member as the offload needs it: its channel and the bridge's frame listener on it. */
export interface OffloadMember {
  readonly channel: Channel;
  readonly onFrame: FrameListener;
}

export class BridgeOffload {
  #relay: AudioRelay | undefined;
  #mix: TechnologyMix | undefined;
  /** Engagements of mixes already replaced (a member came or went). */
  #mixEngagementsBefore = 0;
  /** Engagements of the pair's relays already replaced (a recording made the pair a mix of two meanwhile). */
  #relayEngagementsBefore = 0;
  /** The members now (none while the bridge does not mix). */
  #members: readonly OffloadMember[] = [];

  constructor(
    /** The rate the bridge mixes at now. */
    private readonly rate: () => SampleRate,
    /** Whether the bridge itself needs the audio now; `byMix`: for a technology mix (which can write a recording of the bridge), else for a relay. */
    private readonly blocked: (byMix: boolean) => boolean,
    /** The technologies started or stopped mixing. */
    private readonly mixChanged: () => void = () => {},
  ) {}

  /** The members changed (or the bridge ends: none): two may be relayed, three and more mixed by their technologies. */
  settle(members: readonly OffloadMember[], mixing: boolean): void {
    this.#members = mixing ? members : [];
    // A mix is made for its members: any change makes a new one (the old one's audio is given back first).
    this.#stopMix();
    this.#arrange();
  }

  /** Something the bridge adds or takes came or went: look again. */
  update(): void {
    this.#arrange();
    this.#relay?.update();
    this.#mix?.update();
  }

  /** A relay for two members, a technology mix for three and more — and for two whose relay only a bridge recording stops. */
  #arrange(): void {
    const members = this.#members;
    const count = members.length;
    const mixTwo = count === 2 && this.blocked(false) && !this.blocked(true);
    // The same pair mixed for a while keeps its count; a new pair starts afresh.
    if (count !== 2 || mixTwo) this.#stopRelay(count === 2);
    if (count < 2 || (count === 2 && !mixTwo)) this.#stopMix();
    if (count === 2 && !mixTwo) {
      if (this.#relay) this.#relay.update();
      else this.#relay = new AudioRelay(members[0].channel, members[1].channel, members[0].onFrame, members[1].onFrame, () => this.blocked(false));
    } else if (count >= 2 && !this.#mix) {
      this.#mix = new TechnologyMix(members.map(({ channel, onFrame }) => ({ channel, own: onFrame })), this.rate, () => this.blocked(true), this.mixChanged);
    }
  }

  /** The bridge's mix rate changed. */
  retune(): void {
    this.#mix?.retune();
  }

  stop(): void {
    this.#stopRelay(false);
    this.#stopMix();
  }

  /** Whether the technologies carry the audio now (the bridge mixes nothing). */
  get engaged(): boolean {
    return this.#relay?.engaged === true || this.#mix?.engaged === true;
  }

  get relayed(): boolean {
    return this.#relay?.engaged === true;
  }

  get relayEngagements(): number {
    return this.#relayEngagementsBefore + (this.#relay?.engagements ?? 0);
  }

  get mixedByTechnology(): boolean {
    return this.#mix?.engaged === true;
  }

  /** Times the technologies started mixing, over every set of members the bridge had. */
  get mixEngagements(): number {
    return this.#mixEngagementsBefore + (this.#mix?.engagements ?? 0);
  }

  /** Has the technologies mixing the bridge write a recording of the mix; undefined when none mixes or they cannot. */
  recordMix(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    return this.#mix?.engaged ? this.#mix.record(handover, ended) : undefined;
  }

  #stopRelay(samePair: boolean): void {
    if (!this.#relay) {
      if (!samePair) this.#relayEngagementsBefore = 0;
      return;
    }
    this.#relayEngagementsBefore = samePair ? this.#relayEngagementsBefore + this.#relay.engagements : 0;
    this.#relay.stop();
    this.#relay = undefined;
  }

  #stopMix(): void {
    if (!this.#mix) return;
    this.#mixEngagementsBefore += this.#mix.engagements;
    this.#mix.stop();
    this.#mix = undefined;
  }
}
