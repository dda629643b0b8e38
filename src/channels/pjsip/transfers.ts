// REFER received on a call: on a channel in Stasis a blind transfer from a bridge, an attended one
// naming another of our calls in a bridge, and one whose Replaces names a call we do not have
// (external_replaces), are carried out as Asterisk's default handling does (stasis-refer.ts), any
// other is the application's (Asterisk's ari-only transfer handling); on one the dialplan runs (Dial) it is carried out there
// (dialplan-transfer.ts). See refer.ts for the REFER parts and the subscriptions both directions use.
import type { TransferProgressState } from '../../core/channels/technology.ts';
import type { SipRequest } from '../../sip/message.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import type { SipCall } from './call.ts';
import { IncomingTransfer, parseReferTo, SIPFRAG } from './refer.ts';
import { ReferProgress } from './refer-progress.ts';
import { nameAddr, plainSipUri } from './addresses.ts';
import { DialplanTransfer } from './dialplan-transfer.ts';
import { StasisBridgeRefer } from './stasis-refer.ts';
import { type PjsipRuntime } from './runtime.ts';

export class CallTransfers {
  readonly #runtime: PjsipRuntime;
  /** Transfers the far end asked for on a call (REFER), handled by the application. */
  readonly #transfers = new WeakMap<SipCall, IncomingTransfer>();
  readonly #dialplan: DialplanTransfer;
  readonly #stasisBridge: StasisBridgeRefer;

  constructor(runtime: PjsipRuntime) {
    this.#runtime = runtime;
    this.#dialplan = new DialplanTransfer(runtime);
    this.#stasisBridge = new StasisBridgeRefer(runtime);
  }

  /** Every call, inbound or outbound, takes REFERs and ARI transfer_progress through here. */
  wire(call: SipCall): void {
    call.onRefer = (request, tx) => this.#referOnCall(call, request, tx);
    call.onTransferProgress = (state) => this.#transferProgress(call, state);
  }

  /**
   * A REFER on a call. In Stasis, a blind one from a bridge, an attended one between bridged
   * calls, or one naming a call we do not have, is carried out by the core unless the channel chose `ari-only` (stasis-refer.ts); otherwise the application handles the transfer
   * (Asterisk's ari-only transfer handling): ChannelTransfer and 202; no NOTIFY until the
   * application reports progress (captured: Asterisk 22 sends none before). Outside, the dialplan does.
   */
  #referOnCall(call: SipCall, request: SipRequest, tx: ServerTransaction): void {
    const context = this.#runtime.context;
    const channel = call.channel;
    if (!context || !channel || channel.hangingUp) return void tx.reply(481, 'Call/Transaction Does Not Exist');
    // allow_transfer=no: refused before the REFER is even read, as res_pjsip_refer does.
    if (this.#runtime.config.endpoints.get(call.endpointId)?.allowTransfer === false) {
      this.#runtime.log?.warn({ endpoint: call.endpointId }, 'transfer attempt blocked by the endpoint\'s allow_transfer=no');
      return void tx.reply(603, 'Decline');
    }
    const referTo = parseReferTo(request);
    if (!referTo) return void tx.reply(400, 'Bad Refer-To');
    const pending = this.#transfers.get(call);
    if (pending && !pending.done) return void tx.reply(491, 'Request Pending');
    const subscribed = !/^\s*false/i.test(request.get('refer-sub') ?? '');
    if (!channel.stasis) return this.#dialplan.refer(call, channel, referTo, subscribed, tx);
    if (this.#stasisBridge.handles(call, channel, referTo)) return this.#stasisBridge.refer(call, channel, referTo, subscribed, tx);
    // The application decides the channel's fate: its BYE does not wait for the subscription.
    const usage = subscribed ? call.dialogUsage(false) : undefined;
    if (subscribed && !usage) return void tx.reply(481, 'Call/Transaction Does Not Exist');
    const replaced = referTo.replaces ? this.#runtime.calls.replaced(referTo.replaces)?.channel : undefined;
    const transfer = new IncomingTransfer(
      channel,
      {
        destination: referTo.destination,
        ...(referTo.replaces ? { protocolId: referTo.replaces.callId } : {}),
        ...(referTo.replaces
          ? {
              params: [
                ...(referTo.replaces.fromTag !== undefined ? [{ name: 'from', value: referTo.replaces.fromTag }] : []),
                ...(referTo.replaces.toTag !== undefined ? [{ name: 'to', value: referTo.replaces.toTag }] : []),
              ],
            }
          : {}),
        ...(replaced && replaced !== channel ? { destinationChannel: replaced } : {}),
      },
      usage ? new ReferProgress(usage, nameAddr(plainSipUri('patchbay', this.#runtime.publicHost, this.#runtime.port))) : undefined,
    );
    this.#transfers.set(call, transfer);
    tx.reply(202, 'Accepted', subscribed ? [] : [['Refer-Sub', 'false']]);
    context.raiseTransfer(channel, transfer.request);
  }

  /**
   * ARI transfer_progress: a NOTIFY with the sipfrag status ("100 Trying" first when not sent yet;
   * nothing once the subscription is over) and ChannelTransfer with the state.
   */
  #transferProgress(call: SipCall, state: TransferProgressState): void {
    const transfer = this.#transfers.get(call);
    if (!transfer || transfer.done) return;
    const { status, final } = SIPFRAG[state];
    if (final) transfer.done = true;
    if (final) transfer.progress?.finish(status);
    else transfer.progress?.progress(status);
    this.#runtime.context?.raiseTransfer(transfer.channel, { ...transfer.request, state });
  }
}
