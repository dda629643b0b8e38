// SUBSCRIBE (RFC 6665) from endpoints, as res_pjsip_pubsub serves it: the request is identified
// and authenticated like an INVITE, checked (allow_subscribe → 603, a non-SIP URI → 416, Expires
// 0 → 400 and below sub_min_expiry → 423 with Min-Expires, an unknown package or an Accept without
// its body type → 489 with Allow-Events), its resource resolved by the package (404 when unknown),
// and answered 200 with the Expires granted; a NOTIFY with the current state follows at once, then
// one on each change of state. In its dialog, a SUBSCRIBE refreshes (a NOTIFY follows) or, with
// Expires: 0, ends it (a NOTIFY saying terminated). Bounded: MAX_SUBSCRIPTIONS in all and
// MAX_SUBSCRIPTIONS_PER_ENDPOINT per endpoint (503 with Retry-After beyond).
import { Dialog, keyOfIncoming } from '../../../sip/dialog.ts';
import { acceptsType, parseEventHeader, requestedExpiry } from '../../../sip/event-notify.ts';
import type { SipRequest } from '../../../sip/message.ts';
import { rewriteContactToSource } from '../../../sip/nat.ts';
import type { ServerTransaction } from '../../../sip/transaction/index.ts';
import { formatUri } from '../../../sip/uri.ts';
import { isSipsUri, nameAddr, plainSipUri } from '../addresses.ts';
import type { PjsipEndpoint } from '../config/index.ts';
import type { InboundAuthenticator } from '../inbound-auth.ts';
import { localContact, USER_AGENT, type PjsipRuntime } from '../runtime.ts';
import { LogThrottle } from '../../../util/log-throttle.ts';
import { dialogPackage, extenKey, mailboxKey, messageSummaryPackage, presencePackage, type EventPackage } from './packages.ts';
import { Subscription, type SubscriptionHost } from './subscription.ts';

/** Subscriptions kept at most, all endpoints together (each holds a dialog and a timer). */
export const MAX_SUBSCRIPTIONS = 10_000;
/** Subscriptions one endpoint may hold (a phone with a few BLF expansion modules stays below). */
export const MAX_SUBSCRIPTIONS_PER_ENDPOINT = 200;
/** Seconds granted when the SUBSCRIBE asks none, and the most granted (pjproject's package default). */
export const DEFAULT_SUBSCRIPTION_EXPIRES = 3600;
export const MAX_SUBSCRIPTION_EXPIRES = 3600;
/** Longest resource name (the request's user) looked up. */
const MAX_RESOURCE_LENGTH = 256;

export class SubscriptionServer {
  readonly #runtime: PjsipRuntime;
  readonly #auth: InboundAuthenticator;
  readonly #packages: ReadonlyMap<string, EventPackage>;
  /** By dialog id (Call-ID, our tag, theirs). */
  readonly #byDialog = new Map<string, Subscription>();
  /** By the change keys their resources watch. */
  readonly #byKey = new Map<string, Set<Subscription>>();
  readonly #perEndpoint = new Map<string, number>();
  readonly #host: SubscriptionHost;
  /** A phone retrying past the limit would write a line per SUBSCRIBE: one per interval at most. */
  readonly #limitLog = new LogThrottle(10_000);
  #unwatch: (() => void)[] = [];

