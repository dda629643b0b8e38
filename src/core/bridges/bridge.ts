// A bridge: channels whose audio is mixed on every tick of the media clock. In a mixing bridge
// every member hears the sum of the others; in a holding bridge participants hear only
// announcers and the bridge's own sources (music on hold, announcements).
import type { Frame, SampleRate } from '../../media/frame.ts';
import { accumulate, clearSum, mixMinus, saturateSum } from '../../media/mix.ts';
import { MemberAudio } from './member-audio.ts';
import { mixBuffersAt, type BridgeAudioSource, type BridgeEventName, type BridgeInit, type BridgeMember as Member, type BridgeType, type MixBuffers, type MixListener, type MemberOptions, type VideoMode } from './bridge-types.ts';
import { nativeRateOf } from '../channels/native-rate.ts';
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from '../../media/recording-writer.ts';
import { BridgeOffload } from './bridge-offload.ts';
import { BridgePeers } from './bridge-peers.ts';
import { exchangeConnectedLines } from './connected-lines.ts';
import type { CoreEvent, EventScope } from '../applications.ts';
import type { Model } from '../../spec/index.ts';
import type { RaiseArgs, RaisedFields } from '../../spec/events.ts';
import type { Channel } from '../channels/channel.ts';
import type { Indication } from '../channels/technology.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { TypedEmitter } from '../../util/typed-emitter.ts';
import type { Endable } from '../../util/lifecycle.ts';

export type { BridgeAudioSource, BridgeEventName, BridgeInit, BridgeType, MemberOptions, MixListener, VideoMode } from './bridge-types.ts';

export interface BridgeEnvironment {
  publish(event: CoreEvent, scope: EventScope): void;
  /** Keeps a channel's controlling application subscribed to the bridge while the channel is in it. */
  memberJoined(bridge: Bridge, channel: Channel): void;
  memberLeft(bridge: Bridge, channel: Channel): void;
  destroyed(bridge: Bridge): void;
  /** What holding-bridge participants hear while nothing else plays (music on hold). */
  idleSource?(): BridgeAudioSource | undefined;
  /** A listener failed while the bridge was notifying; the bridge goes on. */
  reportError?(error: unknown, bridge: Bridge, during: string): void;
}

export interface BridgeInternalEvents {
  /**
   * The bridge is gone (after BridgeDestroyed): what plays into it or records it ends now. The
   * one announcement of a bridge's end; nothing polls `destroyed` on the clock.
   */
  destroyed: Bridge;
  /** Its members' technologies started or stopped mixing its audio (a recording of the bridge may be written there). */
  'technology-mix': Bridge;
}

/** The rate of an empty bridge, and the least any bridge mixes at. */
const LOWEST_MIX_RATE: SampleRate = 8000;
/**
 * How often (in ticks, 0.5 s) the members' formats are looked at again between joins and leaves:
 * a format changes mid-call only on a renegotiation, and meanwhile frames at any rate are still
 * converted where they arrive, so a steady bridge need not ask every member on every tick.
 */
const FORMAT_CHECK_TICKS = 25;

export class Bridge extends TypedEmitter<BridgeInternalEvents> implements Endable {
  readonly id: string;
  readonly name: string;
  /** Who made it, as ARI shows it (a Stasis application unless a core module says otherwise). */
  readonly #maker: { readonly bridgeClass: string; readonly creator: string };
  readonly type: BridgeType;
  readonly creationtime = new Date();
  readonly flags: readonly string[];
  readonly defaultMute: boolean;
  readonly defaultAbsorbDtmf: boolean;
  videoMode: VideoMode;
  videoSourceId: string | undefined;
  readonly variables = new Map<string, string>();
  /** Variables set with report_events: only these appear in `bridgevars`, as in Asterisk. */
  private readonly reportedVariables = new Set<string>();
  /** The music-on-hold class playing into the bridge, if any. */
  mohClass: string | undefined;

