// A REFER on a call the dialplan runs (Dial), completed as Asterisk's res_pjsip_refer does without
// ARI: the REFER is accepted (202) with a NOTIFY "100 Trying", the transfer is carried out by the
// core, and a final NOTIFY reports its outcome as a sipfrag (200 OK, or 400/403/404/500); then the
// transferer is hung up (BYE).
// - Blind (Refer-To without Replaces): the transferer's peer runs the dialplan at Refer-To's user
//   part (user options cut off, `s` when empty) in TRANSFER_CONTEXT, else the endpoint's context;
//   404 when that extension does not exist.
// - Attended (Refer-To with Replaces naming another call of ours): the peers of both calls are
//   connected, the transferer's two legs hung up. Replaces naming a call we do not have goes to the
//   `external_replaces` extension as a blind transfer (404 without one), as in Asterisk.
// `Refer-Sub: false` (RFC 4488): no NOTIFYs, the REFER's final response carries the outcome.
import type { TransferResult } from '../../core/channels/call-transfers.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import { formatUri } from '../../sip/uri.ts';
import { nameAddr, plainSipUri } from './addresses.ts';
import type { SipCall } from './call.ts';
import type { ParsedReferTo } from './refer.ts';
import type { PjsipRuntime } from './runtime.ts';

/** The SIP status of a transfer's outcome (Asterisk's xfer_response_code2sip). */
const STATUS_OF_RESULT: Readonly<Record<TransferResult, number>> = { Success: 200, Invalid: 400, 'Not Permitted': 403, Fail: 500 };
const REASONS: Readonly<Record<number, string>> = {
  100: 'Trying',
  200: 'OK',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  481: 'Call/Transaction Does Not Exist',
  500: 'Server Internal Error',
  503: 'Service Unavailable',
};

/** A transfer context or extension longer than this is not looked up (a peer's bytes). */
const MAX_EXTEN_LENGTH = 256;

/** Longest Referred-By kept for the transferee's dialplan (a peer's bytes). */
const MAX_REFERRED_BY_LENGTH = 1024;

/**
 * What res_pjsip_refer leaves on a blind transfer's transferee for its dialplan (captured):
 * SIPTRANSFER, SIPREFERRINGCONTEXT, the Referred-By header as sent (inherited by whom it dials,
 * hence `__`) when there is one, and Refer-To's URI.
 */
function transfereeVariables(transferContext: string, referTo: ParsedReferTo, referredBy: string | undefined): Array<[string, string]> {
  const variables: Array<[string, string]> = [
    ['SIPTRANSFER', 'yes'],
    ['SIPREFERRINGCONTEXT', transferContext],
  ];
  const by = referredBy?.trim();
  if (by && by.length <= MAX_REFERRED_BY_LENGTH) variables.push(['__SIPREFERREDBYHDR', by]);
  variables.push(['SIPREFERTOHDR', formatUri(referTo.uri)]);
  return variables;
}

export class DialplanTransfer {
  readonly #runtime: PjsipRuntime;

  constructor(runtime: PjsipRuntime) {
    this.#runtime = runtime;
  }

  /** Carries out a REFER received on `call` whose channel is in the dialplan. */
  refer(call: SipCall, channel: Channel, referTo: ParsedReferTo, subscribed: boolean, tx: ServerTransaction): void {
    if (subscribed) {
      tx.reply(202, 'Accepted');
      this.#notify(call, 100, false);
    }
    const status = this.#transfer(call, channel, referTo, tx.request.get('referred-by') ?? tx.request.get('b'));
    if (!subscribed) tx.reply(status, REASONS[status], [['Refer-Sub', 'false']]);
    else this.#notify(call, status, true);
    this.#runtime.log?.info({ channel: channel.name, status, attended: referTo.replaces !== undefined }, 'REFER in a dialplan call');
  }

  /** The transfer itself; the SIP status reporting its outcome. */
  #transfer(call: SipCall, channel: Channel, referTo: ParsedReferTo, referredBy: string | undefined): number {
    const context = this.#runtime.context;
    if (!context) return 503;
    const transferContext = this.#transferContext(call, channel);
    const variables = transfereeVariables(transferContext, referTo, referredBy);
    if (referTo.replaces) {
      const other = this.#runtime.calls.replaced(referTo.replaces);
      if (other && other !== call) {
        if (!other.channel || other.channel.hangingUp) return 503;
        return STATUS_OF_RESULT[context.transfers.attended(channel, other.channel)];
      }
      if (!context.extensionExists(transferContext, 'external_replaces')) return 404;
      return STATUS_OF_RESULT[context.transfers.blind(channel, { context: transferContext, exten: 'external_replaces' }, variables)];
    }
    const exten = referTo.destination === '' ? 's' : referTo.destination;
    if (exten.length > MAX_EXTEN_LENGTH || !context.extensionExists(transferContext, exten)) return 404;
    return STATUS_OF_RESULT[context.transfers.blind(channel, { context: transferContext, exten }, variables)];
  }

  /** TRANSFER_CONTEXT on the transferer's channel, else its endpoint's context. */
  #transferContext(call: SipCall, channel: Channel): string {
    const variable = channel.getVariable('TRANSFER_CONTEXT');
    if (variable && variable.length <= MAX_EXTEN_LENGTH) return variable;
    return this.#runtime.config.endpoints.get(call.endpointId)?.context ?? channel.location.context;
  }

  #notify(call: SipCall, status: number, final: boolean): void {
    call.requestInDialog(
      'NOTIFY',
      [
        ['Event', 'refer'],
        ['Subscription-State', final ? 'terminated;reason=noresource' : 'active;expires=60'],
        ['Contact', nameAddr(plainSipUri('patchbay', this.#runtime.publicHost, this.#runtime.port))],
      ],
      `SIP/2.0 ${status} ${REASONS[status] ?? ''}\r\n`,
      'message/sipfrag;version=2.0',
    );
  }
}
