// A channel: one leg of a call between the server and something that carries audio. It owns its
// state, variables and dialplan position, raises the ARI channel events, carries out its hangup,
// and moves audio frames and DTMF between its technology (the far end) and whatever consumes it
// here. What ARI shows of it (identity, snapshot fields, the kept snapshot) is its base class in
// channel-snapshot.ts; what takes or changes its audio (listeners, hooks, mutes, a generator) the
// base class above that, channel-audio-taps.ts, whose audio path is channel-audio-path.ts; the
// dialplan-run rules dialplan-run.ts; what it needs of its core channel-environment.ts.
import type { Frame } from '../../media/frame.ts';
import type { EventScope } from '../applications.ts';
import type { CoreEvent, RaiseArgs, RaisedFields } from '../../spec/events.ts';
import type { ChannelEnvironmentOf, ChannelFunctionsOf, FunctionWriterOf } from './channel-environment.ts';
import { MAX_CHANNEL_VARIABLES, tooManyChannelVariables } from '../variable-limits.ts';
import { ChannelAudioTaps } from './channel-audio-taps.ts';
import { ChannelDialplanRun, type HangupLogic as RunHangupLogic } from './dialplan-run.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { causeText, CAUSE, SOFT_HANGUP, type SoftHangupFlag } from './causes.ts';
import { combinedPresentation, describePresentation } from './presentation.ts';
import { carryOutHangup, requestedByAnotherHangup } from './hangup-chain.ts';
import type { ChannelDriver, ConnectedLineSource, Indication } from './driver.ts';
import type { Redirecting } from './redirecting.ts';
import type { Endable } from '../../util/lifecycle.ts';
import { NO_GROUPS, type CallGroups } from './call-groups.ts';

export type { AudioHookDirection, CallerId, ChannelEventName, ChannelIdentity, IdentityChange, ChannelInit, ChannelInternalEvents, ChannelState, DialplanLocation, StasisControl } from './channel-types.ts';
import type { ChannelEventName, ChannelIdentity, ChannelInit, ChannelState, DialplanLocation, IdentityChange, StasisControl } from './channel-types.ts';

/** Hang-up logic (the dialplan's `h` extension) a dialplan run gives the channels it owns: see dialplan-run.ts. */
export type HangupLogic = RunHangupLogic<Channel>;

/** A consumer of the audio a channel receives from its far end. Called on the media clock. */
export type FrameListener = (frame: Frame, channel: Channel) => void;

/**
 * Sees a frame on its way and returns the frame to pass on (the same one, or one it owns, e.g.
 * with audio added): `read` hooks run on audio from the far end before the frame listeners,
 * `write` hooks on audio towards the far end before the technology. Snoop spies and whispers
 * with them. On the media path: must not allocate.
 */
export type AudioHook = (frame: Frame, channel: Channel) => Frame;

/** A setter of a dialplan function on a channel (channel-environment.ts). */
export type FunctionWriter = FunctionWriterOf<Channel>;

/** The dialplan functions of the core a channel belongs to, as the kernel sees them (channel-environment.ts). */
export type ChannelFunctions = ChannelFunctionsOf<Channel>;

/** What a channel needs from the rest of the core (channel-environment.ts). */
export type ChannelEnvironment = ChannelEnvironmentOf<Channel>;

export class Channel extends ChannelAudioTaps<Channel> implements Endable {
  /** The Stasis application controlling the channel, if any. */
  stasis: StasisControl | undefined;
  /** Made by POST /channels/create: may be dialed later. */
  dialable = false;
  #bridgeId: string | undefined;
  hangupCause: number | undefined;
  /** The technology's own reason for the hangup (chan_websocket's close code), reported as tech_cause. */
  hangupTechCause: number | undefined;
  /** Where the far end sent the call instead (a SIP 3xx; Asterisk's call_forward): Dial() calls it. */
  callForward = '';
  onHold = false;
  /**
   * The country whose tones the core plays for an indication the technology cannot show
   * (CHANNEL(tonezone), Asterisk's ast_channel_zone); undefined: the default zone.
   */
  toneZone: string | undefined;
  /** Its call and pickup groups (call-groups.ts): a technology sets them from its endpoint, CHANNEL(callgroup) etc. change them. */
  groups: Readonly<CallGroups> = NO_GROUPS;
  /** Whether a dialplan run owns the channel, and when its moves raise ChannelDialplan (dialplan-run.ts). */
  readonly #dialplanRun = new ChannelDialplanRun<Channel>();
  /** The connected line last indicated to the technology (Asterisk's connected_indicated), with its source. */
  #indicatedConnected: { readonly name: string; readonly number: string; readonly source: ConnectedLineSource } | undefined;
  /**
   * The technology side of the channel (its far end). Given when the channel is created, before
   * ChannelCreated is raised, so a channel never exists without one.
   */
  driver: ChannelDriver;
  /** The other half of a pair (Local `;1`/`;2`). */
  peer: Channel | undefined;
  /**
   * How many Local pairs stand between this channel and the call that started it: 0 for a
   * channel no Local channel led to, n for a Local half of the n-th pair, and a channel requested
   * by a channel takes at least its requester's depth. Bounds dialplan loops through Local.
   */
  localDepth = 0;

