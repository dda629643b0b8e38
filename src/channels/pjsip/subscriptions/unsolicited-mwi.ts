// Unsolicited message-waiting indications, as res_pjsip_mwi sends them to endpoints with
// `mailboxes=`: a NOTIFY outside any dialog (Event: message-summary, Subscription-State: active)
// to every contact of the endpoint's AORs when one of the mailboxes' counts change, and to a
// contact when it registers or refreshes, so that a phone that just started shows the lamp. With
// aggregate_mwi (the default) one NOTIFY carries the sum of all the mailboxes; without, one goes
// per mailbox. A mailbox the endpoint subscribed to itself (mwi_subscribe_replaces_unsolicited)
// is left to that subscription.
import { messageSummaryBody, MESSAGE_SUMMARY_TYPE } from '../../../sip/event-bodies.ts';
import { newCallId, newTag, SipRequest } from '../../../sip/message.ts';
import type { Binding } from '../../../sip/registrar.ts';
import { formatUri, parseUri, type SipUri } from '../../../sip/uri.ts';
import { nameAddr, plainSipUri } from '../addresses.ts';
import type { PjsipEndpoint } from '../config/index.ts';
import type { Dialer } from '../dialer.ts';
import { localContact, USER_AGENT, type PjsipRuntime } from '../runtime.ts';
import { sumMailboxes } from './packages.ts';

/** Counts last sent per endpoint and mailbox group kept at most (a change to the same counts sends nothing). */
const MAX_REMEMBERED = 100_000;

export class UnsolicitedMwi {
  readonly #runtime: PjsipRuntime;
  readonly #dialer: Dialer;
  /** Whether the endpoint's own SUBSCRIBE reports the mailbox (then it is not sent unsolicited). */
  readonly #solicits: (endpointId: string, mailbox: string) => boolean;
  /** `endpoint\0group` → `new/old` last sent on a mailbox change. */
  readonly #sent = new Map<string, string>();
  #unwatch: (() => void) | undefined;

  constructor(runtime: PjsipRuntime, dialer: Dialer, solicits: (endpointId: string, mailbox: string) => boolean) {
    this.#runtime = runtime;
    this.#dialer = dialer;
    this.#solicits = solicits;
  }

  /** Whether the endpoint gets unsolicited MWI for the mailbox (`mailboxes=`). */
  covers(endpoint: PjsipEndpoint, mailbox: string): boolean {
    return endpoint.mailboxes.includes(mailbox);
  }

  start(): void {
    this.#unwatch = this.#runtime.context?.mailboxes.onChange((name) => this.mailboxChanged(name));
  }

  stop(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
    this.#sent.clear();
  }

  /** A mailbox was set or deleted: the endpoints that list it hear of it, if the counts they show changed. */
  mailboxChanged(name: string): void {
    for (const endpoint of this.#runtime.config.endpoints.values()) {
      if (!endpoint.mailboxes.includes(name)) continue;
      for (const group of this.#groups(endpoint)) {
        if (!group.includes(name)) continue;
        const counts = sumMailboxes(this.#runtime.context, group);
        const key = `${endpoint.id}\u0000${group.join('\u0000')}`;
        const shown = `${counts.newMessages}/${counts.oldMessages}`;
        if (this.#sent.get(key) === shown) continue;
        if (this.#sent.size >= MAX_REMEMBERED) this.#sent.clear();
        this.#sent.set(key, shown);
        for (const uri of this.#contacts(endpoint)) this.#send(endpoint, uri, group);
      }
    }
  }

  /**
   * A contact registered (or refreshed): each endpoint of its AOR with mailboxes sends it the
   * counts, once the REGISTER has been answered (the registrar tells of the binding before).
   */
  contactChanged(binding: Binding): void {
    const parsed = parseUri(binding.uri);
    if (!parsed || parsed.kind !== 'sip') return;
    const endpoints = [...this.#runtime.config.endpoints.values()].filter((endpoint) => endpoint.mailboxes.length > 0 && endpoint.aors.includes(binding.aor));
    if (endpoints.length === 0) return;
    setImmediate(() => {
      if (!this.#unwatch) return;
      for (const endpoint of endpoints) for (const group of this.#groups(endpoint)) this.#send(endpoint, parsed, group);
    });
  }

  /** The mailboxes sent together: all of them (aggregate_mwi) or one each, less those the endpoint subscribed to. */
  #groups(endpoint: PjsipEndpoint): string[][] {
    const unsolicited = endpoint.mailboxes.filter((mailbox) => !this.#solicits(endpoint.id, mailbox));
    if (unsolicited.length === 0) return [];
    return endpoint.aggregateMwi ? [unsolicited] : unsolicited.map((mailbox) => [mailbox]);
  }

  /** The registered and static contacts of the endpoint's AORs. */
  #contacts(endpoint: PjsipEndpoint): SipUri[] {
    const { registrar, config } = this.#runtime;
    const texts = endpoint.aors.flatMap((id) => [...registrar.lookup(id).map((binding) => binding.uri), ...(config.aors.get(id)?.contacts ?? []).map((uri) => uri.replace(/^<|>$/g, ''))]);
    return [...new Set(texts)].map((text) => parseUri(text)).filter((uri): uri is SipUri => uri?.kind === 'sip');
  }

  #send(endpoint: PjsipEndpoint, uri: SipUri, mailboxes: readonly string[]): void {
    const runtime = this.#runtime;
    const layer = runtime.layer;
    const destination = this.#dialer.destinationOf(uri, endpoint);
    if (!layer || !destination) return;
    const domain = endpoint.fromDomain ?? runtime.publicHost;
    const fromUser = endpoint.mwiFromUser ?? endpoint.fromUser ?? runtime.config.global.defaultFromUser;
    const extension = endpoint.voicemailExtension ?? runtime.config.global.defaultVoicemailExtension;
    const account = extension ? formatUri(plainSipUri(extension, domain)) : undefined;
    const request = new SipRequest('NOTIFY', { ...uri, headers: new Map() }, [
      ['Max-Forwards', '70'],
      ['From', nameAddr(plainSipUri(fromUser, domain), [['tag', newTag()]])],
      ['To', nameAddr({ ...uri, headers: new Map() })],
      ['Call-ID', newCallId()],
      ['CSeq', '1 NOTIFY'],
      ['Contact', nameAddr(localContact(runtime, fromUser, destination.transport, destination.listener, uri.scheme === 'sips'))],
      ['Event', 'message-summary'],
      ['Subscription-State', 'active'],
      ['Allow-Events', 'dialog, presence, message-summary'],
      ['User-Agent', runtime.config.global.userAgent || USER_AGENT],
    ]);
    request.body = Buffer.from(messageSummaryBody({ ...sumMailboxes(runtime.context, mailboxes), ...(account ? { account } : {}) }), 'utf8');
    request.set('Content-Type', MESSAGE_SUMMARY_TYPE);
    try {
      layer.sendRequest(request, destination, {
        onResponse: (response) => {
          if (response.status >= 300) runtime.log?.debug({ endpoint: endpoint.id, status: response.status }, 'unsolicited MWI NOTIFY refused');
        },
        onTimeout: () => runtime.log?.debug({ endpoint: endpoint.id }, 'unsolicited MWI NOTIFY unanswered'),
      });
    } catch (error) {
      runtime.log?.debug({ err: error, endpoint: endpoint.id }, 'unsolicited MWI NOTIFY not sent');
    }
  }
}
