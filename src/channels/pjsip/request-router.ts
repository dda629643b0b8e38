// Which role plays each request the SIP stack hands the technology (technology.ts owns the stack and
// the roles; this file only routes, so that the routing reads as one table):
// - In a dialog → the call (call.ts), matched by Call-ID and both tags, else 481 (RFC 3261 §12.2.2);
//   REFER on it → transfers.ts; a subscription's refresh → subscriptions/server.ts; NOTIFYs of
//   REFERs we sent → refer-sender.ts. The dialog's endpoint's own ACL is checked on each (inbound-auth.ts).
// - REGISTER → register.ts; INVITE → invite-server.ts; MESSAGE → messaging.ts; all three first
//   identified (identify.ts) and authenticated (inbound-auth.ts). SUBSCRIBE → subscriptions/server.ts.
// - An unsolicited MWI NOTIFY (application/simple-message-summary) → incoming-mwi.ts.
// - OPTIONS: 200 (an endpoint with an auth is challenged first unless allow_unauthenticated_options).
//   BYE: 481. Another method RFCs define: 405; one they do not: 501.
// A request whose handling throws is answered 500 and logged, never left unanswered.
import type { SipRequest } from '../../sip/message.ts';
import { refuseUnserved } from '../../sip/request-checks.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import { unforceRport } from '../../sip/transport.ts';
import { ALLOW } from './call-types.ts';
import type { InboundAuthenticator } from './inbound-auth.ts';
import { isMwiNotify, type IncomingMwi } from './incoming-mwi.ts';
import type { InviteServer } from './invite-server.ts';
import type { SipMessaging } from './messaging.ts';
import type { ReferSender } from './refer-sender.ts';
import type { RegisterServer } from './register.ts';
import { USER_AGENT, type PjsipRuntime } from './runtime.ts';
import { SUPPORTED_ALL } from './session-extensions.ts';
import type { SubscriptionServer } from './subscriptions/server.ts';

/** The roles requests go to (technology.ts makes them). */
export interface RequestRoles {
  readonly auth: InboundAuthenticator;
  readonly registerServer: RegisterServer;
  readonly inviteServer: InviteServer;
  readonly messaging: SipMessaging;
  readonly referSender: ReferSender;
  readonly subscriptions: SubscriptionServer;
  readonly incomingMwi: IncomingMwi;
}

export class RequestRouter {
  constructor(
    private readonly runtime: PjsipRuntime,
    private readonly roles: RequestRoles,
  ) {}

  /** A request from the transaction layer, answered by the role it is for. */
  handle(request: SipRequest, tx: ServerTransaction): void {
    try {
      this.#route(request, tx);
    } catch (error) {
      this.runtime.log?.error({ err: error, method: request.method }, 'SIP request handling failed');
      tx.reply(500);
    }
  }

  #route(request: SipRequest, tx: ServerTransaction): void {
    const { auth, subscriptions } = this.roles;
    const inDialog = request.toTag() !== undefined;
    if (inDialog) {
      // By dialog: a request sharing only the Call-ID (a forged or stale BYE, the other leg of a
      // call to ourselves) is no request of that call.
      const call = this.runtime.calls.inDialog(request);
      if (!call) {
        // A refresh or an unsubscribe of a subscription.
        if (subscriptions.inDialog(request, tx)) return;
        // The NOTIFYs of a REFER we sent (its implicit subscription).
        if (this.roles.referSender.answerNotify(request, tx)) return;
        tx.reply(481, 'Call/Transaction Does Not Exist');
        return;
      }
      // The call's endpoint's own ACL, as Asterisk's distributor checks it on every request: a
      // refusal is logged and the request answered, as from Asterisk's artificial endpoint (inbound-auth.ts).
      const refused = auth.refusedInDialog(call.endpointId, request, tx.source);
      if (!refused && call.options.forceRport === false) unforceRport(request);
      call.inDialog(request, tx, refused);
      return;
    }
    switch (request.method) {
      case 'OPTIONS':
        if (!auth.admitOptions(request, tx)) return;
        tx.reply(200, undefined, [
          ['Allow', ALLOW],
          ['Accept', 'application/sdp, text/plain'],
          ['Supported', SUPPORTED_ALL],
          ['Allow-Events', subscriptions.served.join(', ')],
          ['Server', this.runtime.config.global.userAgent || USER_AGENT],
        ]);
        return;
      case 'SUBSCRIBE':
        subscriptions.subscribe(request, tx);
        return;
      case 'REGISTER':
        this.roles.registerServer.register(request, tx);
        return;
      case 'INVITE':
        void this.roles.inviteServer.invite(request, tx);
        return;
      case 'MESSAGE':
        this.roles.messaging.receive(request, tx);
        return;
      case 'BYE':
        tx.reply(481, 'Call/Transaction Does Not Exist');
        return;
      default: {
        if (isMwiNotify(request)) {
          this.roles.incomingMwi.receive(request, tx);
          return;
        }
        // Methods not served: 405, unknown ones 501.
        const refusal = refuseUnserved(request, ALLOW, subscriptions.served);
        tx.reply(refusal.status, refusal.reason, refusal.headers);
      }
    }
  }
}
