// Q.850 hangup causes, their names as Asterisk reports them (cause_txt), and the ARI hangup
// reasons that map onto them.

export const CAUSES: Readonly<Record<number, string>> = {
  0: 'Unknown',
  1: 'Unallocated (unassigned) number',
  2: 'No route to specified transmit network',
  3: 'No route to destination',
  6: 'Channel unacceptable',
  7: 'Call awarded and being delivered in an established channel',
  16: 'Normal Clearing',
  17: 'User busy',
  18: 'No user responding',
  19: 'User alerting, no answer',
  20: 'Subscriber absent',
  21: 'Call Rejected',
  22: 'Number changed',
  23: 'Redirected to new destination',
  26: 'Answered elsewhere',
  27: 'Destination out of order',
  28: 'Invalid number format',
  29: 'Facility rejected',
  30: 'Response to STATus ENQuiry',
  31: 'Normal, unspecified',
  34: 'Circuit/channel congestion',
  38: 'Network out of order',
  41: 'Temporary failure',
  42: 'Switching equipment congestion',
  43: 'Access information discarded',
  44: 'Requested channel not available',
  50: 'Requested facility not subscribed',
  52: 'Outgoing call barred',
  54: 'Incoming call barred',
  57: 'Bearer capability not authorized',
  58: 'Bearer capability not available',
  65: 'Bearer capability not implemented',
  66: 'Channel type not implemented',
  69: 'Requested facility not implemented',
  81: 'Invalid call reference value',
  88: 'Incompatible destination',
  95: 'Invalid message unspecified',
  96: 'Mandatory information element is missing',
  97: 'Message type nonexist.',
  98: 'Wrong message',
  99: 'Info. element nonexist or not implemented',
  100: 'Invalid information element contents',
  101: 'Message not compatible with call state',
  102: 'Recover on timer expiry',
  111: 'Protocol error, unspecified',
  127: 'Interworking, unspecified',
};

export const CAUSE = {
  unallocated: 1,
  noRoute: 3,
  normal: 16,
  busy: 17,
  noResponse: 18,
  noAnswer: 19,
  rejected: 21,
  answeredElsewhere: 26,
  invalidNumber: 28,
  normalUnspecified: 31,
  congestion: 34,
  failure: 38,
  codecMismatch: 58,
  interworking: 127,
} as const;

/**
 * Why a hang-up was requested from outside the channel (Asterisk's AST_SOFTHANGUP_* flags): a soft
 * hang-up's ChannelHangupRequest carries this flag as its `cause`, not the hang-up cause.
 */
export const SOFT_HANGUP = {
  /** The technology or a bridge asked (AST_SOFTHANGUP_DEV). */
  dev: 1,
  asyncGoto: 2,
  shutdown: 4,
  timeout: 8,
  /** The dialplan run ended (AST_SOFTHANGUP_APPUNLOAD, as __ast_pbx_run raises it). */
  appUnload: 16,
  /** Asked for by name: ARI DELETE, the CLI (AST_SOFTHANGUP_EXPLICIT). */
  explicit: 32,
  hangupExec: 128,
} as const;

export type SoftHangupFlag = (typeof SOFT_HANGUP)[keyof typeof SOFT_HANGUP];

/**
 * ARI hangup `reason` values (and Hangup()'s cause names) and their causes. No prototype, so a
 * name such as `constructor` is simply not found.
 */
export const REASON_CAUSES: Readonly<Record<string, number>> = Object.assign(Object.create(null) as Record<string, number>, {
  normal: CAUSE.normal,
  busy: CAUSE.busy,
  congestion: CAUSE.congestion,
  no_answer: CAUSE.noAnswer,
  timeout: CAUSE.noResponse,
  rejected: CAUSE.rejected,
  unallocated: CAUSE.unallocated,
  normal_unspecified: CAUSE.normalUnspecified,
  number_incomplete: CAUSE.invalidNumber,
  codec_mismatch: CAUSE.codecMismatch,
  interworking: CAUSE.interworking,
  failure: CAUSE.failure,
  answered_elsewhere: CAUSE.answeredElsewhere,
});

export function causeText(cause: number): string {
  return CAUSES[cause] ?? 'Unknown';
}

/** The Dial application's DIALSTATUS for a channel that ended with `cause` before answering. */
export function dialStatusForCause(cause: number): 'BUSY' | 'NOANSWER' | 'CONGESTION' | 'CHANUNAVAIL' | 'CANCEL' {
  switch (cause) {
    case CAUSE.busy:
      return 'BUSY';
    case CAUSE.noAnswer:
    case CAUSE.noResponse:
      return 'NOANSWER';
    case CAUSE.congestion:
    case 42:
    case 44:
      return 'CONGESTION';
    case CAUSE.unallocated:
    case 3:
    case 66:
      return 'CHANUNAVAIL';
    default:
      return 'CANCEL';
  }
}