  private readonly env: ChannelEnvironment;
  /** The channel table this channel belongs to. */
  readonly table: object;
  /** The dialplan functions of the channel's core (read and written through it). */
  readonly functions: ChannelFunctions;
  private destroyedAlready = false;
  /** The hang-up was noticed (hangup-noticed raised), once. */
  private noticedHangup = false;

  /** CALLERID(tag): kept with the caller but shown by no event or protocol, as Asterisk's party id tag. */
  callerTag: string;

  /** `driver` makes the channel's driver; it is called once, before anything is announced. */
  constructor(env: ChannelEnvironment, init: ChannelInit, driver: (channel: Channel) => ChannelDriver) {
    super(env, init);
    this.callerTag = init.callerTag ?? '';
    this.setListenerErrorReporter((error, event) => env.reportError(error, this, `'${event}' listener`));
    this.env = env;
    this.table = env.table;
    this.functions = env.functions;
    this.driver = driver(this);
  }

  /** The bridge the channel is in, if any (set by the bridging core); entering one is told as `bridge-entered`. */
  get bridgeId(): string | undefined {
    return this.#bridgeId;
  }

  set bridgeId(bridgeId: string | undefined) {
    this.#bridgeId = bridgeId;
    if (bridgeId !== undefined) this.emit('bridge-entered', { bridgeId });
  }

  get hangingUp(): boolean {
    return this.hangupCause !== undefined;
  }

  get destroyed(): boolean {
    return this.destroyedAlready;
  }

  get answered(): boolean {
    return this.state === 'Up';
  }

  /** When the channel first became Up (ms since the epoch); undefined while it never was. */
  answeredAt: number | undefined;

  // ---- snapshots and events -------------------------------------------------------------------

  protected readFunction(name: string, args: string): string | undefined {
    return this.functions.read(this, name, args);
  }

  /** Made once: the id and the endpoint never change, and every event the channel raises takes it. */
  #scope: EventScope | undefined;

