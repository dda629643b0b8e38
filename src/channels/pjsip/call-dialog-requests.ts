// Requests a SIP call sends inside its dialog (BYE, NOTIFY of a transfer, INFO digits, re-INVITEs,
// the ACK of a 2xx) and where they go. Kept apart from call.ts, which decides when to send them:
// this file knows the dialog's next hop over the call's listener and connection, nothing of the
// call's offer/answer or its channel.
import { reasonHeaders } from './causes.ts';
import type { Dialog } from '../../sip/dialog.ts';
import type { SipResponse } from '../../sip/message.ts';
import { connectionServes, type Destination, type TcpConnection } from '../../sip/transport.ts';
import type { ForeignFlow } from '../../sip/foreign-flow.ts';
import type { ClientTransaction, TransactionLayer } from '../../sip/transaction/index.ts';
import type { CallEnvironment } from './call-types.ts';
import type { DialogAuth } from './dialog-auth.ts';
import { dtmfRelayBody } from './dtmf-info.ts';

/** What a call's requests in its dialog need of the transaction layer: sending them, and the ACK of a 2xx. */
export type InDialogSender = Pick<TransactionLayer, 'sendRequest' | 'sendAck'>;

/** What the requests need to know of their call, read at each send (the dialog and the connection change); SipCall is one. */
export interface DialogRoute {
  readonly dialog: Dialog | undefined;
  readonly ended: boolean;
  /** The transport the call's INVITE came or went on. */
  readonly signallingTransport: Destination['transport'];
  /** The listener the call runs on, if named. */
  readonly signallingListener: string | undefined;
  /** The TCP/TLS connection the INVITE came or went on, if any. */
  readonly signallingConnection: TcpConnection | undefined;
  /** Another cluster member's connection to the phone, when the call runs over one. */
  readonly relayedFlow: ForeignFlow | undefined;
  /** The endpoint's options the BYE's Reason depends on (suppress_q850_reason_headers). */
  readonly options?: { readonly suppressQ850ReasonHeaders?: boolean };
}

/**
 * Another usage of the call's dialog (RFC 5057): a REFER's implicit subscription (refer-progress.ts).
 * Its requests go out while the dialog lasts, even after the call itself ended, and the call's BYE
 * waits until every usage is released, so that the far end hears the subscription's end first.
 * A usage still live when our BYE goes anyway (HELD_BYE_MS, the deferred termination, or one that
 * holds no BYE) goes on sending in the dialog, as Asterisk's REFER subscription keeps pjsip's
 * dialog past the session's BYE; the usage itself is bounded (refer-progress.ts: 600 s, or the
 * far end's 481).
 */
export interface DialogUsage {
  /** As CallDialogRequests.send; `onTimeout` when no final response came (Timer F). */
  send(method: string, headers: Array<[string, string]>, body?: string, contentType?: string, onFinal?: (response: SipResponse) => void, onTimeout?: () => void): boolean;
  /** Idempotent; the last release sends the BYE the call asked for meanwhile. */
  release(): void;
}

/**
 * Longest a usage holds the call's BYE back, as Asterisk's deferred session end after a REFER
 * (60 s): then the BYE goes and the dialog, with whatever usage was left, is over.
 */
export const HELD_BYE_MS = 60_000;

/**
 * How long a REFER the dialplan carried out leaves the transferer's dialog to the phone, as
 * res_pjsip_session's ast_sip_session_defer_termination (60 s from the REFER): a transferring
 * phone hangs up itself after the final NOTIFY; only one that does not is sent BYE, then.
 */
export const TERMINATION_DEFERRAL_MS = 60_000;

/** A deferred termination (CallDialogRequests.deferTermination). */
export interface TerminationDeferral {
  /** The transfer failed: the call ends as it would have, with the BYE it asked for meanwhile. Idempotent. */
  cancel(): void;
}

export class CallDialogRequests {
  /** Usages holding the dialog open, and the BYE's cause once the call asked for it meanwhile. */
  #usages = 0;
  #heldByeCause: number | undefined;
  #heldByeTimer: NodeJS.Timeout | undefined;
  /** A REFER's deferred termination: the BYE is the phone's to send until this fires. */
  #deferral: NodeJS.Timeout | undefined;
  /** Told once no BYE is held any more (sent, or the far end's came): the call forgets its dialog. */
  #onByeSettled: (() => void) | undefined;
  /** The dialog our BYE ended: the usages still live may send in it (see DialogUsage). */
  #byeSentIn: Dialog | undefined;