  private readonly env: BridgeEnvironment;
  private readonly members = new Map<string, Member>();
  private sources: BridgeAudioSource[] = [];
  private idleSource: BridgeAudioSource | undefined;
  private mixListeners: MixListener[] = [];
  /** The highest native rate of the members (Asterisk's softmix internal_sample_rate "auto"). */
  private mixRate: SampleRate = LOWEST_MIX_RATE;
  private buffers = mixBuffersAt(LOWEST_MIX_RATE);
  /** Ticks until the members' native rates are looked at again; 0 after a join or leave. */
  private ticksToFormatCheck = 0;
  private destroyedAlready = false;
  /** Members' technologies relaying or mixing their audio themselves while nothing else here needs it (bridge-offload.ts). */
  private readonly offload = new BridgeOffload(() => this.mixRate, (byMix) => this.blocksRelay(byMix), () => this.emit('technology-mix', this));
  /** Mix listeners that are recordings a technology mix can write itself (addMixListener's `recording`). */
  private recordingListeners = 0;
  /** BRIDGEPEER/BRIDGEPVTCALLID on the members, in Asterisk's member order (bridge-peers.ts). */
  private readonly peers: BridgePeers;
  /** The technology a dissolving bridge keeps showing as its members leave (Asterisk does not reconfigure it). */
  private dissolvingTechnology: string | undefined;
  /**
   * The technology a member's ChannelEnteredBridge/ChannelLeftBridge shows: the one from before
   * its join or leave, as Asterisk's smart bridge switches technology only after publishing them.
   */
  private membershipTechnology: string | undefined;

  constructor(env: BridgeEnvironment, init: BridgeInit) {
    super();
    const reportError = env.reportError;
    if (reportError) this.setListenerErrorReporter((error, event) => reportError(error, this, `'${event}' listener`));
    this.env = env;
    this.id = init.id;
    this.name = init.name;
    this.#maker = init.maker ?? { bridgeClass: 'stasis', creator: 'Stasis' };
    this.type = init.type;
    this.videoMode = init.videoMode;
    this.flags = init.flags ?? [];
    this.defaultMute = init.defaultMute ?? false;
    this.defaultAbsorbDtmf = init.defaultAbsorbDtmf ?? false;
    this.peers = new BridgePeers(this.type === 'holding', init.peerVariables === false);
  }

  /**
   * The technology Asterisk would be using now: two parties share a simple bridge, more (or a
   * video SFU) need the mixer, holding bridges have their own.
   */
  technology(): string {
    if (this.membershipTechnology) return this.membershipTechnology;
    if (this.dissolvingTechnology) return this.dissolvingTechnology;
    if (this.type === 'holding') return 'holding_bridge';
    return this.videoMode === 'sfu' || this.members.size > 2 ? 'softmix' : 'simple_bridge';
  }

  get destroyed(): boolean {
    return this.destroyedAlready;
  }

  channelIds(): string[] {
    return [...this.members.keys()];
  }

  /** The members themselves, not their ids: a stand-in for another cluster member's channel is in no table. */
  *memberChannels(): Generator<Channel, void, undefined> {
    for (const member of this.members.values()) yield member.channel;
  }

  has(channel: Channel): boolean {
    return this.members.has(channel.id);
  }

  get size(): number {
    return this.members.size;
  }

  /**
   * The bridge as the REST answers show it: every bridge variable in `bridgevars` (events carry
   * eventSnapshot(), with only the reported ones).
   */
  snapshot(): Model<'Bridge'> {
    const snapshot = this.snapshotWithout();
    if (this.variables.size > 0) snapshot.bridgevars = Object.fromEntries(this.variables);
    return snapshot;
  }

  /** The bridge as events show it: `bridgevars` has only the variables set with report_events, as Asterisk's. */
  eventSnapshot(): Model<'Bridge'> {
    const snapshot = this.snapshotWithout();
    const reported = [...this.reportedVariables].filter((name) => this.variables.has(name));
    // fromEntries defines own properties, so a variable named `__proto__` is a key like any other.
    if (reported.length > 0) snapshot.bridgevars = Object.fromEntries(reported.map((name) => [name, this.variables.get(name)!]));
    return snapshot;
  }

  private snapshotWithout(): Model<'Bridge'> {
    const snapshot: Model<'Bridge'> = {
      id: this.id,
      technology: this.technology(),
      bridge_type: this.type,
      bridge_class: this.#maker.bridgeClass,
      creator: this.#maker.creator,
      name: this.name,
      channels: this.channelIds(),
      video_mode: this.videoMode,
      creationtime: formatAriDate(this.creationtime),
    };
    if (this.videoMode !== 'none' && this.videoSourceId) snapshot.video_source_id = this.videoSourceId;
    return snapshot;
  }