  /** Who hears the channel's events (shared by them all: read-only, as EventScope's fields are). */
  scope(): EventScope {
    if (this.#scope) return this.#scope;
    const endpointId = this.endpointId;
    this.#scope = endpointId ? { channelIds: [this.id], endpointIds: [endpointId] } : { channelIds: [this.id] };
    return this.#scope;
  }

  /**
   * Raises a channel event carrying this channel's snapshot to everyone subscribed to it. The
   * event's name and fields are checked against its declaration at compile time. Protected: the
   * channel raises its own events; others tell it what happened through a verb (talkingStarted,
   * userEvent, hold…), so the order of its events is decided in one place.
   */
  protected raise<N extends ChannelEventName>(type: N, ...[fields, scope = this.scope()]: RaiseArgs<RaisedFields<N, 'channel'>, [scope?: EventScope]>): void {
    // The declarations type each field, but the compiler cannot follow a generic event name into
    // the event union; the assertion (not via unknown) still rejects fields that fit no event.
    // `channel` last: eventText relies on it to splice the kept serialisation of the snapshot in.
    this.env.publish({ type, timestamp: formatAriDate(), ...fields, channel: this.snapshot() } as CoreEvent, scope, this);
  }

  /** Raises an event about this channel whose model has no `channel` field (Dial names its peer). */
  publishEvent(event: CoreEvent, scope: EventScope = this.scope()): void {
    this.env.publish(event, scope);
  }

  // ---- state ----------------------------------------------------------------------------------

  setState(state: ChannelState): void {
    if (this.state === state || this.destroyedAlready) return;
    this.state = state;
    // The first answer only: Dial()'s ANSWEREDTIME counts from it (ast_channel_get_up_time_ms).
    if (state === 'Up') this.answeredAt ??= Date.now();
    this.raise('ChannelStateChange');
    this.env.stateChanged?.(this);
    this.emit('state', state);
    if (state === 'Up') this.emit('answered', undefined);
  }

  /** Answers an inbound channel towards its far end. */
  answer(): void {
    if (this.state === 'Up' || this.hangingUp) return;
    // This channel is Up before its far end hears the answer (a Local peer becomes Up after it).
    this.setState('Up');
    this.driver.answer();
  }

  indicate(indication: Indication, musicClass?: string): void {
    if (this.hangingUp) return;
    this.emit('indicated', indication);
    // What the technology cannot show, the core plays in band (ringing, busy, congestion) or stops.
    if (this.driver.indicate(indication, musicClass) === false) this.env.inbandIndication?.(this, indication);
  }

  /**
   * Ends the tone the core plays for an indication its technology could not show, without telling
   * the far end anything: app_dial clears the caller's generator so when a callee answers.
   */
  endInbandIndication(): void {
    this.env.inbandIndication?.(this, 'stop');
  }

  /**
   * Tells the technology whom the far end now talks to (ast_indicate_data with
   * AST_CONTROL_CONNECTED_LINE): the channel's connected line, unless it and `source` are those
   * indicated last (Asterisk drops such a redundant update). Setting the connected line alone
   * (a callee's staged identity, inheritance) indicates nothing.
   */
  indicateConnectedLine(source: ConnectedLineSource): void {
    if (this.hangingUp) return;
    const { name, number } = this.connected;
    const last = this.#indicatedConnected;
    if (last && last.name === name && last.number === number && last.source === source) return;
    this.#indicatedConnected = { name, number, source };
    this.driver.connectedLine?.({ name, number });
  }

  /**
   * The channel's redirecting party becomes `redirecting` and its technology is told
   * (ast_channel_update_redirecting, ast_indicate_data with AST_CONTROL_REDIRECTING): setting
   * `redirecting` alone (inheritance, REDIRECTING() with `i`) indicates nothing.
   */
  indicateRedirecting(redirecting: Redirecting): void {
    if (this.hangingUp) return;
    this.redirecting = redirecting;
    this.driver.redirecting?.();
  }

  /** The far end said the call was forwarded: its redirecting party is kept, and whoever listens (Dial()) is told. */
  remoteRedirecting(redirecting: Redirecting): void {
    if (this.hangingUp) return;
    this.redirecting = redirecting;
    this.emit('remote-redirecting', undefined);
  }

  hold(musicClass?: string): void {
    this.#setHold(true);
    this.indicate('hold', musicClass);
    this.raise('ChannelHold', musicClass ? { musicclass: musicClass } : {});
  }

  unhold(): void {
    this.#setHold(false);
    this.indicate('unhold');
    this.raise('ChannelUnhold');
  }

  /** The far end put the call on hold (a Local partner's hold): no indication goes back to it. */
  heldByFarEnd(musicClass?: string): void {
    this.#setHold(true);
    this.raise('ChannelHold', musicClass ? { musicclass: musicClass } : {});
  }

  /** The far end took the call off hold. */
  unheldByFarEnd(): void {
    this.#setHold(false);
    this.raise('ChannelUnhold');
  }

  /** A held channel's media comes back through the core (direct media ends: remote-media.ts looks again on media-path). */
  #setHold(held: boolean): void {
    if (this.onHold === held) return;
    this.onHold = held;
    this.emit('media-path', undefined);
  }

  /**
   * The technology's own conditions for carrying the audio itself changed (a codec, the far end's
   * address, its NAT): a relay or direct media between two technologies looks again (audio-relay.ts).
   */
  mediaPathChanged(): void {
    this.emit('media-path', undefined);
  }

  /**
   * Moves to `location` with a new caller id and connected line in one step, as app_dial stages a
   * callee's snapshot before calling it: ARI derives ChannelDialplan, ChannelCallerId and
   * ChannelConnectedLine from that one snapshot, so the first already shows the new identity and
   * the other two follow, each only when its part really changed.
   */
  stageIdentity(location: Readonly<DialplanLocation>, identity: ChannelIdentity): void {
    const changed = this.adoptIdentity(identity);
    this.setDialplan(location);
    this.announceIdentity(changed);
  }