  constructor(
    private readonly services: Pick<CallEnvironment, 'log'> & { readonly layer: InDialogSender },
    private readonly route: DialogRoute,
    /** The endpoint's outbound_auth answers to challenges of these requests (dialog-auth.ts); none: a challenge fails them. */
    private readonly auth?: DialogAuth,
  ) {}

  /** What sends in `dialog` (our requests, the session refresh): through the challenge answers when the call has them. */
  sender(dialog: Dialog): InDialogSender {
    return this.auth ? this.auth.sender(this.services.layer, dialog) : this.services.layer;
  }

  /**
   * Where a request in the dialog goes: its next hop, from the call's listener, over the connection its INVITE
   * came or went on while open (a phone over TCP behind NAT cannot take a new connection).
   */
  hop(dialog: Dialog): Destination | undefined {
    const route = this.route;
    const hop = dialog.nextHop(route.signallingTransport);
    if (!hop) return undefined;
    const listener = route.signallingListener;
    if (listener !== undefined) hop.listener = listener;
    const connection = route.signallingConnection;
    // Another server's connection is the only way to the phone, closed or not (then the request fails).
    const flow = route.relayedFlow;
    if (flow) hop.connection = flow;
    else if (connectionServes(connection, hop.transport)) hop.connection = connection;
    return hop;
  }