  /**
   * Sets (or, without a value, clears) a bridge variable. As Asterisk's bridge variables, each
   * write decides whether the variable is reported in events: a write without report_events
   * takes it out of the events' `bridgevars` again, and so does clearing it.
   */
  setVariable(name: string, value: string | undefined, reportEvents: boolean): void {
    if (value === undefined) {
      this.variables.delete(name);
      this.reportedVariables.delete(name);
      return;
    }
    this.variables.set(name, value);
    if (reportEvents) this.reportedVariables.add(name);
    else this.reportedVariables.delete(name);
  }

  /**
   * Raises a bridge event carrying this bridge's snapshot; name and fields are checked against the
   * declarations. Protected: only the bridge raises its own events (its table announces its creation).
   */
  protected raise<N extends BridgeEventName>(type: N, ...[fields, channelIds = []]: RaiseArgs<RaisedFields<N, 'bridge'>, [channelIds?: readonly string[]]>): void {
    // The declarations type each field, but the compiler cannot follow a generic event name into
    // the event union; the assertion (not via unknown) still rejects fields that fit no event.
    this.env.publish({ type, timestamp: formatAriDate(), bridge: this.eventSnapshot(), ...fields } as CoreEvent, { bridgeIds: [this.id], channelIds });
  }

  // ---- membership -----------------------------------------------------------------------------

  add(channel: Channel, options: MemberOptions = {}): void {
    if (this.destroyedAlready || channel.hangingUp) return;
    const existing = this.members.get(channel.id);
    if (existing) {
      // Entering again clears the roles and takes the new ones, as Asterisk does.
      existing.roles = [...(options.roles ?? [])];
      existing.absorbDtmf = options.absorbDtmf ?? this.defaultAbsorbDtmf;
      existing.mute = options.mute ?? this.defaultMute;
      existing.inhibitColp = options.inhibitConnectedLineUpdates ?? false;
      this.offload.update();
      return;
    }
    const technologyBefore = this.technology();
    const audio = new MemberAudio(nativeRateOf(channel), this.mixRate);
    const member: Member = {
      channel,
      roles: [...(options.roles ?? [])],
      absorbDtmf: options.absorbDtmf ?? this.defaultAbsorbDtmf,
      mute: options.mute ?? this.defaultMute,
      inhibitColp: options.inhibitConnectedLineUpdates ?? false,
      audio,
      contribution: undefined,
      onFrame: (frame: Frame) => audio.put(frame),
      onDtmf: ({ digit, durationMs }) => this.passDigit(member, digit, durationMs),
      onHangup: () => this.remove(channel),
      onIndication: (indication) => this.passHold(member, indication),
      holding: false,
      onStasisLeft: () => this.remove(channel),
    };
    this.members.set(channel.id, member);
    this.ticksToFormatCheck = 0;
    channel.bridgeId = this.id;
    channel.addFrameListener(member.onFrame);
    channel.on('dtmf', member.onDtmf);
    channel.once('hangup', member.onHangup);
    channel.once('stasis-leaving', member.onStasisLeft);
    channel.on('remote-indication', member.onIndication);
    this.env.memberJoined(this, channel);
    this.publishMembership('ChannelEnteredBridge', channel, technologyBefore);
    this.peers.joined(channel, this.technology() !== technologyBefore);
    if (this.members.size === 2) exchangeConnectedLines(this.members.values());
    this.settleRelay();
  }

  /**
   * `replacement` takes `existing`'s seat (its roles and options), as Asterisk's bridge transfer
   * swaps a Local channel in for the transferer: ChannelLeftBridge for it, then ChannelEnteredBridge
   * for the replacement. False when `existing` is no member (nothing changes).
   */
  replace(existing: Channel, replacement: Channel): boolean {
    const member = this.members.get(existing.id);
    if (!member || this.destroyedAlready || replacement.hangingUp) return false;
    const options: MemberOptions = { roles: member.roles, absorbDtmf: member.absorbDtmf, mute: member.mute, inhibitConnectedLineUpdates: member.inhibitColp };
    this.remove(existing);
    this.add(replacement, options);
    return true;
  }

