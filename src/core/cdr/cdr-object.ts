// One CDR in the making (Asterisk's struct cdr_object): a party A, perhaps a party B, the state
// of the call between them, and the times. A channel has a chain of them: a new one starts when
// the channel goes on to something new once its current one is finished (cdr.c forks the same way).
import type { ChannelView } from './channel-view.ts';
import { DISPOSITION_CODE, mergeCallerId, type CallDetailRecord, type Disposition } from './record.ts';

/** cdr.c's states: Single (alone), Dial (dialing party B), DialedPending (dial answered, not yet bridged), Bridge, Finalized. */
/** A posted record's variables when it has none: shared, frozen (a record is read, never written). */
const NO_VARIABLES: Readonly<Record<string, string>> = Object.freeze({});

export type CdrState = 'single' | 'dial' | 'dialedPending' | 'bridge' | 'finalized';

/** What a party B was when the record last saw it (a copy: party B may be gone when the record posts). */
export interface PartyB {
  readonly id: string;
  readonly name: string;
  readonly accountcode: string;
  /** A dialed party B's own hang-up cause, for the disposition of a call party A did not answer. */
  readonly hangupCause: number;
}

export interface DispositionRules {
  /** cdr.conf `congestion`: CONGESTION is reported as such, not as FAILED. */
  readonly congestion: boolean;
  /** cdr.conf `initiatedseconds`. */
  readonly initiatedSeconds: boolean;
}

export class CdrObject {
  state: CdrState = 'single';
  partyB: PartyB | undefined;
  start: number;
  answer = 0;
  end = 0;
  disposition: Disposition | undefined;
  appl = '';
  data = '';
  context = '';
  exten = '';
  linkedid: string;
  bridge = '';
  /** AST_CDR_LOCK_APP: the application that joined the parties (Dial) stays lastapp. */
  lockApp = false;
  /** AST_CDR_FLAG_DISABLE_ALL (NoCDR, CDR_PROP(disable)): the record is not posted. */
  disabled = false;
  /** AST_CDR_FLAG_PARTY_A (CDR_PROP(party_a)). */
  partyAFlag = false;
  userfield = '';
  /**
   * CDR(name)=value variables: made at the first one written (most records have none, and an
   * empty Map per record outlived the young generation with the call; docs/performance.md, eighth pass).
   */
  #variables: Map<string, string> | undefined;