  /**
   * BYE with the Q.850 cause as Reason; the dialog is terminated whether or not it can be sent.
   * Held while a usage or a deferred termination lasts (then `holdingBye` is true).
   */
  bye(cause: number): void {
    const dialog = this.route.dialog;
    if (!dialog || dialog.state === 'terminated') return;
    if (this.#deferral !== undefined || this.#usages > 0) {
      this.#heldByeCause ??= cause;
      if (this.#deferral === undefined) this.#holdForUsages();
      return;
    }
    this.#sendBye(dialog, cause);
  }

  /** Whether the call asked for a BYE that is held back: its dialog outlives it until onByeSettled. */
  get holdingBye(): boolean {
    return this.#heldByeCause !== undefined;
  }

  /** `settled` once no BYE is held any more (at once when none is). */
  onByeSettled(settled: () => void): void {
    if (!this.holdingBye) return settled();
    this.#onByeSettled = settled;
  }

  /**
   * The far end's BYE: a BYE held back is not sent any more, a deferred termination is over. The
   * usages may still send (Asterisk goes on notifying in the dialog after it).
   */
  endedByFarEnd(): void {
    clearTimeout(this.#deferral);
    this.#deferral = undefined;
    clearTimeout(this.#heldByeTimer);
    this.#heldByeTimer = undefined;
    this.#heldByeCause = undefined;
    this.#settled();
  }

  /**
   * A REFER is being carried out: the call's BYE is held back for TERMINATION_DEFERRAL_MS (the
   * phone ends the dialog itself), then sent without a Reason, as Asterisk's deferred session
   * termination does; undefined without a dialog or when one is deferred already.
   */
  deferTermination(): TerminationDeferral | undefined {
    const dialog = this.route.dialog;
    if (!dialog || dialog.state === 'terminated' || this.#deferral !== undefined) return undefined;
    const deferral = setTimeout(() => {
      if (this.#deferral !== deferral) return;
      this.#deferral = undefined;
      // Asterisk's deferred BYE goes whatever the subscription is doing, with no Reason (the channel is gone).
      if (this.#heldByeCause === undefined) return;
      clearTimeout(this.#heldByeTimer);
      this.#heldByeTimer = undefined;
      this.#heldByeCause = undefined;
      this.#usages = 0;
      const current = this.route.dialog;
      if (current && current.state !== 'terminated') this.#sendBye(current, undefined);
      this.#settled();
    }, TERMINATION_DEFERRAL_MS);
    deferral.unref();
    this.#deferral = deferral;
    return {
      cancel: () => {
        if (this.#deferral !== deferral) return;
        clearTimeout(deferral);
        this.#deferral = undefined;
        if (this.#heldByeCause === undefined) return;
        if (this.#usages > 0) this.#holdForUsages();
        else this.#sendHeldBye();
      },
    };
  }

  /**
   * Sends a request in the dialog (NOTIFY of a transfer, a hold re-INVITE, whose 2xx is ACKed
   * here); false when there is no dialog. `onNoResponse`: no final response came (Timer B/F).
   */
  send(method: string, headers: Array<[string, string]>, body?: string, contentType?: string, onFinal?: (response: SipResponse) => void, onNoResponse?: () => void): boolean {
    if (this.route.ended) return false;
    return this.#sendInDialog(method, headers, body, contentType, onFinal, onNoResponse);
  }

  /**
   * A usage of the dialog besides the call's own (see DialogUsage); undefined once the dialog is
   * over. `holdsBye: false`: its requests go out while the dialog lasts, but the call's BYE does
   * not wait for it (a REFER an application handles: Asterisk's ari-only transfers defer nothing).
   */
  usage(holdsBye = true): DialogUsage | undefined {
    const dialog = this.route.dialog;
    if (!dialog || dialog.state === 'terminated') return undefined;
    if (holdsBye) this.#usages++;
    let released = false;
    return {
      send: (method, headers, body, contentType, onFinal, onTimeout) => !released && this.#sendInDialog(method, headers, body, contentType, onFinal, onTimeout, true),
      release: () => {
        if (released) return;
        released = true;
        if (!holdsBye) return;
        this.#usages = Math.max(0, this.#usages - 1);
        if (this.#usages === 0 && this.#deferral === undefined) this.#sendHeldBye();
      },
    };
  }

  /** Usages hold the BYE asked for, HELD_BYE_MS at most. */
  #holdForUsages(): void {
    if (this.#heldByeTimer !== undefined) return;
    this.#heldByeTimer = setTimeout(() => this.#sendHeldBye(), HELD_BYE_MS);
    this.#heldByeTimer.unref();
  }

  /** The BYE held for the usages, once they are released or at HELD_BYE_MS. */
  #sendHeldBye(): void {
    const cause = this.#heldByeCause;
    clearTimeout(this.#heldByeTimer);
    this.#heldByeTimer = undefined;
    this.#heldByeCause = undefined;
    if (cause === undefined) return;
    this.#usages = 0;
    const dialog = this.route.dialog;
    if (dialog && dialog.state !== 'terminated') this.#sendBye(dialog, cause);
    this.#settled();
  }

  /** The BYE itself, with the cause as Reason when there is one; the dialog is over. */
  #sendBye(dialog: Dialog, cause: number | undefined): void {
    dialog.state = 'terminated';
    this.#byeSentIn = dialog;
    const bye = dialog.createRequest('BYE', cause === undefined ? {} : { headers: reasonHeaders(cause, this.route.options?.suppressQ850ReasonHeaders) });
    const hop = this.hop(dialog);
    if (!hop) return;
    try {
      this.sender(dialog).sendRequest(bye, hop, {});
    } catch (error) {
      this.services.log.debug({ err: error }, 'BYE not sent');
    }
  }

  #settled(): void {
    const settled = this.#onByeSettled;
    this.#onByeSettled = undefined;
    settled?.();
  }

  #sendInDialog(method: string, headers: Array<[string, string]>, body?: string, contentType?: string, onFinal?: (response: SipResponse) => void, onTimeout?: () => void, usage = false): boolean {
    const dialog = this.route.dialog;
    if (!dialog || (dialog.state === 'terminated' && !(usage && dialog === this.#byeSentIn))) return false;
    const request = dialog.createRequest(method, { headers, ...(body !== undefined ? { body, contentType } : {}) });
    const hop = this.hop(dialog);
    if (!hop) return false;
    let finished = false;
    const onResponse = (response: SipResponse, tx: ClientTransaction): void => {
      if (response.status < 200) return;
      // Every 2xx to a re-INVITE is ACKed (retransmissions too), with the CSeq of the try it answers
      // (a challenged re-INVITE went again with a new one); the first final response is reported.
      if (method === 'INVITE' && response.status < 300) void this.services.layer.sendAck(dialog.createAck(tx.request.cseq()?.seq ?? dialog.localSeq), hop).catch(() => undefined);
      if (finished) return;
      finished = true;
      onFinal?.(response);
    };
    try {
      // A transport that fails the request is no final response either (RFC 3261 §8.1.3.1: a 503, here silence).
      const noResponse =
        onTimeout &&
        ((): void => {
          if (finished) return;
          finished = true;
          onTimeout();
        });
      this.sender(dialog).sendRequest(request, hop, onFinal || method === 'INVITE' || noResponse ? { onResponse, ...(noResponse ? { onTimeout: noResponse, onTransportError: noResponse } : {}) } : {});
    } catch (error) {
      this.services.log.debug({ err: error, method }, 'in-dialog request not sent');
      return false;
    }
    return true;
  }

  /** One digit as INFO application/dtmf-relay in the confirmed dialog (dtmf_mode info). */
  infoDigit(digit: string, durationMs: number): void {
    if (this.route.dialog?.state !== 'confirmed' || !/^[0-9A-D*#]$/i.test(digit)) return;
    this.send('INFO', [], dtmfRelayBody(digit, durationMs), 'application/dtmf-relay');
  }
}