  /** Takes a channel out; without `announce`, silently (a stand-in whose leave its own member announced). */
  remove(channel: Channel, announce = true): boolean {
    const member = this.members.get(channel.id);
    if (!member) return false;
    const technologyBefore = this.technology();
    this.members.delete(channel.id);
    this.ticksToFormatCheck = 0;
    if (channel.bridgeId === this.id) channel.bridgeId = undefined;
    channel.removeFrameListener(member.onFrame);
    channel.off('dtmf', member.onDtmf);
    channel.off('hangup', member.onHangup);
    channel.off('stasis-leaving', member.onStasisLeft);
    channel.off('remote-indication', member.onIndication);
    if (member.holding) this.passHold(member, 'unhold');
    if (this.videoSourceId === channel.id) this.videoSourceId = undefined;
    this.settleRelay();
    if (announce) {
      // A dissolving bridge cleared every member's variables already and tells no one again.
      if (!this.dissolvingTechnology) this.peers.leaving(channel);
      this.publishMembership('ChannelLeftBridge', channel, technologyBefore);
      if (!this.dissolvingTechnology) this.peers.left();
      // Back to two parties (a third left): Asterisk reconfigures the bridge as a 1:1 one again and
      // exchanges the connected lines once more — the one that joined last learns who it now talks to.
      if (!this.dissolvingTechnology && this.type !== 'holding' && this.members.size === 2) exchangeConnectedLines(this.members.values());
    } else {
      this.peers.forget(channel);
    }
    this.env.memberLeft(this, channel);
    return true;
  }

  /** Whether the members' technologies relay the audio between them now (no mixing here). */
  get relayed(): boolean {
    return this.offload.relayed;
  }

  /** Times the relay started (a recording or playback stops it; it starts again after). */
  get relayEngagements(): number {
    return this.offload.relayEngagements;
  }

  /** Whether three or more members' technologies mix the audio themselves now (a media worker; no mixing here). */
  get mixedByTechnology(): boolean {
    return this.offload.mixedByTechnology;
  }

  /** Times the technologies started mixing (a recording stops it; it starts again after). */
  get technologyMixEngagements(): number {
    return this.offload.mixEngagements;
  }

  /**
   * Two members of a mixing bridge may be relayed by their technologies, three and more mixed by
   * them, as long as the bridge has nothing of its own to add or take (blocksRelay).
   */
  private settleRelay(): void {
    this.offload.settle(this.destroyedAlready ? [] : [...this.members.values()], this.type === 'mixing');
  }

  /** The bridge needs the audio itself: a bridge playback or music on hold, a recording (but one a technology mix writes: `byMix`), a muted member, an SFU. */
  private blocksRelay(byMix = false): boolean {
    const listeners = this.mixListeners.length - (byMix ? Math.min(1, this.recordingListeners) : 0);
    if (this.sources.length > 0 || listeners > 0 || this.videoMode === 'sfu') return true;
    for (const member of this.members.values()) if (member.mute) return true;
    return false;
  }

  roles(channel: Channel): readonly string[] {
    return this.members.get(channel.id)?.roles ?? [];
  }

  private publishMembership(type: 'ChannelEnteredBridge' | 'ChannelLeftBridge', channel: Channel, technology: string): void {
    this.membershipTechnology = technology;
    try {
      this.raise(type, { channel: channel.snapshot() }, [channel.id]);
    } finally {
      this.membershipTechnology = undefined;
    }
  }

  /**
   * A phone that holds (a SIP re-INVITE sendonly) holds the others in a mixing bridge, as
   * Asterisk's bridges pass the hold frame on: their technology plays them music on hold (or
   * passes the hold to their phone). Holding-bridge participants hear no one anyway.
   */
  private passHold(from: Member, indication: Indication): void {
    if ((indication !== 'hold' && indication !== 'unhold') || this.type !== 'mixing') return;
    const hold = indication === 'hold';
    if (from.holding === hold) return;
    from.holding = hold;
    for (const member of this.members.values()) {
      if (member !== from && !member.channel.hangingUp) member.channel.indicate(indication);
    }
  }

