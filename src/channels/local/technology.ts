// Local channels: `Local/exten@context` creates a pair. `;1` is the outbound half the requester
// holds; `;2` is an inbound half that runs the dialplan at exten@context. Whatever one half sends
// towards its far end (audio, DTMF, answer, indications, hangup) arrives at the other half.
//
// Most Local pairs in a row are `local_max_depth`: a Local channel requested by a channel that a
// Local channel led to is one deeper; beyond it the request fails as unavailable, so a dialplan
// that dials itself through Local stops (0 = unlimited). Across the width of a call chain,
// `local_max_descendants` bounds the pairs it may make (see chains.ts).
import type { Frame } from '../../media/frame.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelDriver, ChannelRequest, ChannelTechnology, Indication, TechnologyContext } from '../../core/channels/technology.ts';
import type { DeviceStateValue } from '../../core/device-states.ts';
import { InvalidError, UnavailableError } from '../../core/errors.ts';
import { MAX_CHANNEL_ID_LENGTH } from '../../core/channels/channels.ts';
import { LocalChainBudget } from './chains.ts';

/**
 * What the two halves of a pair share: each other, and whether `;1` was called. One object per pair
 * that the halves' drivers point at, rather than a closure per half and purpose: these live as long as
 * the call and were copied by every scavenge inside it (docs/performance.md, eighth pass).
 */
class LocalPair {
  /** Set as soon as `;1` is made, before anything can reach its driver. */
  one!: Channel;
  /** Made just after `;1`: undefined while `;1`'s creation is announced. */
  two: Channel | undefined;
  #started = false;

  constructor(private readonly running: TechnologyContext) {}

  /** `;1` is called: `;2` takes it across (once) and runs the dialplan. */
  call(): void {
    const other = this.two;
    if (this.#started || !other) return;
    this.#started = true;
    const self = this.one;
    // As chan_local's call (ast_unreal_call_setup): the ;2 half takes every variable of ;1 (each announced),
    // then the two identities cross in one staged snapshot (what ;1 is connected to calls in on ;2; ;1's own
    // identity is what ;2 is connected to): ;2's ChannelCallerId and ChannelConnectedLine where they change.
    other.copyVariablesFrom(self, true);
    const connectedOfOne = self.connected.number || self.connected.name ? self.connected : undefined;
    // Without a connected party on ;1, ;2 shows ;1's own caller id as its caller (Asterisk leaves
    // it empty and says nothing; docs/differences.md): taken without an event, as Asterisk raises none.
    // Caller ids are replaced, never changed in place, so ;1's are handed over as they are (takeIdentity copies what it takes).
    if (!connectedOfOne) other.caller = self.caller;
    // The presentations cross with the parties (numbers, set before the events that may show them).
    other.callerPresentation = connectedOfOne ? self.connectedPresentation : self.callerPresentation;
    other.connectedPresentation = self.callerPresentation;
    other.takeIdentity({ caller: connectedOfOne, connected: self.caller });
    // ast_unreal_call_setup copies ;1's redirecting party to ;2 as well.
    other.redirecting = self.redirecting;
    // The dialplan runs after the caller has finished setting the call up.
    const running = this.running;
    setImmediate(() => {
      if (!other.hangingUp) running.enterDialplan(other);
    });
  }
}

/** One half's view of the pair: what it sends to its far end arrives at the other half. */
class LocalHalf implements ChannelDriver {
  /**
   * `self` is the `;2` half when `isTwo`: hanging up first, it tells `;1` how the Dial() it ran ended
   * (CHANLOCALSTATUS, as Asterisk's ast_unreal_hangup does for the outgoing side).
   */
  constructor(
    private readonly pair: LocalPair,
    private readonly isTwo: boolean,
    private readonly self: Channel,
  ) {}

  private other(): Channel {
    return this.isTwo ? this.pair.one : this.pair.two!;
  }

  call(): void {
    if (!this.isTwo) this.pair.call();
  }

  answer(): void {
    const other = this.other();
    if (!other.hangingUp && other.state !== 'Up') other.remoteIndication('answer');
  }

  hangup(cause: number): void {
    const other = this.other();
    if (other.hangingUp) return;
    const dialStatus = this.isTwo ? this.self.getVariable('DIALSTATUS') : undefined;
    if (dialStatus !== undefined) other.setSystemVariable('CHANLOCALSTATUS', dialStatus);
    other.hangup(cause, { fromFarEnd: true });
  }