  constructor(runtime: PjsipRuntime, auth: InboundAuthenticator, unsolicited: (endpoint: PjsipEndpoint, mailbox: string) => boolean) {
    this.#runtime = runtime;
    this.#auth = auth;
    const context = () => runtime.context;
    const packages = [dialogPackage(context), presencePackage(context), messageSummaryPackage({ context, config: () => runtime.config, unsolicited })];
    this.#packages = new Map(packages.map((eventPackage) => [eventPackage.name, eventPackage]));
    const server = this;
    this.#host = {
      get layer() {
        return runtime.layer;
      },
      get log() {
        return runtime.log;
      },
      get userAgent() {
        return runtime.config.global.userAgent || USER_AGENT;
      },
      ended: (subscription) => server.#forget(subscription),
    };
  }

  /** The packages served, for Allow-Events and 489. */
  get served(): string[] {
    return [...this.#packages.keys()];
  }

  /** Live subscriptions. */
  get size(): number {
    return this.#byDialog.size;
  }

  /** Follows the hints' states and the mailboxes' counts while SIP runs. */
  start(): void {
    const context = this.#runtime.context;
    if (!context) return;
    this.#unwatch = [
      context.extensionStates.onChange((change) => this.changed(extenKey(change.exten))),
      context.mailboxes.onChange((name) => this.changed(mailboxKey(name))),
    ];
  }

  /** SIP stops: subscriptions end without NOTIFY (the transport is going). */
  stop(): void {
    for (const unwatch of this.#unwatch.splice(0)) unwatch();
    for (const subscription of [...this.#byDialog.values()]) subscription.terminate('deactivated', false);
  }

  /** A change of what `key` names: the subscriptions watching it NOTIFY if what they show changed. */
  changed(key: string): void {
    for (const subscription of [...(this.#byKey.get(key) ?? [])]) subscription.notify();
  }

  /** Whether the endpoint has a message-summary subscription that reports this mailbox. */
  solicits(endpointId: string, mailbox: string): boolean {
    for (const subscription of this.#byKey.get(mailboxKey(mailbox)) ?? []) if (subscription.endpointId === endpointId) return true;
    return false;
  }

  /** A SUBSCRIBE outside any dialog: a new subscription. */
  subscribe(request: SipRequest, tx: ServerTransaction): void {
    const runtime = this.#runtime;
    if (!runtime.context || !runtime.layer) return void tx.reply(503);
    const endpoint = this.#auth.admit(request, tx);
    if (!endpoint) return;
    if (!endpoint.allowSubscribe) return void tx.reply(603, 'Decline');
    if (request.uri.kind !== 'sip') return void tx.reply(416, 'Unsupported URI Scheme');
    // The dialog's remote target: NOTIFYs could go nowhere else.
    const contacts = request.contacts();
    if (contacts === 'wildcard' || contacts[0]?.uri.kind !== 'sip') return void tx.reply(400, 'Missing Contact');
    const expires = this.#grant(request, tx, endpoint, true);
    if (expires === undefined) return;
    const eventPackage = this.#package(request, tx);
    if (!eventPackage) return;
    const resource = (request.uri.user ?? '').split(';')[0];
    if (resource.length > MAX_RESOURCE_LENGTH) return void tx.reply(404);
    const from = request.from();
    const subscriber = from ? formatUri(from.uri) : '';
    const resolved = eventPackage.resolve({ endpoint, resource, subscriber, host: runtime.publicHost });
    if ('status' in resolved) return void tx.reply(resolved.status, resolved.reason);
    if (this.#byDialog.size >= MAX_SUBSCRIPTIONS || (this.#perEndpoint.get(endpoint.id) ?? 0) >= MAX_SUBSCRIPTIONS_PER_ENDPOINT) {
      this.#limitLog.run((suppressed) =>
        runtime.log?.warn({ endpoint: endpoint.id, total: this.#byDialog.size, ...(suppressed > 0 ? { suppressed } : {}) }, 'SUBSCRIBE refused: too many subscriptions'),
      );
      return void tx.reply(503, 'Service Unavailable', [['Retry-After', '60']]);
    }
    if (endpoint.rewriteContact) rewriteContactToSource(request, tx.source);
    const contact = nameAddr(localContact(runtime, resource || endpoint.id, tx.source.transport, tx.source.listener, isSipsUri(request.uri)));
    const response = tx.createResponse(200);
    response.add('Expires', String(expires));
    response.add('Contact', contact);
    response.add('Server', runtime.config.global.userAgent || USER_AGENT);
    const dialog = Dialog.asUas(request, response);
    if (!dialog) return void tx.reply(400, 'Missing Contact or tags');
    const event = parseEventHeader(request);
    const subscription = new Subscription(this.#host, {
      dialog,
      endpointId: endpoint.id,
      eventPackage: eventPackage.name,
      ...(event?.id !== undefined ? { eventId: event.id } : {}),
      contentType: eventPackage.contentType,
      resource: resolved,
      entity: formatUri(plainSipUri(resource || endpoint.id, runtime.publicHost)),
      contact,
      source: tx.source,
      expires,
    });
    this.#remember(subscription);
    tx.respond(response);
    runtime.log?.debug({ endpoint: endpoint.id, event: eventPackage.name, resource, expires }, 'SIP subscription created');
    subscription.notify(true);
  }

  /** A request in a dialog; false when the dialog is no subscription's. */
  inDialog(request: SipRequest, tx: ServerTransaction): boolean {
    const subscription = this.#byDialog.get(keyOfIncoming(request) ?? '');
    if (!subscription) return false;
    // Its endpoint's own ACL is checked as on any request; a refusal is only logged (inbound-auth.ts).
    this.#auth.refusedInDialog(subscription.endpointId, request, tx.source);
    if (request.method !== 'SUBSCRIBE') {
      tx.reply(405, undefined, [['Allow', 'SUBSCRIBE']]);
      return true;
    }
    const order = subscription.dialog.receiveRequest(request);
    if (order !== 'ok') {
      tx.reply(order === 'lower' ? 500 : 400, order === 'lower' ? 'CSeq out of order' : undefined);
      return true;
    }
    const event = parseEventHeader(request);
    if (!event || event.package !== subscription.eventPackage || event.id !== subscription.eventId) {
      tx.reply(489, 'Bad Event', [['Allow-Events', this.served.join(', ')]]);
      return true;
    }
    const endpoint = this.#runtime.config.endpoints.get(subscription.endpointId);
    const expires = endpoint ? this.#grant(request, tx, endpoint, false) : 0;
    if (expires === undefined) return true;
    tx.reply(200, undefined, [['Expires', String(expires)], ['Server', this.#runtime.config.global.userAgent || USER_AGENT]]);
    // Expires: 0 unsubscribes (§4.2.1.4); an endpoint deleted meanwhile ends its subscriptions the same way.
    if (expires === 0) subscription.terminate('timeout');
    else subscription.refresh(expires, tx.source);
    return true;
  }

  /**
   * The duration granted, or undefined once answered: 400 for an unreadable Expires or an initial
   * Expires: 0 (as res_pjsip_pubsub), 423 below sub_min_expiry; more than the maximum is cut to it.
   */
  #grant(request: SipRequest, tx: ServerTransaction, endpoint: PjsipEndpoint, initial: boolean): number | undefined {
    const asked = requestedExpiry(request);
    if (asked === 'invalid') return void tx.reply(400, 'Bad Expires');
    if (asked === 'default') return DEFAULT_SUBSCRIPTION_EXPIRES;
    if (asked === 0) return initial ? void tx.reply(400, 'Expiration of 0 is invalid') : 0;
    if (asked < endpoint.subMinExpiry) return void tx.reply(423, 'Interval Too Brief', [['Min-Expires', String(endpoint.subMinExpiry)]]);
    return Math.min(asked, MAX_SUBSCRIPTION_EXPIRES);
  }

  /** The package the Event header names, if served and its body type accepted; else 489 with Allow-Events. */
  #package(request: SipRequest, tx: ServerTransaction): EventPackage | undefined {
    const event = parseEventHeader(request);
    const eventPackage = event ? this.#packages.get(event.package) : undefined;
    if (eventPackage && acceptsType(request, eventPackage.contentType)) return eventPackage;
    tx.reply(489, 'Bad Event', [['Allow-Events', this.served.join(', ')]]);
    return undefined;
  }

  #remember(subscription: Subscription): void {
    this.#byDialog.set(subscription.dialog.id, subscription);
    this.#perEndpoint.set(subscription.endpointId, (this.#perEndpoint.get(subscription.endpointId) ?? 0) + 1);
    for (const key of subscription.resource.keys) {
      const set = this.#byKey.get(key);
      if (set) set.add(subscription);
      else this.#byKey.set(key, new Set([subscription]));
    }
  }

  #forget(subscription: Subscription): void {
    if (this.#byDialog.get(subscription.dialog.id) !== subscription) return;
    this.#byDialog.delete(subscription.dialog.id);
    const count = (this.#perEndpoint.get(subscription.endpointId) ?? 1) - 1;
    if (count > 0) this.#perEndpoint.set(subscription.endpointId, count);
    else this.#perEndpoint.delete(subscription.endpointId);
    for (const key of subscription.resource.keys) {
      const set = this.#byKey.get(key);
      set?.delete(subscription);
      if (set?.size === 0) this.#byKey.delete(key);
    }
  }
}
