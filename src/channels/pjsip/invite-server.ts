// Inbound calls: an INVITE out of a dialog, identified and authenticated, becomes a
// `PJSIP/<endpoint>-<n>` channel in state Ring that runs the endpoint's context at the dialled user
// part; the application decides what is answered (see call.ts). A body that is not SDP is refused
// (415 naming application/sdp; a multipart/mixed or /alternative one's SDP part is the offer, as
// in Asterisk); with rewrite_contact the Contact, and so the dialog's remote
// target, becomes the address the INVITE came from.
// An INVITE to a number the endpoint's context cannot take is refused 404 (484 when more digits
// could match and allow_overlap is on) before anything else is sent, as chan_pjsip does.
// The INVITE is answered 100 Trying as soon as it is taken (identified, authenticated, its
// extensions and Call-ID accepted), before the RTP port and the application's decision.
// An INVITE with Replaces (RFC 3891) naming a call of ours in a two-party call is answered at once
// and takes that call's place: its peer talks to the new caller, the replaced channel is hung up.
// 481 when no dialog matches, 486 for `early-only` on a confirmed one, 503 when the replaced
// channel is in no two-party call (Asterisk would move the new channel into its place; Patchbay
// does not).
// An INVITE to the pickup extension (features.conf pickupexten, *8) runs no dialplan: it picks up a
// ringing call of the endpoint's pickup groups (core/call-pickup.ts), or is refused 403.
import type { Channel } from '../../core/channels/channel.ts';
import { UnavailableError } from '../../core/errors.ts';
import type { SipRequest } from '../../sip/message.ts';
import { rewriteContactToSource } from '../../sip/nat.ts';
import { sessionDescriptionOf } from '../../sip/multipart.ts';
import { refuseNonSdpBody } from '../../sip/request-checks.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import { CAUSE } from '../../core/channels/causes.ts';
import { SipCall } from './call.ts';
import { endpointChannelInit, setEndpointVariables } from './endpoint-channel.ts';
import { outboundCredentials } from './outbound-credentials.ts';
import { inboundCaller, outboundIdentityOptions } from './caller-identity.ts';
import { redirectingOfRequest } from './diversion.ts';
import { parseReplaces } from './refer.ts';
import type { InboundAuthenticator } from './inbound-auth.ts';
import { MAX_CALLS, type PjsipRuntime } from './runtime.ts';
import { refuseInvite } from './session-extensions.ts';
import { endpointSessionOptions } from './config/session-values.ts';
import type { CallTransfers } from './transfers.ts';
import { LogThrottle } from '../../util/log-throttle.ts';

export class InviteServer {
  readonly #runtime: PjsipRuntime;
  readonly #auth: InboundAuthenticator;
  readonly #transfers: CallTransfers;
  /** Live calls one endpoint may have (sip.max_calls_per_endpoint); 0 = no limit. */
  maxCallsPerEndpoint = 0;
  readonly #busyLog = new LogThrottle(10_000);
  readonly #refusedLog = new LogThrottle(10_000);

  constructor(runtime: PjsipRuntime, auth: InboundAuthenticator, transfers: CallTransfers) {
    this.#runtime = runtime;
    this.#auth = auth;
    this.#transfers = transfers;
  }

