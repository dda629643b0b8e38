// The CDR engine: builds Asterisk 22's call detail records from the core's events, as main/cdr.c
// builds them from Stasis messages (channel snapshots, dial begin/end, bridge enter/leave). The
// subset kept and what it leaves out are in docs/cdr.md: two-party calls through Dial() and
// bridges, forks when a channel goes on to new dialplan after its record finished, ResetCDR,
// NoCDR, CDR() and CDR_PROP(); no parking state.
import type { CoreEvent } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';
import { ChannelView, firstParty } from './channel-view.ts';
import { CdrObject, dispositionOfDialStatus, type DispositionRules, type PartyB } from './cdr-object.ts';
import { DISPOSITION_CODE, type CallDetailRecord } from './record.ts';

export interface CdrEngineOptions extends DispositionRules {
  /** cdr.conf `unanswered`. */
  readonly unanswered: boolean;
  /** cdr.conf `channeldefaultenabled`: false starts every channel's records disabled. */
  readonly channelDefaultEnabled: boolean;
  /** Where finished records go (the backends). */
  readonly post: (record: CallDetailRecord) => void;
  readonly now?: () => number;
}

/** Final Dial statuses (dial_status_end); RINGING, PROGRESS and the begin ('') are not. */
const FINAL_DIAL_STATUSES = new Set(['ANSWER', 'BUSY', 'CANCEL', 'NOANSWER', 'CONGESTION', 'CHANUNAVAIL', 'DONTCALL', 'TORTURE', 'INVALIDARGS']);

export class CdrEngine {
  /** Live channels by id. */
  readonly #channels = new Map<string, ChannelView<CdrObject>>();
  /** The live records each channel is party B of, so an event about a channel touches only its own calls. */
  readonly #asPartyB = new Map<string, Set<CdrObject>>();
  #sequence = 0;
  #options: CdrEngineOptions;
  /** The rules every record reads when it ends; one object, so that a reload reaches records being made. */
  readonly #rules: { congestion: boolean; initiatedSeconds: boolean };
  readonly #now: () => number;

  constructor(options: CdrEngineOptions) {
    this.#options = options;
    this.#rules = { congestion: options.congestion, initiatedSeconds: options.initiatedSeconds };
    this.#now = options.now ?? Date.now;
  }

  /** cdr.conf read again (reload): the records being made follow the new rules from now on. */
  configure(rules: Omit<CdrEngineOptions, 'post' | 'now'>): void {
    this.#options = { ...this.#options, ...rules };
    this.#rules.congestion = rules.congestion;
    this.#rules.initiatedSeconds = rules.initiatedSeconds;
  }

  get activeChannels(): number {
    return this.#channels.size;
  }

  channel(id: string): ChannelView<CdrObject> | undefined {
    return this.#channels.get(id);
  }

  /** Feeds one core event to the engine. */
  handle(event: CoreEvent): void {
    const now = this.#now();
    switch (event.type) {
      case 'ChannelCreated':
        this.#created(event.channel, now);
        return;
      case 'Dial':
        this.#dial(event.caller, event.peer, event.dialstatus, now);
        return;
      case 'ChannelEnteredBridge':
        if (event.channel) this.#snapshot(event.channel, now);
        if (event.channel) this.#enteredBridge(event.channel.id, event.bridge, now);
        return;
      case 'ChannelLeftBridge':
        this.#snapshot(event.channel, now);
        this.#leftBridge(event.channel.id, event.bridge.id, now);
        return;
      case 'ChannelHangupRequest':
        // A soft request's `cause` is its reason flag (APPUNLOAD 16, EXPLICIT 32), not the channel's
        // hang-up cause: Hangup(17) is announced only so, and its 17 comes with ChannelDestroyed.
        this.#snapshot(event.channel, now, event.soft ? undefined : event.cause);
        return;
      case 'ChannelDestroyed':
        this.#destroyed(event.channel, event.cause, now);
        return;
      default:
        if ('channel' in event && event.channel && typeof event.channel === 'object' && 'dialplan' in event.channel) this.#snapshot(event.channel, now);
    }
  }