  indicate(indication: Indication, musicClass?: string): void {
    const other = this.other();
    if (other.hangingUp) return;
    if (indication === 'hold') other.heldByFarEnd(musicClass);
    else if (indication === 'unhold') other.unheldByFarEnd();
    other.remoteIndication(indication);
  }

  sendDigit(digit: string, durationMs: number): void {
    this.other().receiveDigit(digit, durationMs);
  }

  writeFrame(frame: Frame): void {
    this.other().deliver(frame);
  }

  sendText(text: string): void {
    this.other().receiveText(text);
  }
}

/** Parses `exten@context[/n]` (the `/n` option is accepted and ignored: there is no optimisation to disable). */
export function parseLocalResource(resource: string): { exten: string; context: string } {
  const withoutOptions = resource.split('/')[0];
  const at = withoutOptions.lastIndexOf('@');
  const exten = at < 0 ? withoutOptions : withoutOptions.slice(0, at);
  const context = at < 0 ? 'default' : withoutOptions.slice(at + 1);
  if (exten === '' || context === '') throw new InvalidError(`Local channel resource must be exten@context: ${resource}`);
  return { exten, context };
}

export class LocalTechnology implements ChannelTechnology {
  readonly name = 'Local';
  readonly description = 'Local proxy channel pairs that run the dialplan';
  readonly module = { name: 'chan_local.so', description: 'Local Proxy Channel Driver' };
  readonly channelsPerRequest = 2;
  #context: TechnologyContext | undefined;
  readonly #chains = new LocalChainBudget();

  start(context: TechnologyContext): void {
    this.#context = context;
  }

  /** As chan_local's devicestate: a Local device is available when its extension exists, else invalid. */
  deviceState(resource: string): DeviceStateValue | undefined {
    const local = /^([^@]+)@([^/]+)/.exec(resource);
    if (!local || !this.#context) return undefined;
    return this.#context.extensionExists(local[2], local[1]) ? 'NOT_INUSE' : 'INVALID';
  }

  stop(): void {
    this.#context = undefined;
  }

  request(request: ChannelRequest): Channel {
    const { exten, context } = parseLocalResource(request.resource);
    const running = this.#context;
    if (!running) throw new UnavailableError('The Local channel driver is not running');
    const { channels } = running;
    const maxDepth = running.config.localMaxDepth;
    const depth = (request.requestor?.localDepth ?? 0) + 1;
    if (maxDepth && depth > maxDepth) {
      throw new UnavailableError(`Local channel nesting is deeper than ${maxDepth} (local_max_depth): ${request.resource}`);
    }
    const twoId = request.otherChannelId || secondHalfId(request.channelId);
    channels.checkId(twoId);
    this.#chains.claim(request.requestor?.linkedId, running.config.localMaxDescendants, request.resource);
    // core_unreal's counter, which Asterisk's bridge media channels (Announcer/, Recorder/) share.
    const base = `Local/${exten}@${context}-${channels.newNameSuffix('unreal')}`;
    // The halves share everything but their id, name suffix, direction, state and driver.
    const shared = { technology: 'Local', language: request.requestor?.language, location: { context, exten, priority: 1 } };
    // Each half's driver speaks to the other half through the pair, `;2` made just after `;1`.
    const pair = new LocalPair(running);
    const one = channels.create(
      { ...shared, id: request.channelId, name: `${base};1`, direction: 'outbound', state: 'Down', linkedId: request.requestor?.linkedId },
      (self) => new LocalHalf(pair, false, (pair.one = self)),
    );
    const two = (pair.two = channels.create({ ...shared, id: twoId, name: `${base};2`, direction: 'inbound', state: 'Ring', linkedId: one.linkedId }, (self) => new LocalHalf(pair, true, self)));
    one.peer = two;
    two.peer = one;
    one.localDepth = depth;
    two.localDepth = depth;
    this.#chains.track(one, two);
    return one;
  }
}

/**
 * As Asterisk's unreal channels: a caller-chosen id for ;1 without one for ;2 names ;2 `<id>;2`.
 * An id too long to take the suffix leaves ;2 a generated id rather than refusing the request.
 */
function secondHalfId(channelId: string | undefined): string | undefined {
  if (!channelId) return undefined;
  const derived = `${channelId};2`;
  return derived.length <= MAX_CHANNEL_ID_LENGTH ? derived : undefined;
}