  async invite(request: SipRequest, tx: ServerTransaction): Promise<void> {
    const runtime = this.#runtime;
    const calls = runtime.calls;
    const context = runtime.context;
    if (!context) return void tx.reply(503);
    const endpoint = this.#auth.admit(request, tx);
    if (!endpoint) return;
    const refusal = refuseNonSdpBody(request);
    if (refusal) return void tx.reply(refusal.status, refusal.reason, refusal.headers);
    if (endpoint.rewriteContact) rewriteContactToSource(request, tx.source);
    // Extensions it requires that the endpoint lacks, or lacks that the endpoint requires: 420, 421, 422.
    // identity: how our headers name the party the phone talks to (connected-line.ts).
    const options = { ...endpoint, ...endpointSessionOptions(endpoint), identity: outboundIdentityOptions(endpoint, runtime.config.global.defaultFromUser) };
    const extensionRefusal = refuseInvite(request, options);
    if (extensionRefusal) return void tx.reply(extensionRefusal.status, undefined, extensionRefusal.headers);
    const callId = request.callId() ?? '';
    // The same INVITE by a second path (§8.2.2.2). Another call with this Call-ID is no loop: the
    // other leg of a call to ourselves, or a call of ours a proxy forked back (call-registry.ts).
    if (calls.isLoop(request)) return void tx.reply(482, 'Loop Detected');
    if (calls.size >= MAX_CALLS) return void tx.reply(503, undefined, [['Retry-After', '5']]);
    // One endpoint (the anonymous one, for everyone unauthenticated) cannot take every RTP port.
    if (this.maxCallsPerEndpoint > 0 && this.#callsOf(endpoint.id) >= this.maxCallsPerEndpoint) {
      this.#busyLog.run((suppressed) =>
        runtime.log?.warn({ endpoint: endpoint.id, limit: this.maxCallsPerEndpoint, ...(suppressed > 0 ? { suppressed } : {}) }, 'SIP INVITE refused: the endpoint has as many calls as it may'),
      );
      return void tx.reply(486, 'Busy Here');
    }
    // The destination is checked before 100 Trying, as chan_pjsip does: a number the endpoint's
    // context cannot take is refused at once (404, or 484 while more digits could still match with
    // allow_overlap), without a channel. An INVITE with Replaces names a call, not an extension.
    const target = request.uri;
    const exten = target.kind === 'sip' && target.user ? target.user : 's';
    // The pickup extension (features.conf pickupexten) is taken whatever the dialplan holds, as
    // res_pjsip_session does: the call picks up a ringing call of the endpoint's pickup groups.
    const picking = request.get('replaces') === undefined && context.pickup.extension !== '' && exten === context.pickup.extension;
    if (request.get('replaces') === undefined && !picking && !context.extensionExists(endpoint.context, exten)) {
      const incomplete = endpoint.allowOverlap && context.extensionCanMatch(endpoint.context, exten);
      this.#refusedLog.run((suppressed) =>
        runtime.log?.info(
          { endpoint: endpoint.id, exten, context: endpoint.context, source: `${tx.source.address}:${tx.source.port}`, ...(suppressed > 0 ? { suppressed } : {}) },
          incomplete ? 'SIP INVITE refused: the number is incomplete (484)' : 'SIP INVITE refused: extension not found in the context (404)',
        ),
      );
      return void tx.reply(incomplete ? 484 : 404);
    }
    // Taken for processing: 100 Trying at once, as PJSIP's INVITE session does once the request is
    // authenticated and verified (a 401 or 420 above goes out alone), rather than after the
    // transaction layer's 200 ms (RFC 3261 §17.2.1 allows either); the far end stops retransmitting.
    tx.reply(100);
    let replaced: Channel | undefined;
    const replacesHeader = request.get('replaces');
    if (replacesHeader !== undefined) {
      const replaces = parseReplaces(replacesHeader.trim());
      if (!replaces) return void tx.reply(400, 'Bad Replaces');
      const other = calls.replaced(replaces);
      if (!other || !other.channel || other.channel.hangingUp) return void tx.reply(481, 'Call/Transaction Does Not Exist');
      if (replaces.earlyOnly && other.channel.answered) return void tx.reply(486, 'Busy Here');
      if (!context.transfers.canReplace(other.channel)) return void tx.reply(503, 'Service Unavailable');
      replaced = other.channel;
    }
    const call = new SipCall(runtime.services, { kind: 'inbound', invite: request, tx, offer: sessionDescriptionOf(request), credentials: outboundCredentials(runtime.config, endpoint.outboundAuth) }, endpoint.codecs, endpoint.id, options);
    this.#transfers.wire(call);
    if (!calls.add(call)) return void tx.reply(482, 'Loop Detected');
    let prepared;
    try {
      prepared = await call.prepareInbound();
    } catch (error) {
      runtime.log?.warn({ err: error }, 'no RTP port for an incoming call');
      calls.delete(call);
      call.stream?.close();
      return void tx.reply(503, undefined, [['Retry-After', '5']]);
    }
    if (!prepared.ok) {
      calls.delete(call);
      call.stream?.close();
      return void tx.reply(prepared.status, prepared.reason);
    }
    const caller = inboundCaller(request, endpoint);
    let channel: Channel;
    try {
      channel = context.channels.create(
        {
          name: `PJSIP/${endpoint.id}-${context.channels.newNameSuffix('PJSIP')}`,
          technology: 'PJSIP',
          endpointResource: endpoint.id,
          direction: 'inbound',
          state: 'Ring',
          caller: caller.id,
          callerPresentation: caller.presentation,
          location: { context: endpoint.context, exten, priority: 1 },
          protocolId: callId,
          ...endpointChannelInit(endpoint),
        },
        (created) => call.attach(created),
      );
    } catch (error) {
      calls.delete(call);
      call.stream?.close();
      const status = error instanceof UnavailableError ? 503 : 500;
      return void tx.reply(status);
    }
    // set_var first: chan_pjsip sets them as it makes the channel.
    setEndpointVariables(channel, endpoint);
    // chan_pjsip sets SIPDOMAIN, the Request-URI's host, before the dialplan starts (clients see its
    // ChannelVarset between ChannelCreated and ChannelDialplan); the Call-ID is the snapshot's
    // protocol_id and ${CHANNEL(pjsip,call-id)}, no variable.
    if (target.kind === 'sip') channel.setSystemVariable('SIPDOMAIN', target.host);
    // res_pjsip_diversion: a provider's Diversion / History-Info is the channel's redirecting party.
    const redirecting = redirectingOfRequest(request, channel.redirecting);
    if (redirecting) channel.redirecting = redirecting;
    // chan_pjsip gives the channel its endpoint's tone_zone (ast_channel_zone).
    channel.toneZone = endpoint.toneZone;
    // and its call and pickup groups (call pickup).
    if (endpoint.groups) channel.groups = endpoint.groups;
    if (picking) return void this.#pickUp(channel);
    if (!replaced) return void context.enterDialplan(channel);
    channel.answer();
    if (!context.transfers.replace(replaced, channel)) channel.hangup(CAUSE.normal);
    else runtime.log?.info({ channel: channel.name, replaced: replaced.name }, 'INVITE with Replaces: the new call takes the old one\'s place');
  }

  /**
   * chan_pjsip's call pickup supplement: no dialplan runs; the channel picks up a ringing call or,
   * when there is none (after features.conf's pickupfailsound), is hung up as rejected (21: 403
   * before an answer). A channel that picked up stays in the call it took over.
   */
  #pickUp(channel: Channel): void {
    const context = this.#runtime.context;
    if (!context) return void channel.hangup(CAUSE.rejected);
    void context.pickup.call(channel).then(
      (picked) => {
        if (!picked && !channel.hangingUp) channel.hangup(CAUSE.rejected);
      },
      (error: unknown) => {
        this.#runtime.log?.warn({ err: error, channel: channel.name }, 'call pickup failed');
        if (!channel.hangingUp) channel.hangup(CAUSE.rejected);
      },
    );
  }

  #callsOf(endpointId: string): number {
    let count = 0;
    for (const call of this.#runtime.calls.values()) if (call.endpointId === endpointId) count += 1;
    return count;
  }
}