  protected announceIdentity(changed: IdentityChange): void {
    if (changed.caller) {
      const presentation = combinedPresentation(this.callerPresentation, this.caller.name !== '', this.caller.number !== '');
      this.raise('ChannelCallerId', { caller_presentation: presentation, caller_presentation_txt: describePresentation(presentation) });
    }
    if (changed.connected) this.raise('ChannelConnectedLine');
  }

  /**
   * Moves the dialplan position to an application; ChannelDialplan when Asterisk would raise it
   * (ChannelDialplanRun). The channel keeps `location` itself (a location is replaced, never
   * changed in place): the caller hands over an object it does not change afterwards.
   */
  setDialplan(location: Readonly<DialplanLocation>): void {
    const announce = this.#dialplanRun.startsApplication(this.location, location);
    this.location = location;
    if (announce) this.raise('ChannelDialplan', { dialplan_app: location.appName, dialplan_app_data: location.appData });
  }

  /** A dialplan run takes the channel over (see ChannelDialplanRun), or lets it go without a hang-up. */
  setDialplanOwned(owned: boolean): void {
    this.#dialplanRun.own(owned, this.location);
  }

  /** Moves the dialplan position without running anything (continue, goto). */
  setLocation(location: Partial<DialplanLocation>): void {
    this.location = { ...this.location, ...location };
  }

  // ---- variables ------------------------------------------------------------------------------

  getVariable(name: string): string | undefined {
    return this.variables.get(name);
  }

  /**
   * `value` undefined unsets the variable. InvalidError when the channel holds
   * MAX_CHANNEL_VARIABLES already and `name` would be a new one.
   */
  setVariable(name: string, value: string | undefined, reportEvents = false): void {
    if (value !== undefined && this.variables.size >= MAX_CHANNEL_VARIABLES && !this.variables.has(name)) throw tooManyChannelVariables(name);
    this.variables.assertRoom(name, value, this.variableBytes.limit);
    this.setSystemVariable(name, value, reportEvents);
  }

  /**
   * For the server's own variables of fixed names (DIALSTATUS, RECORD_STATUS, ...): never refused,
   * as there are finitely many of them, so a channel full of user variables still runs its apps.
   */
  setSystemVariable(name: string, value: string | undefined, reportEvents = false): void {
    this.variables.store(name, value);
    // channelvars come from the variables.
    this.snapshotChanged();
    if (reportEvents) this.reportVariable(name);
    this.raise('ChannelVarset', { variable: name, value: value ?? '' });
  }

  /** What the channel's variables hold in bytes, and the most they may (`variables.max_channel_bytes`). */
  get variableBytes(): { readonly held: number; readonly limit: number } {
    return { held: this.variables.bytes, limit: this.env.maxVariableBytes };
  }
  /** How many variables the channel holds. */
  get variableCount(): number {
    return this.variables.size;
  }

  variableNames(): string[] {
    return [...this.variables.keys()];
  }

  /**
   * Copies every variable of `source` (a technology handing a call on). With `announce`, each copy
   * raises its ChannelVarset, the newest first, as Asterisk's unreal call setup publishes them.
   */
  copyVariablesFrom(source: Channel, announce = false): void {
    const copied: [string, string][] = [];
    for (const [name, value] of source.variables) {
      const full = this.variables.size >= MAX_CHANNEL_VARIABLES && !this.variables.has(name);
      if (full || !this.variables.hasRoom(name, value, this.env.maxVariableBytes)) break;
      this.variables.store(name, value);
      if (announce) copied.push([name, value]);
    }
    this.snapshotChanged();
    for (let index = copied.length - 1; index >= 0; index--) this.raise('ChannelVarset', { variable: copied[index][0], value: copied[index][1] });
  }

  // ---- media ----------------------------------------------------------------------------------
  // The per-frame path; what else takes or changes the audio is the base class's (channel-audio-taps.ts).


  /** Audio towards the far end. */
  write(frame: Frame): void {
    if (this.hangingUp) return;
    this.audio?.writtenByOther();
    this.writeGenerated(frame);
  }

  /** A generator's frame (channel-generators.ts): unlike write(), it leaves an interruptible generator playing. */
  writeGenerated(frame: Frame): void {
    const audio = this.audio;
    if (!this.hangingUp) this.driver.writeFrame(audio === undefined ? frame : audio.outgoing(frame, this));
  }

  /** Audio from the far end; the technology calls this once per received frame. */
  deliver(frame: Frame): void {
    if (this.hangingUp) return;
    this.audio?.deliver(frame, this);
  }