  private passDigit(from: Member, digit: string, durationMs: number): void {
    if (from.absorbDtmf) return;
    for (const member of this.members.values()) {
      if (member !== from && !member.channel.hangingUp) member.channel.driver.sendDigit(digit, durationMs);
    }
  }

  // ---- sources and taps -----------------------------------------------------------------------

  addSource(source: BridgeAudioSource): void {
    this.sources = [...this.sources, source];
    this.offload.update();
  }

  removeSource(source: BridgeAudioSource): void {
    this.sources = this.sources.filter((entry) => entry !== source);
    this.offload.update();
  }

  /** `recording`: a recording of the bridge, which the members' technologies can write from their own mix (recordMix). */
  addMixListener(listener: MixListener, recording = false): void {
    this.mixListeners = [...this.mixListeners, listener];
    if (recording) this.recordingListeners += 1;
    this.offload.update();
  }

  removeMixListener(listener: MixListener, recording = false): void {
    const before = this.mixListeners.length;
    this.mixListeners = this.mixListeners.filter((entry) => entry !== listener);
    if (recording && this.mixListeners.length < before) this.recordingListeners -= 1;
    this.offload.update();
  }

  /** Has the technologies mixing the bridge write a recording of the mix; undefined when none mixes or they cannot. */
  recordMix(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined {
    return this.offload.recordMix(handover, ended);
  }

  // ---- mixing ---------------------------------------------------------------------------------

  /** One media clock tick: mix and deliver 20 ms to every member. */
  tick(): void {
    if (this.type === 'holding') this.mixHolding();
    else this.mixAll();
    // After the mix, when every member's frame has been taken: the new paths are primed with
    // frames already heard, and the next frames arrive into them.
    if (--this.ticksToFormatCheck <= 0) this.tune();
  }

  /** The rate the bridge mixes at now: the highest native rate of its members. */
  get rate(): SampleRate {
    return this.mixRate;
  }

  /**
   * Follows the members' native rates: a member joining or leaving, or changing format, may
   * change the mix rate; every member's path is retuned to it. A compare per member on a steady
   * tick; buffers are made again only when a rate changes.
   */
  private tune(): void {
    this.ticksToFormatCheck = FORMAT_CHECK_TICKS;
    let highest = LOWEST_MIX_RATE;
    let steady = true;
    for (const member of this.members.values()) {
      const native = nativeRateOf(member.channel);
      if (native > highest) highest = native;
      if (member.audio.nativeRate !== native) steady = false;
    }
    if (steady && highest === this.mixRate) return;
    if (highest !== this.mixRate) {
      this.mixRate = highest;
      this.buffers = mixBuffersAt(highest);
      this.offload.retune();
    }
    for (const member of this.members.values()) member.audio.retune(highest, nativeRateOf(member.channel));
  }

  private mixAll(): void {
    // The members' technologies pass or mix the audio themselves: nothing to mix, and a silent frame
    // written here would take the place of what they pass. A frame said just before they began
    // is let go, so that the mixer does not play it when it takes over again.
    if (this.offload.engaged) {
      for (const member of this.members.values()) member.audio.take();
      return;
    }
    if (this.members.size === 2 && this.sources.length === 0 && this.mixListeners.length === 0) {
      this.passTwoParty();
      return;
    }
    const sum = this.buffers.sum;
    clearSum(sum);
    for (const member of this.members.values()) {
      const frame = member.audio.take();
      member.contribution = frame && !member.mute ? frame : undefined;
      if (member.contribution) accumulate(sum, member.contribution);
    }
    this.addSources(sum);
    this.publishMix(sum);
    for (const member of this.members.values()) {
      mixMinus(sum, member.contribution, member.audio.output);
      this.deliver(member, member.audio.output);
    }
  }

  /**
   * Two parties and nothing else to hear (no bridge playback, music on hold or recording): "the
   * sum minus my own" is exactly the other party's frame, or silence when it sent none or is
   * muted, so the frame passes through without building a sum, as Asterisk's two-party bridging
   * does. Same result as the mix at a fraction of the cost (the sum, clip and subtraction of 2 ×
   * 160 samples are most of a bridge's work per tick). Allocation-free: the other party's slot
   * is delivered as it is (frames are the owner's to reuse; listeners copy what they keep).
   */
  private passTwoParty(): void {
    const members = this.members.values();
    const a = members.next().value as Member;
    const b = members.next().value as Member;
    const fromA = a.audio.take();
    const fromB = b.audio.take();
    a.contribution = fromA && !a.mute ? fromA : undefined;
    b.contribution = fromB && !b.mute ? fromB : undefined;
    if (b.contribution) this.deliver(a, b.contribution);
    else this.deliverSilence(a);
    if (a.contribution) this.deliver(b, a.contribution);
    else this.deliverSilence(b);
  }

  private deliverSilence(member: Member): void {
    if (!member.channel.generatorActive) member.channel.write(member.audio.silentFrame());
  }

  /**
   * Participants hear announcers and the bridge's sources; what participants say is not passed on.
   * With no announcer and no source of its own, participants hear the idle audio (music on hold),
   * as Asterisk's holding bridge does by default.
   */
  private mixHolding(): void {
    const sum = this.buffers.sum;
    clearSum(sum);
    let announcers = 0;
    for (const member of this.members.values()) {
      const frame = member.audio.take();
      const announcer = member.roles.includes('announcer');
      if (announcer) announcers++;
      member.contribution = frame && !member.mute && announcer ? frame : undefined;
      if (member.contribution) accumulate(sum, member.contribution);
    }
    this.addSources(sum);
    if (announcers === 0 && this.sources.length === 0 && this.members.size > 0) this.addIdleAudio(sum);
    this.publishMix(sum);
    for (const member of this.members.values()) {
      if (member.roles.includes('announcer')) continue;
      saturateSum(sum, member.audio.output);
      this.deliver(member, member.audio.output);
    }
  }

  private addIdleAudio(sum: Int32Array): void {
    this.idleSource ??= this.env.idleSource?.();
    const buffer = this.buffers.source;
    if (this.idleSource?.fill(buffer, this.mixRate)) accumulate(sum, buffer);
  }

  private addSources(sum: Int32Array): void {
    const sources = this.sources;
    const buffer = this.buffers.source;
    for (let i = 0; i < sources.length; i++) {
      if (sources[i].fill(buffer, this.mixRate)) accumulate(sum, buffer);
    }
  }

  private publishMix(sum: Int32Array): void {
    const listeners = this.mixListeners;
    if (listeners.length === 0) return;
    const mix = this.buffers.mix;
    saturateSum(sum, mix);
    for (let i = 0; i < listeners.length; i++) listeners[i](mix, this.mixRate);
  }

  /** `samples`: 20 ms at the mix rate, brought to the member's native rate on its way. */
  private deliver(member: Member, samples: Int16Array): void {
    // A channel playing media of its own (channel playback, its own music on hold) hears that instead.
    if (member.channel.generatorActive) return;
    member.channel.write(member.audio.heardFrame(samples));
  }

  // ---- video ----------------------------------------------------------------------------------

  setVideoSource(channel: Channel): void {
    const old = this.videoSourceId;
    this.videoMode = 'single';
    this.videoSourceId = channel.id;
    this.raise('BridgeVideoSourceChanged', old ? { old_video_source_id: old } : {});
  }

  clearVideoSource(): void {
    const old = this.videoSourceId;
    this.videoSourceId = undefined;
    this.videoMode = this.type === 'holding' ? 'none' : 'talker';
    this.raise('BridgeVideoSourceChanged', old ? { old_video_source_id: old } : {});
  }

  // ---- end ------------------------------------------------------------------------------------

  /** Ends the bridge (the lifecycle verb, see util/lifecycle.ts): ARI's bridge destroy. */
  end(): void {
    this.destroy();
  }

  destroy(): void {
    if (this.destroyedAlready) return;
    // As Asterisk's bridge_dissolve: every member loses BRIDGEPEER first, then each leaves (in its
    // member order), the technology unchanged to the end.
    this.dissolvingTechnology = this.technology();
    for (const channel of this.peers.dissolve()) this.remove(channel);
    for (const member of [...this.members.values()]) this.remove(member.channel);
    this.destroyedAlready = true;
    this.offload.stop();
    this.sources = [];
    this.mixListeners = [];
    this.recordingListeners = 0;
    this.raise('BridgeDestroyed');
    this.env.destroyed(this);
    this.emit('destroyed', this);
  }
}
