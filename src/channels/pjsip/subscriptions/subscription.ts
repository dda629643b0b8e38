// One subscription a phone made with SUBSCRIBE (RFC 6665 §4.2, the notifier's side): its dialog,
// its expiry timer and the NOTIFYs that carry its resource's state. NOTIFYs go through the
// transaction layer one at a time, so that they arrive in CSeq order and a burst of changes ends
// in one NOTIFY of the latest state; a NOTIFY the phone refuses or never answers (481, a timeout)
// ends the subscription, as RFC 6665 §4.2.2 asks.
import type { Logger } from 'pino';
import type { Dialog } from '../../../sip/dialog.ts';
import { subscriptionState } from '../../../sip/event-notify.ts';
import type { SipResponse } from '../../../sip/message.ts';
import type { TransactionLayer } from '../../../sip/transaction/index.ts';
import { connectionServes, type Destination, type Source } from '../../../sip/transport.ts';
import type { WatchedResource } from './packages.ts';

/** What a subscription needs of the server that keeps it. */
export interface SubscriptionHost {
  readonly layer: TransactionLayer | undefined;
  readonly log: Logger | undefined;
  readonly userAgent: string;
  /** The subscription is over (terminated, refused, expired): forget it. */
  ended(subscription: Subscription): void;
}

export interface SubscriptionInit {
  readonly dialog: Dialog;
  readonly endpointId: string;
  /** The package (`dialog`, `presence`, `message-summary`) and the Event header's id parameter. */
  readonly eventPackage: string;
  readonly eventId?: string;
  readonly contentType: string;
  readonly resource: WatchedResource;
  /** The resource's URI (`sip:100@pbx`): the entity of the bodies. */
  readonly entity: string;
  /** Our Contact in the dialog. */
  readonly contact: string;
  /** Where the SUBSCRIBE came from: its listener and TCP connection carry the NOTIFYs. */
  readonly source: Source;
  /** Seconds granted. */
  readonly expires: number;
}

export type TerminationReason = 'timeout' | 'noresource' | 'deactivated';

export class Subscription {
  readonly dialog: Dialog;
  readonly endpointId: string;
  readonly eventPackage: string;
  readonly eventId: string | undefined;
  readonly resource: WatchedResource;
  readonly #host: SubscriptionHost;
  readonly #init: SubscriptionInit;
  #source: Source;
  #expiresAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The dialog-info version of the next NOTIFY (RFC 4235 §4.1.2: +1 per NOTIFY, from 0). */
  #version = 0;
  /** The state the last NOTIFY showed; a change to the same state sends nothing. */
  #shown: string | undefined;
  #inFlight = false;
  /** Another NOTIFY is wanted once the one in flight is answered (`true`: even if the state is the same). */
  #pending: boolean | undefined;
  #terminating: TerminationReason | undefined;
  #ended = false;

