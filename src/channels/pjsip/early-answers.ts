// Which SDP answer to our INVITE sets the call's media, once an early (18x) answer has: the rules of
// pjsip's INVITE session (sip_inv.c) and res_pjsip_session's gate on them, as Asterisk 22 runs them.
// A forked INVITE gets early answers from several far ends (To tags) — gateways each playing an
// announcement — and a far end may change its SDP between its 18x and its 2xx.
//
// pjsip takes a later answer only when the answer in force came in an 18x, and then
// - from another fork: always in a 2xx, in an 18x only with the system's follow_early_media_fork;
// - from the same early dialog: in an 18x or the 2xx, with the system's accept_multiple_sdp_answers,
//   and only when the 18x that set it was not sent reliably (100rel: RFC 6337 §3.1.1).
// What pjsip took is the session's answer from then on (a later one is judged against its tag), but
// res_pjsip_session moves the media to it only with the endpoint's option of the same name: the
// endpoint's follow_early_media_fork for another fork (a 2xx's too), its accept_multiple_sdp_answers
// for the same dialog.

/** The options of both layers: the system section's (pjsip's) and the endpoint's (res_pjsip_session's). */
export interface EarlyAnswerOptions {
  readonly systemFollowEarlyMediaFork: boolean;
  readonly systemAcceptMultipleSdpAnswers: boolean;
  readonly followEarlyMediaFork: boolean;
  readonly acceptMultipleSdpAnswers: boolean;
}

/** Asterisk's defaults: another fork's early media is followed, the same dialog's later SDP is not. */
export const DEFAULT_EARLY_ANSWER_OPTIONS: EarlyAnswerOptions = {
  systemFollowEarlyMediaFork: true,
  systemAcceptMultipleSdpAnswers: false,
  followEarlyMediaFork: true,
  acceptMultipleSdpAnswers: false,
};

/** Both layers' options of a call: the system section's as its technology reads them now, the endpoint's. */
export function earlyAnswerOptions(
  services: { readonly systemEarlyAnswers?: { readonly followEarlyMediaFork: boolean; readonly acceptMultipleSdpAnswers: boolean } },
  endpoint: { readonly followEarlyMediaFork?: boolean; readonly acceptMultipleSdpAnswers?: boolean },
): EarlyAnswerOptions {
  const system = services.systemEarlyAnswers;
  return {
    systemFollowEarlyMediaFork: system?.followEarlyMediaFork ?? true,
    systemAcceptMultipleSdpAnswers: system?.acceptMultipleSdpAnswers ?? false,
    followEarlyMediaFork: endpoint.followEarlyMediaFork ?? true,
    acceptMultipleSdpAnswers: endpoint.acceptMultipleSdpAnswers ?? false,
  };
}

/** One SDP-carrying response to our INVITE, as the rules read it. */
interface AnswerResponse {
  readonly status: number;
  /** Its To tag: the fork (early dialog) it comes from. */
  readonly tag: string | undefined;
  /** A 1xx sent reliably (Require: 100rel with an RSeq). */
  readonly reliable: boolean;
}

/**
 * What to do with a response's SDP: `first` (the first answer: it sets the media), `fork` (another
 * fork's answer: the media moves to another far end), `update` (the same dialog's new SDP), `noted`
 * (taken as the session's answer, but the endpoint keeps the media where it is), `ignored`.
 */
type AnswerVerdict = 'first' | 'fork' | 'update' | 'noted' | 'ignored';

/** The answer in force for one call's INVITE: which response set it. */
export class EarlyAnswers {
  #done: { tag: string | undefined; early: boolean; reliable: boolean } | undefined;

  constructor(private readonly options: () => EarlyAnswerOptions) {}

  /** What a response's SDP does; `taken` must follow when it is to be applied (and was usable). */
  judge(response: AnswerResponse): AnswerVerdict {
    const done = this.#done;
    if (!done) return 'first';
    if (!done.early) return 'ignored';
    const options = this.options();
    const final = response.status >= 200;
    const early18x = response.status >= 180 && response.status <= 189;
    const sameDialog = sameTag(done.tag, response.tag);
    if (sameDialog) {
      if (done.reliable || !(final || early18x) || !options.systemAcceptMultipleSdpAnswers) return 'ignored';
      return options.acceptMultipleSdpAnswers ? 'update' : 'noted';
    }
    if (!final && !(early18x && options.systemFollowEarlyMediaFork)) return 'ignored';
    return options.followEarlyMediaFork ? 'fork' : 'noted';
  }

  /** The response's SDP is the session's answer now (applied to the media, or only noted). */
  taken(response: AnswerResponse): void {
    this.#done = { tag: response.tag, early: response.status < 200, reliable: response.status < 200 && response.reliable };
  }
}

/** To tags compare without regard to case, as pjsip compares them. */
function sameTag(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.toLowerCase() === b.toLowerCase();
}