  /** The far end indicated a condition; ringing moves an outbound channel to Ringing. */
  remoteIndication(indication: Indication): void {
    if (this.hangingUp) return;
    if (indication === 'ringing' && this.direction === 'outbound' && this.state !== 'Up') this.setState('Ringing');
    if (indication === 'answer') this.setState('Up');
    this.emit('remote-indication', indication);
  }

  /** A DTMF digit received from the far end. */
  receiveDigit(digit: string, durationMs: number): void {
    if (this.hangingUp) return;
    this.raise('ChannelDtmfReceived', { digit, duration_ms: durationMs });
    this.emit('dtmf', { digit, durationMs });
  }

  /** Text received from the far end (an in-call message), for whoever listens for it on the channel. */
  receiveText(text: string): void {
    this.emit('text', text);
  }

  // ---- what others tell the channel -----------------------------------------------------------
  // The channel raises its own internal events; the objects that decide them (the dialplan
  // executor, Stasis) say what happened through these verbs instead of firing the events.

  /** The dialplan executor moved the channel elsewhere (TIMEOUT(absolute) to `T`): the application waiting on it stops. */
  interruptDialplan(): void {
    this.emit('pbx-interrupt', undefined);
  }

  /** Stasis is about to release the channel from `app` (before StasisEnd): what holds it for the application lets go. */
  leavingStasis(app: string): void {
    this.emit('stasis-leaving', { app });
  }

  /** Stasis released the channel from `app` (after StasisEnd). */
  leftStasis(app: string): void {
    this.emit('stasis-left', { app });
  }

  /** Talk detection (TALK_DETECT) heard the channel start talking: ChannelTalkingStarted. */
  talkingStarted(): void {
    this.raise('ChannelTalkingStarted');
  }

  /** Talk detection heard the channel stop talking after `durationMs`: ChannelTalkingFinished. */
  talkingFinished(durationMs: number): void {
    this.raise('ChannelTalkingFinished', { duration: Math.round(durationMs) });
  }

  /**
   * The dialplan's UserEvent() on this channel: ChannelUserevent, whose `userevent` repeats the
   * name beside the application's key/value pairs, as Asterisk sends it.
   */
  userEvent(eventname: string, fields: Readonly<Record<string, string>>): void {
    this.raise('ChannelUserevent', { eventname, userevent: { ...fields, eventname } });
  }

  // ---- hangup ---------------------------------------------------------------------------------

  /**
   * Hangs up with normal clearing (the lifecycle verb, see util/lifecycle.ts). Called again while
   * the `h` extension still runs (a shutdown's second pass), it destroys the channel without waiting.
   */
  end(): void {
    if (this.hangingUp) this.finishHangup();
    else this.hangup(CAUSE.normal);
  }

  /**
   * Hangs the channel up: ChannelHangupRequest, then listeners release it (Stasis raises StasisEnd,
   * bridges let it go), then the technology is told and ChannelDestroyed is raised. Hangups this
   * one causes are queued, not recursed into (hangup-chain.ts).
   */
  hangup(cause: number = CAUSE.normal, options: { soft?: SoftHangupFlag; fromFarEnd?: boolean; techCause?: number; unrequested?: boolean; causeUnannounced?: boolean } = {}): void {
    if (this.hangingUp) return;
    this.hangupCause = cause;
    if (options.techCause) this.hangupTechCause = options.techCause;
    const soft = options.soft;
    const fromFarEnd = options.fromFarEnd === true;
    const requested = options.unrequested !== true;
    const noticedLater = fromFarEnd && requestedByAnotherHangup();
    // A hang-up the technology queues without a cause (ast_queue_hangup: chan_pjsip's BYE) is
    // announced without one; the channel still ends with `cause`.
    const announcedCause = options.causeUnannounced === true ? undefined : cause;
    carryOutHangup({
      release: () => this.release(soft, fromFarEnd, requested, noticedLater, announcedCause),
      destroy: () => this.destroy(),
      // A hang-up queued by the technology is noticed later by the thread owning the channel.
      destroyAfterRequester: fromFarEnd,
    });
  }