  constructor(host: SubscriptionHost, init: SubscriptionInit) {
    this.#host = host;
    this.#init = init;
    this.dialog = init.dialog;
    this.endpointId = init.endpointId;
    this.eventPackage = init.eventPackage;
    this.eventId = init.eventId;
    this.resource = init.resource;
    this.#source = init.source;
    this.#arm(init.expires);
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Seconds left, for Subscription-State. */
  get remaining(): number {
    return Math.max(0, Math.round((this.#expiresAt - Date.now()) / 1000));
  }

  /** A refreshing SUBSCRIBE (§4.2.1.2): a new duration, and a NOTIFY of the current state whatever it is. */
  refresh(expires: number, source: Source): void {
    if (this.#ended || this.#terminating) return;
    this.#source = source;
    this.#arm(expires);
    this.notify(true);
  }

  /**
   * Sends the resource's state: always when `force` (the first NOTIFY, after a refresh), else only
   * when it differs from what the last NOTIFY showed.
   */
  notify(force = false): void {
    if (this.#ended) return;
    if (this.#inFlight) {
      this.#pending = this.#pending === true || force;
      return;
    }
    const rendered = this.resource.render({ entity: this.#init.entity, version: this.#version });
    if (!force && !this.#terminating && rendered.state === this.#shown) return;
    this.#shown = rendered.state;
    const state = this.#terminating ? subscriptionState({ kind: 'terminated', reason: this.#terminating }) : subscriptionState({ kind: 'active', expires: this.remaining });
    this.#send(state, rendered.body);
  }

  /**
   * Ends the subscription: with a last NOTIFY saying why (`Subscription-State: terminated`) when
   * `notify`, else silently (the server stops, the dialog is gone).
   */
  terminate(reason: TerminationReason, notify = true): void {
    if (this.#ended || this.#terminating) return;
    this.#terminating = reason;
    this.#clearTimer();
    if (notify) {
      // A terminating NOTIFY waits for the one in flight (CSeq order), then goes whatever the state.
      if (this.#inFlight) this.#pending = true;
      else this.notify(true);
      return;
    }
    this.#end();
  }

  #send(state: string, body: string): void {
    const layer = this.#host.layer;
    const hop = this.#hop();
    if (!layer || !hop || this.dialog.state === 'terminated') return this.#end();
    const event = this.eventId !== undefined ? `${this.eventPackage};id=${this.eventId}` : this.eventPackage;
    const request = this.dialog.createRequest('NOTIFY', {
      headers: [
        ['Event', event],
        ['Subscription-State', state],
        ['Contact', this.#init.contact],
        ['User-Agent', this.#host.userAgent],
      ],
      body,
      contentType: this.#init.contentType,
    });
    this.#version++;
    const terminating = this.#terminating !== undefined;
    if (terminating) {
      // Nothing is sent in the dialog after this NOTIFY: the subscription is over now, whatever the answer.
      this.dialog.state = 'terminated';
      this.#end();
    } else {
      this.#inFlight = true;
    }
    try {
      layer.sendRequest(request, hop, {
        onResponse: (response) => this.#answered(response),
        onTimeout: () => this.#failed('timeout'),
        onTransportError: () => this.#failed('transport error'),
      });
    } catch (error) {
      this.#host.log?.debug({ err: error, endpoint: this.endpointId }, 'SUBSCRIBE: NOTIFY not sent');
      this.#failed('not sent');
    }
  }

  #answered(response: SipResponse): void {
    if (response.status < 200) return;
    if (response.status >= 300) return this.#failed(`${response.status}`);
    this.#inFlight = false;
    if (this.#ended) return;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined || this.#terminating) this.notify(pending === true);
  }

  /** §4.2.2: a NOTIFY refused (481 and any other error) or unanswered ends the subscription, without another NOTIFY. */
  #failed(why: string): void {
    this.#inFlight = false;
    if (this.#ended) return;
    this.#host.log?.info({ endpoint: this.endpointId, event: this.eventPackage, why }, 'SIP subscription ended: its NOTIFY failed');
    this.dialog.state = 'terminated';
    this.#end();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#clearTimer();
    this.#host.ended(this);
  }

  #arm(expires: number): void {
    this.#clearTimer();
    this.#expiresAt = Date.now() + expires * 1000;
    // The subscriber did not refresh in time: a last NOTIFY with reason=timeout (§4.2.2).
    this.#timer = setTimeout(() => this.terminate('timeout'), expires * 1000);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Where the dialog's requests go: its next hop, from the listener the SUBSCRIBE came to, over
   * its TCP or TLS connection while open (a phone behind NAT takes no new connection).
   */
  #hop(): Destination | undefined {
    const source = this.#source;
    const hop = this.dialog.nextHop(source.transport);
    if (!hop) return undefined;
    if (source.listener !== undefined) hop.listener = source.listener;
    if (connectionServes(source.connection, hop.transport)) hop.connection = source.connection;
    return hop;
  }
}
