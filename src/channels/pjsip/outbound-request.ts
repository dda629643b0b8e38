// The first INVITE of a call we place, as chan_pjsip writes it: whom it says is calling (the
// connected line Dial() or an originate gave the callee channel, else a caller id set on the
// channel other than its endpoint's own, with its presentation, and the redirecting party), the headers the dialplan added (PJSIP_HEADER) and the
// REFER ones, and the session's (100rel, session timers) with History-Info in Supported, as
// res_pjsip_diversion adds it to every INVITE. call.ts sends it; outbound-invite.ts writes it.
import type { Logger } from 'pino';
import type { Channel } from '../../core/channels/channel.ts';
import { TAG_HISTINFO } from '../../sip/extensions.ts';
import { newTag, type SipRequest } from '../../sip/message.ts';
import { ALLOW, type OutboundSide } from './call-types.ts';
import { outboundIdentity } from './caller-identity.ts';
import { dialplanHeaders, referHeaders, type SessionHeaders } from './headers.ts';
import { inviteRequest } from './outbound-invite.ts';
import { withSupportedTag } from './session-extensions.ts';
import { nameAddrWithUserPhone } from './user-eq-phone.ts';

/** What the call gives its first INVITE besides the channel and the side. */
export interface FirstInviteParts {
  readonly callId: string;
  readonly contact: string;
  /** Our host as the From names it (the other cluster member's, over a relayed flow). */
  readonly host: string;
  readonly userAgent: string;
  readonly offer: string;
  /** The session's headers (call-session.ts's inviteHeaders). */
  readonly sessionHeaders: ReadonlyArray<readonly [string, string]>;
  /** PJSIP_HEADER's list for this call. */
  readonly added: SessionHeaders;
  readonly log: Logger;
}

/** No caller to send: From names default_from_user. */
const NO_ID = { name: '', number: '' } as const;

export function firstInvite(channel: Channel, side: OutboundSide, parts: FirstInviteParts): SipRequest {
  const { target, identity, route } = side;
  // Dial() connects the callee channel to its caller, an ARI originate's callerId sets it too. With
  // no connected line the channel's own caller id is sent (CALLERID() set in an originate's
  // variables), but not while it is still its endpoint's `callerid`, which names who is called
  // (res_pjsip_session's outgoing session id): From then names default_from_user.
  const { connected, caller } = channel;
  const useConnected = connected.number !== '' || connected.name !== '';
  const self = identity.self;
  const callerIsOwn = self !== undefined && caller.number === self.number && caller.name === self.name;
  const id = useConnected ? connected : callerIsOwn ? NO_ID : caller;
  const presentation = useConnected ? channel.connectedPresentation : channel.callerPresentation;
  const redirect = { redirecting: channel.redirecting, target };
  const identified = outboundIdentity(identity, id, parts.host, newTag(), redirect, presentation);
  const from = side.userEqPhone ? nameAddrWithUserPhone(identified.from) : identified.from;
  const added = dialplanHeaders(channel, parts.added, parts.log).map(({ name, value }) => [name, value] as const);
  return inviteRequest({
    target, route, from, callId: parts.callId, contact: parts.contact, allow: ALLOW, userAgent: parts.userAgent, offer: parts.offer,
    headers: [...identified.headers, ...added, ...referHeaders(channel, added), ...withSupportedTag(parts.sessionHeaders, TAG_HISTINFO)],
  });
}
