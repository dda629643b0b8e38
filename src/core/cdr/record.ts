// The shapes of call records as Asterisk's backends receive them (struct ast_cdr, struct ast_event
// for CEL), and the words Asterisk prints for their numeric fields.

/** ast_cdr_disp2str: what a record's disposition is called in every backend. */
export type Disposition = 'NO ANSWER' | 'FAILED' | 'BUSY' | 'ANSWERED' | 'CONGESTION';
export const DISPOSITIONS: readonly Disposition[] = ['NO ANSWER', 'FAILED', 'BUSY', 'ANSWERED', 'CONGESTION'];

/**
 * Asterisk's numeric dispositions (enum ast_cdr_disposition). The order matters: cdr.conf's
 * `unanswered=no` drops a record without a party B whose disposition is below ANSWERED, so a
 * CONGESTION record (16) is kept while a BUSY one (4) is not, as in Asterisk.
 */
export const DISPOSITION_CODE: Readonly<Record<Disposition | 'NULL', number>> = Object.freeze({
  'NO ANSWER': 0,
  NULL: 1,
  FAILED: 2,
  BUSY: 4,
  ANSWERED: 8,
  CONGESTION: 16,
});

/** AMA flags (ast_channel_amaflags2string); a channel's default is DOCUMENTATION. */
export type AmaFlags = 'OMIT' | 'BILLING' | 'DOCUMENTATION';
export const AMA_FLAGS: readonly AmaFlags[] = ['OMIT', 'BILLING', 'DOCUMENTATION'];
/** AST_AMA_* numbers, as CDR(amaflags,u) reads and as a number may be written. */
export const AMA_CODE: Readonly<Record<AmaFlags, number>> = Object.freeze({ OMIT: 1, BILLING: 2, DOCUMENTATION: 3 });

/** Parses an AMA flag as Asterisk's ast_channel_string2amaflag does (name or number); undefined when unknown. */
export function parseAmaFlags(text: string): AmaFlags | undefined {
  const value = text.trim().toUpperCase();
  if (value === '1' || value === 'OMIT') return 'OMIT';
  if (value === '2' || value === 'BILLING') return 'BILLING';
  if (value === '3' || value === 'DOCUMENTATION') return 'DOCUMENTATION';
  return undefined;
}

/** One finished call detail record, as posted to the backends. Times are ms since the epoch; 0 = never. */
export interface CallDetailRecord {
  readonly accountcode: string;
  readonly src: string;
  readonly dst: string;
  readonly dcontext: string;
  readonly clid: string;
  readonly channel: string;
  readonly dstchannel: string;
  readonly lastapp: string;
  readonly lastdata: string;
  readonly start: number;
  readonly answer: number;
  readonly end: number;
  /** Whole seconds from start to end. */
  readonly duration: number;
  /** Whole seconds from answer to end (0 when never answered). */
  readonly billsec: number;
  readonly disposition: Disposition;
  readonly amaflags: AmaFlags;
  readonly uniqueid: string;
  readonly linkedid: string;
  readonly userfield: string;
  readonly peeraccount: string;
  /** Asterisk's global CDR sequence number (one per CDR object made since start). */
  readonly sequence: number;
  /** CDR(name)=value variables of the record. */
  readonly variables: Readonly<Record<string, string>>;
}

/** The CEL event types Patchbay raises (a subset of Asterisk's; see docs/cdr.md). */
export const CEL_EVENT_TYPES = [
  'CHAN_START',
  'CHAN_END',
  'ANSWER',
  'HANGUP',
  'BRIDGE_ENTER',
  'BRIDGE_EXIT',
  'APP_START',
  'APP_END',
  'LINKEDID_END',
  'USER_DEFINED',
] as const;
export type CelEventType = (typeof CEL_EVENT_TYPES)[number];
/** One channel event log entry, with the fields of Asterisk's cel_sqlite3_custom / cel_custom. */
export interface CelEvent {
  readonly eventtype: CelEventType;
  /** ms since the epoch. */
  readonly eventtime: number;
  readonly userdeftype: string;
  readonly cid_name: string;
  readonly cid_num: string;
  readonly cid_ani: string;
  readonly cid_rdnis: string;
  readonly cid_dnid: string;
  readonly exten: string;
  readonly context: string;
  readonly channame: string;
  readonly appname: string;
  readonly appdata: string;
  readonly amaflags: number;
  readonly accountcode: string;
  readonly peeraccount: string;
  readonly uniqueid: string;
  readonly linkedid: string;
  readonly userfield: string;
  readonly peer: string;
  /** JSON text of the event's extra fields ('' when none). */
  readonly extra: string;
}

/** `"name" <number>`, as ast_callerid_merge writes a record's clid (name or number alone when only one is known). */
export function mergeCallerId(name: string, number: string): string {
  if (name && number) return `"${name}" <${number}>`;
  return name || number;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM:SS` as Asterisk prints CDR times (local time, or UTC with `utc`); '' for 0. */
export function formatCdrTime(ms: number, utc = false): string {
  if (!ms) return '';
  // A record's start, answer and end, and the records of calls ending together, mostly fall in
  // the same second: the text depends only on the second (and the time zone, which does not change
  // within one), so the last one of each kind is remembered.
  const second = Math.floor(ms / 1000);
  const memory = utc ? utcMemory : localMemory;
  if (memory.second === second) return memory.text;
  const d = new Date(ms);
  const text = utc
    ? `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
    : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  memory.second = second;
  memory.text = text;
  return text;
}

const utcMemory = { second: Number.NaN, text: '' };
const localMemory = { second: Number.NaN, text: '' };