  /** The record's variables, made on first use (CDR() reads and writes them). */
  get variables(): Map<string, string> {
    return (this.#variables ??= new Map());
  }

  /** Forgets every variable (ResetCDR without `v`). */
  clearVariables(): void {
    this.#variables = undefined;
  }

  constructor(
    readonly partyA: ChannelView,
    readonly sequence: number,
    now: number,
    private readonly rules: DispositionRules,
  ) {
    this.start = now;
    this.linkedid = partyA.linkedid;
    this.checkAnswer(now);
  }

  /** A CDR appended to a chain takes over the dialplan position and the flags of the last one. */
  static following(last: CdrObject, sequence: number, now: number): CdrObject {
    const next = new CdrObject(last.partyA, sequence, now, last.rules);
    next.linkedid = last.linkedid;
    next.appl = last.appl;
    next.data = last.data;
    next.context = last.context;
    next.exten = last.exten;
    next.disabled = last.disabled;
    next.userfield = last.userfield;
    if (last.#variables !== undefined) next.#variables = new Map(last.#variables);
    return next;
  }

  checkAnswer(now: number): void {
    if (this.partyA.answered && this.answer === 0) this.answer = now;
  }

  /** base_process_party_a: follows party A's dialplan position, application and answer. */
  followPartyA(now: number, inSubroutine: boolean): void {
    const a = this.partyA;
    // Where a subroutine runs is not where the call went: dst and dcontext stay (cdr.c's AST_FLAG_SUBROUTINE_EXEC rule).
    if (!inSubroutine) {
      this.context = a.context;
      this.exten = a.exten;
    }
    if (!this.lockApp && a.app !== '' && (!/^appdial/i.test(a.app) || this.appl === '')) {
      this.appl = a.app;
      this.data = a.data;
      // Pre-dial handlers would otherwise leave their own application as lastapp.
      if (a.app === 'Dial') this.lockApp = true;
    }
    this.linkedid = a.linkedid;
    this.checkAnswer(now);
    if (a.dead) this.finalize(now);
  }

  /** cdr_object_finalize: sets the end and, when nothing decided it yet, the disposition from the causes. */
  finalize(now: number): void {
    this.state = 'finalized';
    this.finish(now);
  }

  /** Sets the end and the disposition without changing the state (a record a bridge took over). */
  finish(now: number): void {
    if (this.end !== 0) return;
    this.end = now;
    if (this.disposition !== undefined) return;
    if (this.answer !== 0) this.disposition = 'ANSWERED';
    else if (this.partyA.hangupCause) this.disposition = dispositionOfCause(this.partyA.hangupCause, this.rules.congestion);
    else if (this.partyB?.hangupCause) this.disposition = dispositionOfCause(this.partyB.hangupCause, this.rules.congestion);
    else this.disposition = 'FAILED';
  }

  /** The record as posted (cdr_object_create_public_records); undefined for a dialed party A alone, which Asterisk never posts. */
  publish(): CallDetailRecord | undefined {
    if (this.partyA.dialed && !this.partyB) return undefined;
    return this.record();
  }

  /** The record's fields as they stand (CDR() reads them during the call: end and durations count to now). */
  record(): CallDetailRecord {
    const a = this.partyA;
    const end = this.end || Date.now();
    let billsec = 0;
    if (this.answer !== 0) {
      const ms = Math.max(0, end - this.answer);
      billsec = this.rules.initiatedSeconds && ms % 1000 >= 500 ? Math.floor(ms / 1000) + 1 : Math.floor(ms / 1000);
    }
    return {
      accountcode: a.accountcode,
      src: a.callerNumber,
      dst: this.exten,
      dcontext: this.context,
      clid: mergeCallerId(a.callerName, a.callerNumber),
      channel: a.name,
      dstchannel: this.partyB?.name ?? '',
      lastapp: this.appl,
      lastdata: this.data,
      start: this.start,
      answer: this.answer,
      end: this.end,
      duration: Math.floor(Math.max(0, end - this.start) / 1000),
      billsec,
      disposition: this.disposition ?? 'NO ANSWER',
      amaflags: a.amaflags,
      uniqueid: a.id,
      linkedid: this.linkedid,
      userfield: this.userfield,
      peeraccount: this.partyB?.accountcode ?? '',
      sequence: this.sequence,
      variables: this.#variables === undefined ? NO_VARIABLES : Object.fromEntries(this.#variables),
    };
  }

  /** The numeric disposition the `unanswered` filter compares (AST_CDR_NULL while undecided). */
  get dispositionCode(): number {
    return DISPOSITION_CODE[this.disposition ?? 'NULL'];
  }
}

/** cdr_object_set_disposition: a hang-up cause as a disposition; undefined leaves it undecided (printed NO ANSWER). */
function dispositionOfCause(cause: number, congestion: boolean): Disposition | undefined {
  switch (cause) {
    case 17:
      return 'BUSY';
    case 34:
      return congestion ? 'CONGESTION' : 'FAILED';
    case 3:
    case 20:
      return 'FAILED';
    case 16:
    case 19:
      return 'NO ANSWER';
    default:
      return undefined;
  }
}

/** dial_status_to_disposition: a Dial() outcome as the caller's disposition. */
export function dispositionOfDialStatus(status: string, congestion: boolean): Disposition {
  switch (status) {
    case 'ANSWER':
      return 'ANSWERED';
    case 'BUSY':
      return 'BUSY';
    case 'CANCEL':
    case 'NOANSWER':
      return 'NO ANSWER';
    case 'CONGESTION':
      return congestion ? 'CONGESTION' : 'FAILED';
    default:
      return 'FAILED';
  }
}
