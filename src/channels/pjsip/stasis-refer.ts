// A REFER on a channel in an application's bridge, with Asterisk's default transfer handling
// (PJSIP_TRANSFER_HANDLING not `ari-only`, transfer-handling.ts). An attended one (Replaces naming
// another of our calls in a bridge) links the two bridges with a Local pair, as Asterisk's bridging
// core does for Stasis bridges (core/channels/stasis-bridge-attended.ts; #attended below). One whose
// Replaces names a call we do not have is a blind transfer to `external_replaces`. A blind
// one goes as captured from Asterisk 22.10.1:
// the core swaps a Local channel to the Refer-To target into the transferer's seat
// (core/channels/stasis-bridge-transfer.ts: StasisStart with replace_channel, the swap,
// BridgeBlindTransfer), then the REFER gets 202 and the subscription NOTIFY 100 and 200 at once —
// the transfer is done as far as the phone is concerned, whatever the new call does. The
// transferer stays in its application until its phone's BYE; if none came 60 s after the REFER,
// its channel is hung up (Asterisk's deferred session end), which sends our BYE.
import { CAUSE } from '../../core/channels/causes.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import { nameAddr, plainSipUri } from './addresses.ts';
import { TERMINATION_DEFERRAL_MS } from './call-dialog-requests.ts';
import type { SipCall } from './call.ts';
import { MAX_EXTEN_LENGTH, STATUS_OF_RESULT, transferContextOf, transfereeVariables } from './dialplan-transfer.ts';
import type { ParsedReferTo } from './refer.ts';
import { reasonPhrase, ReferProgress } from './refer-progress.ts';
import type { PjsipRuntime } from './runtime.ts';
import { transferHandlingOf } from './transfer-handling.ts';

export class StasisBridgeRefer {
  readonly #runtime: PjsipRuntime;

  constructor(runtime: PjsipRuntime) {
    this.#runtime = runtime;
  }

  /**
   * Whether Patchbay carries this REFER out itself: the default handling, the channel in a bridge,
   * and either blind (no Replaces), attended with Replaces naming another of our calls whose channel
   * is in a bridge too (an application's or a Dial() call), or with Replaces naming a call we do not
   * have (a blind transfer to `external_replaces`). The rest (ari-only, a channel in no bridge, a
   * Replaces naming our call in no bridge) stays the application's.
   */
  handles(call: SipCall, channel: Channel, referTo: ParsedReferTo): boolean {
    if (transferHandlingOf(call) !== 'core' || channel.bridgeId === undefined) return false;
    if (referTo.replaces === undefined) return true;
    const other = this.#runtime.calls.replaced(referTo.replaces);
    if (!other) return true;
    const second = other !== call ? other.channel : undefined;
    return second !== undefined && !second.hangingUp && (this.#runtime.context?.transfers.canLink(second) ?? false);
  }

  refer(call: SipCall, channel: Channel, referTo: ParsedReferTo, subscribed: boolean, tx: ServerTransaction): void {
    const context = this.#runtime.context;
    if (!context) return void tx.reply(503, 'Service Unavailable');
    const transferContext = transferContextOf(this.#runtime, call, channel);
    if (referTo.replaces) {
      // Replaces naming a dialog on another server: a blind transfer to `external_replaces`, whose
      // dialplan finds the Replaces in SIPREPLACESHDR (res_pjsip_refer's remote-session branch).
      if (!this.#runtime.calls.replaced(referTo.replaces)) return this.#blind(call, channel, referTo, subscribed, tx, transferContext, 'external_replaces');
      return this.#attended(call, channel, referTo, subscribed, tx);
    }
    // Refer-To without a user part goes to `s`, as res_pjsip_refer's blind request does.
    return this.#blind(call, channel, referTo, subscribed, tx, transferContext, referTo.destination === '' ? 's' : referTo.destination);
  }

  #blind(call: SipCall, channel: Channel, referTo: ParsedReferTo, subscribed: boolean, tx: ServerTransaction, transferContext: string, exten: string): void {
    const context = this.#runtime.context!;
    if (exten.length > MAX_EXTEN_LENGTH || !context.extensionExists(transferContext, exten)) return void tx.reply(404, 'Not Found');
    const referredBy = tx.request.get('referred-by') ?? tx.request.get('b');
    const variables = transfereeVariables(transferContext, referTo, referredBy);
    const { result } = context.transfers.blindInStasisBridge(channel, { context: transferContext, exten }, variables);
    const status = STATUS_OF_RESULT[result];
    this.#runtime.log?.info({ channel: channel.name, status, exten, context: transferContext }, 'REFER in a Stasis bridge');
    // A transfer that did not happen is the REFER's final answer (Asterisk sends no 202 then).
    if (status !== 200) return void tx.reply(status, reasonPhrase(status));
    const usage = subscribed ? call.dialogUsage(false) : undefined;
    if (!usage) tx.reply(subscribed ? 202 : 200, subscribed ? 'Accepted' : 'OK', subscribed ? [] : [['Refer-Sub', 'false']]);
    else {
      tx.reply(202, 'Accepted');
      // Done for the phone at once: 100 (active) then 200 (terminated), as captured.
      new ReferProgress(usage, nameAddr(plainSipUri('patchbay', this.#runtime.publicHost, this.#runtime.port))).finish(200);
    }
    this.#endLater(channel);
  }

  /**
   * An attended REFER (res_pjsip_refer's refer_incoming_attended_request, the transfer itself the
   * core's linkedAttendedTransfer): 202 first, then the transfer (the second leg's BYE goes out
   * with its hang-up), then NOTIFY 100 and the outcome (terminated). With `Refer-Sub: false` the
   * outcome is the REFER's final response. A first leg that stays in its application is ended as
   * after a blind transfer: by its phone, or 60 s after the REFER.
   */
  #attended(call: SipCall, channel: Channel, referTo: ParsedReferTo, subscribed: boolean, tx: ServerTransaction): void {
    const context = this.#runtime.context!;
    const second = referTo.replaces ? this.#runtime.calls.replaced(referTo.replaces)?.channel : undefined;
    if (!second || second.hangingUp) return void tx.reply(503, 'Service Unavailable');
    const usage = subscribed ? call.dialogUsage(false) : undefined;
    if (subscribed && !usage) return void tx.reply(481, 'Call/Transaction Does Not Exist');
    const progress = usage ? new ReferProgress(usage, nameAddr(plainSipUri('patchbay', this.#runtime.publicHost, this.#runtime.port))) : undefined;
    if (progress) tx.reply(202, 'Accepted');
    const result = context.transfers.attended(channel, second);
    const status = STATUS_OF_RESULT[result];
    this.#runtime.log?.info({ channel: channel.name, second: second.name, status }, 'attended REFER in a Stasis bridge');
    if (progress) progress.finish(status);
    else tx.reply(status, reasonPhrase(status), [['Refer-Sub', 'false']]);
    if (status === 200 && !channel.hangingUp) this.#endLater(channel);
  }

  /** The transferer's phone should hang up; if it has not 60 s after the REFER, Patchbay does. */
  #endLater(channel: Channel): void {
    const timer = setTimeout(() => {
      if (!channel.hangingUp) channel.hangup(CAUSE.normal);
    }, TERMINATION_DEFERRAL_MS);
    timer.unref();
    channel.once('hangup', () => clearTimeout(timer));
  }
}
