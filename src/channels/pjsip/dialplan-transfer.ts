// A REFER on a call the dialplan runs (Dial), completed as Asterisk's res_pjsip_refer does without
// ARI: the REFER is accepted (202), the transfer is carried out by the core, and the implicit
// subscription's NOTIFYs (refer-progress.ts) report its outcome as sipfrags in Asterisk's order:
// "100 Trying" held back until there is news, then the transferee's progress for a blind transfer
// (200 once it is answered, joins a bridge or is sent audio; 503 when it hangs up first), the
// outcome at once for an attended or a failed one (400/403/404/500). After a transfer carried out,
// the transferer's dialog is left to the phone to end with its BYE, as Asterisk's deferred session
// termination does; Patchbay's BYE goes only if the phone has not sent one 60 s after the REFER.
// - Blind (Refer-To without Replaces): the transferer's peer runs the dialplan at Refer-To's user
//   part (user options cut off, `s` when empty) in TRANSFER_CONTEXT, else the endpoint's context;
//   404 when that extension does not exist.
// - Attended (Refer-To with Replaces naming another call of ours): the peers of both calls are
//   connected, the transferer's two legs hung up. Replaces naming a call we do not have goes to the
//   `external_replaces` extension as a blind transfer (404 without one), as in Asterisk.
// `Refer-Sub: false` (RFC 4488): no NOTIFYs, the REFER's final response carries the outcome.
import type { TransferResult } from '../../core/channels/call-transfers.ts';
import type { Channel } from '../../core/channels/channel.ts';
import { TwoPartyCall } from '../../core/channels/two-party-call.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import { formatUri } from '../../sip/uri.ts';
import { nameAddr, plainSipUri } from './addresses.ts';
import type { SipCall } from './call.ts';
import { formatReplaces, type ParsedReferTo } from './refer.ts';
import { reasonPhrase, ReferProgress, watchTransferee } from './refer-progress.ts';
import type { PjsipRuntime } from './runtime.ts';

/** The SIP status of a transfer's outcome (Asterisk's xfer_response_code2sip). */
export const STATUS_OF_RESULT: Readonly<Record<TransferResult, number>> = { Success: 200, Invalid: 400, 'Not Permitted': 403, Fail: 500 };
/** A transfer context or extension longer than this is not looked up (a peer's bytes). */
export const MAX_EXTEN_LENGTH = 256;

/** Longest Referred-By kept for the transferee's dialplan (a peer's bytes). */
const MAX_REFERRED_BY_LENGTH = 1024;

/**
 * What res_pjsip_refer leaves on a blind transfer's transferee for its dialplan (captured):
 * SIPTRANSFER, SIPREFERRINGCONTEXT, the Referred-By header as sent (inherited by whom it dials,
 * hence `__`) when there is one, for a Replaces naming a call we do not have (`external_replaces`)
 * that Replaces (inherited too: the INVITE of a PJSIP channel it dials carries it, headers.ts
 * referHeaders), and Refer-To's URI as a request URI (pjsip prints no `?headers` there).
 */
export function transfereeVariables(transferContext: string, referTo: ParsedReferTo, referredBy: string | undefined): Array<[string, string]> {
  const variables: Array<[string, string]> = [
    ['SIPTRANSFER', 'yes'],
    ['SIPREFERRINGCONTEXT', transferContext],
  ];
  const by = referredBy?.trim();
  if (by && by.length <= MAX_REFERRED_BY_LENGTH) variables.push(['__SIPREFERREDBYHDR', by]);
  if (referTo.replaces) variables.push(['__SIPREPLACESHDR', formatReplaces(referTo.replaces)]);
  variables.push(['SIPREFERTOHDR', formatUri({ ...referTo.uri, headers: new Map() })]);
  return variables;
}

export class DialplanTransfer {
  readonly #runtime: PjsipRuntime;

  constructor(runtime: PjsipRuntime) {
    this.#runtime = runtime;
  }

  /** Carries out a REFER received on `call` whose channel is in the dialplan. */
  refer(call: SipCall, channel: Channel, referTo: ParsedReferTo, subscribed: boolean, tx: ServerTransaction): void {
    // The subscription holds the dialog from the 202 on: a BYE the transfer causes waits for its last NOTIFY.
    const usage = subscribed ? call.dialogUsage() : undefined;
    if (subscribed && !usage) return void tx.reply(481, 'Call/Transaction Does Not Exist');
    const progress = usage ? new ReferProgress(usage, nameAddr(plainSipUri('patchbay', this.#runtime.publicHost, this.#runtime.port))) : undefined;
    if (progress) tx.reply(202, 'Accepted');
    // The transferer's dialog is the phone's to end (Asterisk defers the session's termination
    // around the transfer): its BYE, once the transfer hung the channel up, waits for the phone's.
    const deferral = call.deferTermination();
    const { status, transferee } = this.#transfer(call, channel, referTo, tx.request.get('referred-by') ?? tx.request.get('b'));
    if (status !== 200) deferral?.cancel();
    if (!progress) tx.reply(status, reasonPhrase(status), [['Refer-Sub', 'false']]);
    else if (status === 200 && transferee) watchTransferee(transferee, progress);
    else progress.finish(status);
    this.#runtime.log?.info({ channel: channel.name, status, attended: referTo.replaces !== undefined }, 'REFER in a dialplan call');
  }

  /** The transfer itself: the SIP status reporting its outcome and, for a blind one, whom it moved. */
  #transfer(call: SipCall, channel: Channel, referTo: ParsedReferTo, referredBy: string | undefined): { status: number; transferee?: Channel } {
    const context = this.#runtime.context;
    if (!context) return { status: 503 };
    const transferContext = this.#transferContext(call, channel);
    const variables = transfereeVariables(transferContext, referTo, referredBy);
    if (referTo.replaces) {
      const other = this.#runtime.calls.replaced(referTo.replaces);
      if (other && other !== call) {
        if (!other.channel || other.channel.hangingUp) return { status: 503 };
        return { status: STATUS_OF_RESULT[context.transfers.attended(channel, other.channel)] };
      }
      if (!context.extensionExists(transferContext, 'external_replaces')) return { status: 404 };
      return this.#blind(channel, transferContext, 'external_replaces', variables);
    }
    const exten = referTo.destination === '' ? 's' : referTo.destination;
    if (exten.length > MAX_EXTEN_LENGTH || !context.extensionExists(transferContext, exten)) return { status: 404 };
    return this.#blind(channel, transferContext, exten, variables);
  }

  #blind(channel: Channel, transferContext: string, exten: string, variables: Array<[string, string]>): { status: number; transferee?: Channel } {
    // The peer before the transfer: the channel whose progress the subscription then follows.
    const transferee = TwoPartyCall.of(channel)?.peerOf(channel);
    const result = this.#runtime.context?.transfers.blind(channel, { context: transferContext, exten }, variables) ?? 'Fail';
    return { status: STATUS_OF_RESULT[result], ...(transferee ? { transferee } : {}) };
  }

  #transferContext(call: SipCall, channel: Channel): string {
    return transferContextOf(this.#runtime, call, channel);
  }
}

/** TRANSFER_CONTEXT on the transferer's channel, else its endpoint's context (Asterisk's DETERMINE_TRANSFER_CONTEXT). */
export function transferContextOf(runtime: PjsipRuntime, call: SipCall, channel: Channel): string {
  const variable = channel.getVariable('TRANSFER_CONTEXT');
  if (variable && variable.length <= MAX_EXTEN_LENGTH) return variable;
  return runtime.config.endpoints.get(call.endpointId)?.context ?? channel.location.context;
}
