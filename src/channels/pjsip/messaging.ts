// SIP MESSAGE (RFC 3428) both ways. Received out of a dialog: TextMessageReceived for the endpoint
// (X- headers as variables), then the endpoint's message_context dialplan (MESSAGE(),
// MESSAGE_DATA(), MessageSend()), 202. Sent: a message to `pjsip:<endpoint>` goes to the
// endpoint's contact.
import { NotFoundError, UnavailableError } from '../../core/errors.ts';
import type { MessageDestination, TextMessage } from '../../core/messages.ts';
import { isForeignFlow } from '../../sip/foreign-flow.ts';
import { newCallId, newTag, SipRequest } from '../../sip/message.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import type { Destination } from '../../sip/transport.ts';
import { formatUri, type SipUri } from '../../sip/uri.ts';
import type { PjsipEndpoint } from './config/index.ts';
import type { SharedContact } from './contact-directory.ts';
import type { Dialer } from './dialer.ts';
import type { InboundAuthenticator } from './inbound-auth.ts';
import { nameAddr, plainSipUri } from './addresses.ts';
import { MAX_MESSAGE_VARIABLES, USER_AGENT, type PjsipRuntime } from './runtime.ts';

export class SipMessaging {
  readonly #runtime: PjsipRuntime;
  readonly #auth: InboundAuthenticator;
  readonly #dialer: Dialer;

  constructor(runtime: PjsipRuntime, auth: InboundAuthenticator, dialer: Dialer) {
    this.#runtime = runtime;
    this.#auth = auth;
    this.#dialer = dialer;
  }

  /** A MESSAGE out of a dialog, from an endpoint. */
  receive(request: SipRequest, tx: ServerTransaction): void {
    const context = this.#runtime.context;
    if (!context) return void tx.reply(503);
    const endpoint = this.#auth.admit(request, tx);
    if (!endpoint) return;
    const contentType = (request.contentType() ?? 'text/plain').toLowerCase();
    if (!contentType.startsWith('text/plain')) return void tx.reply(415, 'Unsupported Media Type', [['Accept', 'text/plain']]);
    const variables: Record<string, string> = Object.create(null) as Record<string, string>;
    let count = 0;
    for (const header of request.headers) {
      if (!/^x-/i.test(header.name) || count >= MAX_MESSAGE_VARIABLES) continue;
      variables[header.name] = header.value;
      count++;
    }
    const from = request.from();
    const to = request.to();
    const message: TextMessage = {
      from: from ? nameAddr(from.uri.kind === 'sip' ? formatUri(plainSipUri(from.uri.user ?? '', from.uri.host)) : '', [], from.displayName) : '',
      to: to && to.uri.kind === 'sip' ? `pjsip:${to.uri.user ?? endpoint.id}` : `pjsip:${endpoint.id}`,
      body: request.body.toString('utf8'),
      variables,
    };
    try {
      context.messages.receive(message, endpoint.id);
    } catch (error) {
      if (error instanceof NotFoundError) return void tx.reply(404);
      throw error;
    }
    // Then the endpoint's message_context, at the request-URI's user, as Asterisk routes messages.
    if (endpoint.messageContext) {
      const exten = request.uri.kind === 'sip' && request.uri.user ? request.uri.user : 's';
      try {
        context.messages.runDialplan(message, { context: endpoint.messageContext, exten });
      } catch (error) {
        if (error instanceof UnavailableError) return void tx.reply(503, undefined, [['Retry-After', '5']]);
        throw error;
      }
    }
    tx.reply(202, 'Accepted');
  }

  /**
   * A message to `pjsip:<endpoint>` goes to the endpoint's contact as a SIP MESSAGE. An endpoint
   * without a reachable contact (not registered, or known only to the endpoint list) gets it as
   * before SIP existed: TextMessageReceived for the applications subscribed to it.
   */
  send(message: TextMessage, destination: MessageDestination): void {
    const runtime = this.#runtime;
    const layer = runtime.layer;
    let resolved: { endpoint: PjsipEndpoint; uri: SipUri; through?: SharedContact } | undefined;
    let target: Destination | undefined;
    try {
      resolved = layer ? this.#dialer.resolve(destination.resource, true) : undefined;
      // A phone on another cluster member's connection is sent it over that connection (flow-relay.ts).
      target = resolved?.through ? this.#dialer.flowDestination(resolved.through, resolved.uri) : resolved ? this.#dialer.destinationOf(resolved.uri) : undefined;
    } catch {
      resolved = undefined;
    }
    const flow = isForeignFlow(target?.connection) ? target.connection : undefined;
    if (!layer || !resolved || !target) {
      runtime.context?.messages.receive(message, destination.resource);
      return;
    }
    const { uri } = resolved;
    const fromUser = message.from.replace(/^.*sip:/, '').replace(/@.*$/, '').replace(/[^A-Za-z0-9._+-]/g, '') || 'patchbay';
    const request = new SipRequest('MESSAGE', uri, [
      ['Max-Forwards', '70'],
      ['From', nameAddr(plainSipUri(fromUser, flow?.advertised.host ?? runtime.publicHost), [['tag', newTag()]])],
      ['To', nameAddr(plainSipUri(uri.user || undefined, uri.host))],
      ['Call-ID', newCallId()],
      ['CSeq', '1 MESSAGE'],
      ['User-Agent', runtime.config.global.userAgent || USER_AGENT],
    ]);
    let count = 0;
    for (const [name, value] of Object.entries(message.variables)) {
      if (count >= MAX_MESSAGE_VARIABLES || !/^[A-Za-z0-9-]{1,64}$/.test(name) || /[\r\n]/.test(value)) continue;
      request.add(name.toLowerCase().startsWith('x-') ? name : `X-${name}`, value);
      count++;
    }
    request.body = Buffer.from(message.body, 'utf8');
    request.set('Content-Type', 'text/plain');
    try {
      layer.sendRequest(request, target, {
        onResponse: (response) => {
          if (response.status >= 300) runtime.log?.info({ status: response.status, to: message.to }, 'SIP MESSAGE refused');
        },
        onTimeout: () => runtime.log?.info({ to: message.to }, 'SIP MESSAGE timed out'),
        onTransportError: (error) => runtime.log?.info({ to: message.to, err: error.message }, 'SIP MESSAGE not sent'),
        // The flow through another member lives as long as the MESSAGE's transaction.
        onTerminated: () => flow?.release(),
      });
    } catch (error) {
      flow?.release();
      throw error;
    }
  }
}