  /**
   * First half of a hangup: announce it, let listeners release the channel, tell the far end. A
   * soft hang-up's event carries the reason flag as `cause` (ast_softhangup); a queued one the cause.
   * An `unrequested` one is not announced: a channel hung up outright, as Asterisk's ast_hangup of
   * a bridge's party nobody asked to hang up (Dial()'s callee once the caller left).
   */
  private release(soft: SoftHangupFlag | undefined, fromFarEnd: boolean, requested: boolean, noticedLater: boolean, announcedCause: number | undefined): void {
    const cause = this.hangupCause ?? CAUSE.normal;
    try {
      const techCause = this.hangupTechCause;
      if (soft === SOFT_HANGUP.appUnload) this.#dialplanRun.endAnnounced();
      if (requested) {
        const eventCause = soft ?? announcedCause;
        this.raise('ChannelHangupRequest', {
          ...(eventCause !== undefined ? { cause: eventCause } : {}),
          ...(techCause ? { tech_cause: techCause } : {}),
          ...(soft !== undefined ? { soft: true } : {}),
        });
      }
    } catch (error) {
      this.env.reportError(error, this, 'ChannelHangupRequest');
    }
    this.emit('media-stopping', undefined);
    this.emit('hangup', noticedLater ? { cause, noticedLater } : { cause });
    try {
      // The rest waits for finishHangup() when the owning dialplan run has an `h` extension to run first.
      if (this.#dialplanRun.takeHangupOver(this, fromFarEnd)) return;
    } catch (error) {
      this.env.reportError(error, this, 'hang-up logic');
    }
    if (fromFarEnd) return;
    this.tellTechnology(cause);
  }

  /** The dialplan run owning the channel names the hang-up logic to run before it is destroyed (undefined: none). */
  setHangupLogic(logic: HangupLogic | undefined): void {
    this.#dialplanRun.hangupLogic = logic;
  }

  /** Hung up from here, the dialplan run ends before the technology is told (__ast_pbx_run, then ast_hangup). */
  private tellTechnology(cause: number): void {
    this.endDialplanRun();
    try {
      this.driver.hangup(cause);
    } catch (error) {
      this.env.reportError(error, this, 'technology hangup');
    }
  }

  /** The owning dialplan run ends, hung up: its soft APPUNLOAD request, once (before `h`, as in __ast_pbx_run). */
  announceDialplanEnd(): void {
    this.endDialplanRun();
  }

  /**
   * Hang-up logic that took the hang-up over is done: the technology is told (unless the far end
   * hung up) and the channel destroyed after the hang-ups that causes, as ast_hangup after `h`.
   */
  finishHangup(): void {
    const deferred = this.#dialplanRun.takeDeferredHangup();
    if (!deferred) return;
    carryOutHangup({
      release: () => {
        if (!deferred.fromFarEnd) this.tellTechnology(this.hangupCause ?? CAUSE.normal);
      },
      destroy: () => this.destroy(),
    });
  }

  /** The soft hang-up that ends a dialplan run (AST_SOFTHANGUP_APPUNLOAD), once. */
  private endDialplanRun(): void {
    if (!this.#dialplanRun.takeEndToAnnounce()) return;
    const techCause = this.hangupTechCause;
    this.raise('ChannelHangupRequest', { cause: SOFT_HANGUP.appUnload, ...(techCause ? { tech_cause: techCause } : {}), soft: true });
  }

  /** Second half: ChannelDestroyed, and the table forgets the channel, whatever failed before. */
  private destroy(): void {
    if (this.destroyedAlready) return;
    // Asterisk's ast_hangup would start here: what the channel's owner does first (StasisEnd) comes
    // before the hang-up logic, which runs first; finishHangup() destroys the channel after it.
    if (!this.noticedHangup) {
      this.noticedHangup = true;
      this.emit('hangup-noticed', undefined);
    }
    if (this.#dialplanRun.hangupDeferred) return;
    const cause = this.hangupCause ?? CAUSE.normal;
    this.destroyedAlready = true;
    this.audio?.clear();
    this.emit('destroying', undefined);
    try {
      const techCause = this.hangupTechCause;
      this.endDialplanRun();
      // The application that was running returned before the dialplan run destroys the channel.
      const applicationBefore = this.#dialplanRun.applicationBefore;
      if (applicationBefore) this.location = { ...this.location, ...applicationBefore };
      this.raise('ChannelDestroyed', { cause, cause_txt: causeText(cause), ...(techCause ? { tech_cause: techCause } : {}) });
    } catch (error) {
      this.env.reportError(error, this, 'ChannelDestroyed');
    }
    try {
      this.env.destroyed(this);
    } catch (error) {
      this.env.reportError(error, this, 'forgetting the channel');
    }
  }
}