  // ---- channels ------------------------------------------------------------------------------

  #created(snapshot: Model<'Channel'>, now: number): void {
    if (this.#channels.has(snapshot.id)) return;
    const view = new ChannelView<CdrObject>(snapshot, this.#linkedIdOf(snapshot), now);
    this.#channels.set(view.id, view);
    const first = this.#newRecord(view, now);
    first.disabled = !this.#options.channelDefaultEnabled;
    // A list of exactly one (a first push into an empty list would make room for seventeen).
    view.chain = [first];
  }

  /** ChannelCreated carries no linkedid; a channel takes its own id until the core says otherwise. */
  #linkedIdOf(snapshot: Model<'Channel'>): string {
    return this.linkedIdOf?.(snapshot.id) ?? snapshot.id;
  }

  /**
   * Told by the composition above the kernel: whether a channel runs a subroutine (Gosub, a pre-dial
   * handler), where cdr.c leaves dst and dcontext as they were. Absent: never.
   */
  inSubroutine: ((channelId: string) => boolean) | undefined;

  /**
   * Told by the composition above the kernel: whether a hung-up channel runs its hang-up logic
   * (the `h` extension) now. Absent: never.
   */
  inHangupLogic: ((channelId: string) => boolean) | undefined;

  #inSubroutine(cdr: CdrObject): boolean {
    return this.inSubroutine?.(cdr.partyA.id) ?? false;
  }

  /** Told by the core: the linkedid of a live channel (its snapshot does not carry it). */
  linkedIdOf: ((channelId: string) => string | undefined) | undefined;

  /** A live channel's records as party A (ChannelView.chain), undefined when it is not live. */
  #chainOf(channelId: string): CdrObject[] | undefined {
    return this.#channels.get(channelId)?.chain;
  }

  #newRecord(view: ChannelView, now: number): CdrObject {
    this.#sequence += 1;
    return new CdrObject(view, this.#sequence - 1, now, this.#rules);
  }

  /** handle_channel_snapshot_update_message: party A follows the channel; a finished chain forks on new dialplan. */
  #snapshot(snapshot: Model<'Channel'>, now: number, hangupCause?: number): void {
    const view = this.#channels.get(snapshot.id);
    const chain = this.#chainOf(snapshot.id);
    if (!view || !chain) return;
    if (this.inHangupLogic?.(view.id)) {
      // endbeforehexten (yes in Asterisk 22): the records end as the `h` extension starts and do not
      // follow it (lastapp stays the call's); they are posted when the channel is destroyed, so
      // CDR(userfield) written in `h` still reaches the newest.
      for (const cdr of chain) {
        if (cdr.state === 'finalized') continue;
        cdr.checkAnswer(now);
        cdr.finalize(now);
      }
      return;
    }
    const moved = view.update(snapshot);
    if (hangupCause !== undefined && !view.hangupCause) view.hangupCause = hangupCause;
    let allReject = true;
    for (const cdr of chain) {
      if (!this.#processPartyA(cdr, moved, now)) allReject = false;
    }
    if (allReject && !view.dead && view.app !== '' && moved) {
      const next = CdrObject.following(chain[chain.length - 1]!, this.#sequence++, now);
      chain.push(next);
      next.followPartyA(now, this.#inSubroutine(next));
    }
    this.#updatePartyB(view);
  }

  /** Returns true when the record refuses the update (it is finished: a new one may be needed). */
  #processPartyA(cdr: CdrObject, moved: boolean, now: number): boolean {
    switch (cdr.state) {
      case 'finalized':
        return true;
      case 'dialedPending':
        if (moved) {
          if (cdr.partyB) {
            cdr.finalize(now);
            return true;
          }
          cdr.state = 'single';
        }
        cdr.followPartyA(now, this.#inSubroutine(cdr));
        return false;
      default:
        cdr.followPartyA(now, this.#inSubroutine(cdr));
        return false;
    }
  }

  /** Records where this channel is party B keep its latest name, account and cause. */
  #updatePartyB(view: ChannelView): void {
    for (const cdr of this.#asPartyB.get(view.id) ?? []) {
      if (cdr.partyB?.id === view.id && cdr.state !== 'finalized') cdr.partyB = partyOf(view);
    }
  }

  #destroyed(snapshot: Model<'Channel'>, cause: number, now: number): void {
    const view = this.#channels.get(snapshot.id);
    const chain = this.#chainOf(snapshot.id);
    if (!view || !chain) return;
    view.update(snapshot);
    view.hangupCause ||= cause;
    view.dead = true;
    for (const cdr of chain) {
      cdr.checkAnswer(now);
      cdr.finalize(now);
    }
    this.#channels.delete(view.id);
    // cdr_object_finalize_party_b: a call whose party B is gone is over too.
    for (const cdr of this.#asPartyB.get(view.id) ?? []) {
      if (cdr.state === 'finalized') continue;
      cdr.partyB = partyOf(view);
      // A record still dialing or bridged with this party B ends with it (Dial()'s bridge has usually
      // dissolved by then, its ChannelLeftBridge having finished the record; a kernel without bridges has none).
      if (cdr.state === 'dial' || cdr.state === 'bridge' || cdr.state === 'dialedPending') cdr.finalize(now);
    }
    this.#asPartyB.delete(view.id);
    for (const cdr of chain) {
      if (cdr.partyB) this.#asPartyB.get(cdr.partyB.id)?.delete(cdr);
      this.#dispatch(cdr);
    }
  }

  /** Gives the record its party B, indexed by the party's channel. */
  #setPartyB(cdr: CdrObject, party: ChannelView): void {
    if (cdr.partyB) this.#asPartyB.get(cdr.partyB.id)?.delete(cdr);
    cdr.partyB = partyOf(party);
    let records = this.#asPartyB.get(party.id);
    if (!records) this.#asPartyB.set(party.id, (records = new Set()));
    records.add(cdr);
  }

  /** post_cdr: the `unanswered` filter and the disabled flag, then the backends. */
  #dispatch(cdr: CdrObject): void {
    const record = cdr.publish();
    if (!record) return;
    if (!this.#options.unanswered && cdr.dispositionCode < DISPOSITION_CODE.ANSWERED && (record.channel === '' || record.dstchannel === '')) return;
    if (cdr.disabled) return;
    this.#options.post(record);
  }

  // ---- dial ----------------------------------------------------------------------------------

  #dial(caller: Model<'Channel'> | undefined, peer: Model<'Channel'>, status: string, now: number): void {
    const peerView = this.#channels.get(peer.id);
    if (!peerView) return;
    if (caller && status === '') peerView.dialed = true;
    const owner = caller ?? peer;
    const chain = this.#chainOf(owner.id);
    const ownerView = this.#channels.get(owner.id);
    if (!chain || !ownerView) return;
    ownerView.update(owner);
    if (status === '') {
      let allReject = true;
      for (const cdr of chain) {
        if (cdr.state === 'single') {
          this.#dialBegin(cdr, caller !== undefined, peerView, now);
          allReject = false;
        } else if (cdr.state === 'dialedPending') {
          cdr.finalize(now);
        }
      }
      if (allReject) {
        const next = CdrObject.following(chain[chain.length - 1]!, this.#sequence++, now);
        chain.push(next);
        this.#dialBegin(next, caller !== undefined, peerView, now);
      }
      return;
    }
    if (!FINAL_DIAL_STATUSES.has(status)) return;
    for (const cdr of chain) {
      if (cdr.state !== 'dial') continue;
      if (cdr.partyB && cdr.partyB.id !== peer.id) continue;
      if (cdr.partyB) cdr.partyB = partyOf(peerView);
      cdr.disposition = dispositionOfDialStatus(status, this.#options.congestion);
      if (cdr.disposition === 'ANSWERED') cdr.state = 'dialedPending';
      else cdr.finalize(now);
    }
  }

  /** single_state_process_dial_begin: a caller gets its party B; an originated channel is its own party A. */
  #dialBegin(cdr: CdrObject, hasCaller: boolean, peer: ChannelView, now: number): void {
    cdr.followPartyA(now, this.#inSubroutine(cdr));
    if (hasCaller) {
      this.#setPartyB(cdr, peer);
      // Mid-call subroutines must not change the application that joined the parties.
      cdr.lockApp = true;
    }
    cdr.state = 'dial';
  }

  // ---- bridges -------------------------------------------------------------------------------

  /** handle_standard_bridge_enter_message: the records of the channel enter, then the pairings with everyone in the bridge. */
  #enteredBridge(channelId: string, bridge: Model<'Bridge'>, now: number): void {
    const chain = this.#chainOf(channelId);
    const view = this.#channels.get(channelId);
    if (!chain || !view) return;
    let handled: CdrObject | undefined;
    for (const cdr of chain) {
      if (cdr.state === 'single') {
        if (!this.#singleEnters(cdr, bridge)) cdr.finish(now);
        handled ??= cdr;
      } else if (cdr.state === 'dial' || cdr.state === 'dialedPending') {
        this.#dialEnters(cdr, bridge, now);
        handled ??= cdr;
      }
    }
    if (!handled) {
      // Every record of the channel is finished: a new one for its time in this bridge.
      handled = CdrObject.following(chain[chain.length - 1]!, this.#sequence++, now);
      chain.push(handled);
      handled.followPartyA(now, this.#inSubroutine(handled));
      if (!this.#singleEnters(handled, bridge)) handled.finish(now);
    }
    this.#pairings(handled, bridge, now);
  }

  /** handle_bridge_pairings / bridge_candidate_process: each other party of the bridge gets a record with the newcomer. */
  #pairings(cdr: CdrObject, bridge: Model<'Bridge'>, now: number): void {
    for (const otherId of bridge.channels) {
      const chain = this.#chainOf(otherId);
      if (!chain) continue;
      for (const candidate of chain) {
        if (candidate.bridge !== bridge.id) continue;
        if (candidate.partyA.id === cdr.partyA.id || cdr.partyB?.id === candidate.partyA.id) break;
        if (firstParty(cdr.partyA, cdr.partyAFlag, candidate.partyA, candidate.partyAFlag) === 'left') {
          this.#appendBridged(this.#chainOf(cdr.partyA.id), cdr, candidate.partyA, bridge.id, now);
        } else if (candidate.partyB && candidate.partyB.id !== cdr.partyA.id) {
          this.#appendBridged(chain, candidate, cdr.partyA, bridge.id, now);
        } else {
          this.#setPartyB(candidate, cdr.partyA);
          // It may have been finished when it entered alone; it goes on now that it has a party B.
          candidate.end = 0;
          candidate.disposition = undefined;
        }
        break;
      }
    }
  }

  /** bridge_candidate_add_to_cdr: a new record of party A with this party B, in the bridge. */
  #appendBridged(chain: CdrObject[] | undefined, last: CdrObject, partyB: ChannelView, bridgeId: string, now: number): void {
    if (!chain) return;
    const next = CdrObject.following(chain[chain.length - 1] ?? last, this.#sequence++, now);
    this.#setPartyB(next, partyB);
    next.bridge = bridgeId;
    next.state = 'bridge';
    chain.push(next);
  }

  /** single_state_process_bridge_enter: finds a party B among the records already in the bridge; false when none was found. */
  #singleEnters(cdr: CdrObject, bridge: Model<'Bridge'>): boolean {
    cdr.bridge = bridge.id;
    cdr.state = 'bridge';
    if (bridge.channels.length <= 1) return true;
    for (const otherId of bridge.channels) {
      if (otherId === cdr.partyA.id) continue;
      for (const candidate of this.#chainOf(otherId) ?? []) {
        if (candidate.state !== 'bridge' || candidate.bridge !== bridge.id) continue;
        if (this.#compare(cdr, candidate)) return true;
      }
    }
    return false;
  }

  /** single_state_bridge_enter_comparison: true when the record got its party B from the candidate. */
  #compare(cdr: CdrObject, candidate: CdrObject): boolean {
    if (firstParty(cdr.partyA, cdr.partyAFlag, candidate.partyA, candidate.partyAFlag) === 'left') {
      this.#setPartyB(cdr, candidate.partyA);
      // We took them: their record, alone until now, ends here (its state stays: it may go on).
      if (!candidate.partyB) candidate.finish(this.#now());
      return true;
    }
    const theirB = candidate.partyB && this.#channels.get(candidate.partyB.id);
    if (!theirB || theirB.id === cdr.partyA.id) return false;
    if (firstParty(cdr.partyA, cdr.partyAFlag, theirB, false) === 'left') {
      this.#setPartyB(cdr, theirB);
      return true;
    }
    return false;
  }

  /** dial_state_process_bridge_enter: the dialed party B is found in the bridge. */
  #dialEnters(cdr: CdrObject, bridge: Model<'Bridge'>, now: number): void {
    cdr.bridge = bridge.id;
    cdr.state = 'bridge';
    const b = cdr.partyB;
    if (!b || bridge.channels.length <= 1) return;
    for (const candidate of this.#chainOf(b.id) ?? []) {
      if (candidate.state !== 'bridge' || candidate.bridge !== bridge.id) continue;
      if (!candidate.partyB) candidate.finish(now);
      return;
    }
  }

  /** bridge_state_process_bridge_leave and the party B side (cdr_object_party_b_left_bridge_cb). */
  #leftBridge(channelId: string, bridgeId: string, now: number): void {
    let left = false;
    for (const cdr of this.#chainOf(channelId) ?? []) {
      if (cdr.state !== 'bridge' || cdr.bridge !== bridgeId) continue;
      cdr.finalize(now);
      cdr.bridge = '';
      left = true;
    }
    if (!left) return;
    for (const cdr of this.#asPartyB.get(channelId) ?? []) {
      if (cdr.state === 'bridge' && cdr.bridge === bridgeId && cdr.partyB?.id === channelId) cdr.finalize(now);
    }
  }

  // ---- the dialplan's verbs (ResetCDR, NoCDR, CDR(), CDR_PROP()) ------------------------------

  /** The record CDR() reads: the newest unfinished one of the channel, else its newest. */
  current(channelId: string): CdrObject | undefined {
    const chain = this.#chainOf(channelId);
    if (!chain) return undefined;
    for (let i = chain.length - 1; i >= 0; i--) if (chain[i]!.state !== 'finalized') return chain[i];
    return chain[chain.length - 1];
  }

  /** The records a write applies to: every unfinished one, and the newest (ast_cdr_setvar). */
  writable(channelId: string): CdrObject[] {
    const chain = this.#chainOf(channelId) ?? [];
    return chain.filter((cdr, i) => cdr.state !== 'finalized' || i === chain.length - 1);
  }

  /** ResetCDR: every record of the channel starts again now (ast_cdr_reset); `keepVariables` is option v. */
  reset(channelId: string, keepVariables: boolean): boolean {
    const chain = this.#chainOf(channelId);
    if (!chain) return false;
    const now = this.#now();
    for (const cdr of chain) {
      if (!keepVariables) cdr.clearVariables();
      cdr.start = now;
      cdr.end = 0;
      cdr.answer = 0;
      cdr.checkAnswer(now);
    }
    return true;
  }

  /** CDR_PROP(disable) and NoCDR: every record of the channel, and those it will make, (not) posted. */
  setDisabled(channelId: string, disabled: boolean): boolean {
    const chain = this.#chainOf(channelId);
    if (!chain) return false;
    for (const cdr of chain) cdr.disabled = disabled;
    return true;
  }

  /** CDR_PROP(party_a): the channel's newest record prefers it as party A in bridges. */
  setPartyA(channelId: string, flag: boolean): boolean {
    const chain = this.#chainOf(channelId);
    if (!chain) return false;
    chain[chain.length - 1]!.partyAFlag = flag;
    return true;
  }
}

function partyOf(view: ChannelView): PartyB {
  return { id: view.id, name: view.name, accountcode: view.accountcode, hangupCause: view.hangupCause };
}
